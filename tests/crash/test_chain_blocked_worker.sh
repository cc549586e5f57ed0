#!/bin/sh
# A chain test (chainer.c, crash_common.sh): a worker thread started with every signal blocked
# (thread pools do this) crashes.  The kernel kills at a fault it finds blocked without running
# any handler, so libptrec keeps the fault signals out of the kernel's mask while the thread
# still reads its mask back with SIGSEGV blocked: exactly one dump, naming the worker's function.
CRASHER=chainer
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run blocked_worker SEGV 'blocked_worker > crash_in_blocked_worker'
