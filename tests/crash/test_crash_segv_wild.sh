#!/bin/sh
# A crash test (see tests/crash/crash_common.sh): crasher segv_wild.
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run segv_wild SEGV 'handle_request > crash_segv_wild'
