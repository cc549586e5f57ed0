#!/bin/sh
# A crash test (see tests/crash/crash_common.sh): crasher overflow.
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run overflow SEGV 'crash_overflow > crash_overflow'
