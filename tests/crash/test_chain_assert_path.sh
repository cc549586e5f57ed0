#!/bin/sh
# A chain test (chainer.c, crash_common.sh):
# an assertion path (like serverAssert): it resets the crash handlers to
# SIG_DFL and calls abort(): one dump of the SIGABRT, the ring ending in the assertion.
CRASHER=chainer
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run assert_path ABRT 'handle_request > crash_assert_path > server_assert_fail'
grep -q '^chainer: ASSERTION FAILED: sink == 4242$' "$work/stderr" || fail "the assertion did not report"
