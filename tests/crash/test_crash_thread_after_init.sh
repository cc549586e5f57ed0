#!/bin/sh
# A crash test (see tests/crash/crash_common.sh): crasher thread_after_init.
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run thread_after_init SEGV 'late_thread_main > crash_late_thread_fn'
