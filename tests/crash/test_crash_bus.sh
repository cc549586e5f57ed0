#!/bin/sh
# A crash test (see tests/crash/crash_common.sh): crasher bus.
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run bus BUS 'handle_request > crash_bus'
