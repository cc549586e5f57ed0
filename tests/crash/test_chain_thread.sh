#!/bin/sh
# A chain test (chainer.c, crash_common.sh):
# another thread installs the Redis-style handlers, then the main thread
# crashes: the chain is process-wide.
CRASHER=chainer
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run thread SEGV 'handle_request > crash_from_thread > crash_write_wild'
grep -q "^fault si_code 1 addr 0x1bad0\$" "$work/check.txt" || fail "the dump does not hold the first fault (SEGV_MAPERR at 0x1bad0)"
grep -q '^chainer: crash log complete$' "$work/stderr" || fail "the application's handler did not run"
