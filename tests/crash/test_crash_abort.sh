#!/bin/sh
# A crash test (see tests/crash/crash_common.sh): crasher abort.
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run abort ABRT 'handle_request > crash_abort'
