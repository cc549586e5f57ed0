#!/bin/sh
# A crash test (see tests/crash/crash_common.sh): crasher ill.
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run ill ILL 'handle_request > crash_ill'
