#!/bin/sh
# A chain test (chainer.c, crash_common.sh):
# the SIGSEGV handler calls exit(3), or _exit(5): the process exits with that
# status and the dump, written before it exits, holds the first fault.
CRASHER=chainer
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run exit SEGV 'handle_request > crash_with > crash_write_wild' 1 3
grep -q "^fault si_code 1 addr 0x1bad0\$" "$work/check.txt" || fail "the dump does not hold the first fault (SEGV_MAPERR at 0x1bad0)"
rm -f "$work"/core* # core_pattern without %p: the next run's dump goes to the same name
crash_run _exit SEGV 'handle_request > crash_with > crash_write_wild' 1 5
grep -q "^fault si_code 1 addr 0x1bad0\$" "$work/check.txt" || fail "the dump does not hold the first fault (SEGV_MAPERR at 0x1bad0)"
