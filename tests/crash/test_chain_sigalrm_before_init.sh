#!/bin/sh
# A chain test (chainer.c, crash_common.sh): a server installs its SIGALRM handler, whose
# sa_mask holds every signal, before ptrec_init (a library constructor, or init called late).
# ptrec_init takes the fault signals out of that handler's mask in the kernel (the kernel kills
# at a fault it finds blocked, past libptrec) while the mask still reads back whole: exactly one
# dump when the handler faults, naming the handler's function.
CRASHER=chainer
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run sigalrm_before_init SEGV 'alarm_handler > crash_in_alarm'
