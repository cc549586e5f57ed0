#!/bin/sh
# A chain test (chainer.c, crash_common.sh): a SIGALRM handler whose sa_mask holds every signal
# faults.  The kernel kills at a fault it finds blocked without running any handler, so libptrec
# keeps the fault signals out of other handlers' masks (they still read back whole): exactly
# one dump, naming the handler's function.
CRASHER=chainer
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run in_sigalrm SEGV 'alarm_handler > crash_in_alarm'
