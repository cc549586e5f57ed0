#!/bin/sh
# A crash test (see tests/crash/crash_common.sh): crasher sys (a seccomp filter traps getpriority,
# the kernel raises SIGSYS).
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run sys SYS 'handle_request > crash_sys'
