#!/bin/sh
# A crash test (see tests/crash/crash_common.sh): crasher two_threads.
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run two_threads SEGV 'two_threads_worker > crash_in_thread'
