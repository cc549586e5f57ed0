#!/bin/sh
# A chain test (chainer.c, crash_common.sh): main blocks every signal before ptrec_init (a server
# that takes its signals with sigwait), then faults.  The kernel kills at a fault it finds
# blocked, past libptrec, so ptrec_init blocks the calling thread's fault signals virtually
# instead (the mask still reads back with them): exactly one dump, naming the function.
CRASHER=chainer
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run blocked_before_init SEGV 'crash_blocked_main > crash_in_blocked_main'
