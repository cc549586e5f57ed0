#!/bin/sh
# A chain test (chainer.c, crash_common.sh): Redis's crash handler rewrites its own thread's
# rseq area (glibc's, in the TCB) while its memory test runs, and a signal is delivered
# meanwhile.  The kernel kills a thread whose rseq_cs word is bad at a signal delivery, without
# running any handler: libptrec takes the area from the kernel while the application's handler
# runs, so the handler finishes, and the dump still holds the first fault.
CRASHER=chainer
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run rseq SEGV 'handle_request > crash_redis > crash_write_wild'
first_fault 0x1bad0
grep -q '^chainer: rseq word restored$' "$work/stderr" || fail "the handler did not live through the signal"
grep -q '^chainer: crash log complete$' "$work/stderr" || fail "the application's crash log was cut short"
