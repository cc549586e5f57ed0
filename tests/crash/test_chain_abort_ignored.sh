#!/bin/sh
# A chain test (chainer.c, crash_common.sh): SIGABRT is ignored, then abort() runs; it resets
# SIGABRT to SIG_DFL itself (past libptrec) and kills the process: exactly one dump first.
CRASHER=chainer
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run abort_ignored ABRT 'handle_request > crash_abort_ignored'
