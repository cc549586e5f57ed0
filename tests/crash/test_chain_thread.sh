#!/bin/sh
# A chain test (chainer.c, crash_common.sh):
# another thread installs the Redis-style handlers, then the main thread
# crashes: the chain is process-wide.
CRASHER=chainer
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run thread SEGV 'handle_request > crash_from_thread > crash_write_wild'
first_fault 0x1bad0
grep -q '^chainer: crash log complete$' "$work/stderr" || fail "the application's handler did not run"
