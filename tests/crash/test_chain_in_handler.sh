#!/bin/sh
# A chain test (chainer.c, crash_common.sh):
# the SIGSEGV handler (SA_SIGINFO, so SIGSEGV is blocked inside it) faults
# itself: the kernel would kill the process there; the dump holds the first fault, not the
# handler's.
CRASHER=chainer
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run in_handler SEGV 'handle_request > crash_with > crash_write_wild'
first_fault 0x1bad0
grep -q '^chainer: handler entered$' "$work/stderr" || fail "the handler did not run"
! grep -q 'survived' "$work/stderr" || fail "the handler went on past its own fault"
