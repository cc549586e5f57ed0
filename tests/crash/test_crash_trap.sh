#!/bin/sh
# A crash test (see tests/crash/crash_common.sh): crasher trap (int3 raises SIGTRAP).
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run trap TRAP 'handle_request > crash_trap'
