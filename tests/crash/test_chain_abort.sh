#!/bin/sh
# A chain test (chainer.c, crash_common.sh):
# the SIGSEGV handler calls abort(): the process dies of SIGABRT (134), the dump
# names the first fault, SIGSEGV.
CRASHER=chainer
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run abort SEGV 'handle_request > crash_with > crash_write_wild' 1 134
first_fault 0x1bad0
grep -q '^chainer: fatal error, aborting$' "$work/stderr" || fail "the handler did not run"
