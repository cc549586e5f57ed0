#!/bin/sh
# A crash test (see tests/crash/crash_common.sh): crasher ptrec_assert.
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run ptrec_assert ABRT 'handle_request > crash_ptrec_assert' 2
