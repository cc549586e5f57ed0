#!/bin/sh
# A crash test (see tests/crash/crash_common.sh): crasher fpe.
. "$top_srcdir/tests/common/qemu_user.sh"
skip_on_aarch64 "an integer division by zero does not trap on aarch64 (no SIGFPE to catch)"
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run fpe FPE 'handle_request > crash_fpe'
