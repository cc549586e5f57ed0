#!/bin/sh
# A chain test (chainer.c, crash_common.sh):
# a SA_RESETHAND handler that logs and returns: the instruction faults again
# with SIG_DFL and the process dies of SIGSEGV; one dump, of the first fault.
CRASHER=chainer
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run resethand SEGV 'handle_request > crash_resethand > crash_write_wild'
first_fault 0x1bad0
[ "$(grep -c '^chainer: handler ran and returns$' "$work/stderr")" -eq 1 ] || fail "the handler did not run exactly once"
