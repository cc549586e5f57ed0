#!/bin/sh
# A crash test (see tests/crash/crash_common.sh): crasher segv_null.
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run segv_null SEGV 'handle_request > crash_segv_null'
