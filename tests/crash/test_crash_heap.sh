#!/bin/sh
# A crash test (see tests/crash/crash_common.sh): crasher heap.
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run heap SEGV 'handle_request > crash_heap'
