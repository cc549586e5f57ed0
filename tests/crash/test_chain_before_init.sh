#!/bin/sh
# A chain test (chainer.c, crash_common.sh):
# the Redis-style handlers are installed before ptrec_init: libptrec
# chains to them exactly as to handlers installed later.
CRASHER=chainer
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run before_init SEGV 'handle_request > crash_write_wild'
first_fault 0x1bad0
grep -q '^chainer: crash log complete$' "$work/stderr" || fail "the application's handler did not run"
