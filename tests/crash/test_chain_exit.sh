#!/bin/sh
# A chain test (chainer.c, crash_common.sh):
# the SIGSEGV handler calls exit(3), or _exit(5): the process exits with that
# status and the dump, written before it exits, holds the first fault.
CRASHER=chainer
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run exit SEGV 'handle_request > crash_with > crash_write_wild' 1 3
first_fault 0x1bad0
rm -f "$work"/core* # core_pattern without %p: the next run's dump goes to the same name
crash_run _exit SEGV 'handle_request > crash_with > crash_write_wild' 1 5
first_fault 0x1bad0
