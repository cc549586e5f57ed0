#!/bin/sh
# A chain test (chainer.c, crash_common.sh):
# signal(SIGFPE, h) instead of sigaction; h resets with signal(sig, SIG_DFL)
# and raise()s: the process dies of SIGFPE, one dump of the division.
. "$top_srcdir/tests/common/qemu_user.sh"
skip_on_aarch64 "its SIGFPE comes from an integer division by zero, which does not trap on aarch64"
CRASHER=chainer
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run signal FPE 'handle_request > crash_signal_fn > crash_divide'
grep -q '^fault si_code 1 ' "$work/check.txt" || fail "the dump does not hold the FPE_INTDIV fault"
grep -q '^chainer: arithmetic error, re-raising$' "$work/stderr" || fail "the handler did not run"
