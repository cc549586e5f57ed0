#!/bin/sh
# A crash test (see tests/crash/crash_common.sh): crasher fpe.
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run fpe FPE 'handle_request > crash_fpe'
