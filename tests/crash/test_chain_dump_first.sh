#!/bin/sh
# A chain test (chainer.c, crash_common.sh):
# PTREC_CHAIN=first: the dump is written at the first crash signal, before
# the application's handler runs; the guard-page program then goes on and dies at its real
# crash without a second dump.
CRASHER=chainer
. "$top_srcdir/tests/crash/crash_common.sh"
export PTREC_CHAIN=first
crash_run guard_page SEGV 'handle_request > crash_guard_page > touch_guard'
grep -q '^fault si_code 2 ' "$work/check.txt" || fail "the dump does not hold the first guard fault (SEGV_ACCERR)"
grep -q '^chainer: 1000 guard faults handled$' "$work/stderr" || fail "the guard faults were not all handled"
