#!/bin/sh
# A chain test (chainer.c, crash_common.sh): main blocks SIGSEGV with pthread_sigmask and has a
# SIGSEGV handler; a SIGALRM handler (every signal in its mask) faults.  The kernel kills at a
# fault it finds blocked, without running any handler: so must libptrec, though the SIGALRM
# handler's mask differs from the one main set (a mask changed past libptrec, a Go runtime's
# raw rt_sigprocmask, unblocks; one with more blocked must not): exactly one dump, naming the
# SIGALRM handler's function, and the SIGSEGV handler never runs (it would exit 94).
CRASHER=chainer
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run blocked_in_sigalrm SEGV 'alarm_handler > crash_in_alarm'
! grep -q 'the SIGSEGV handler ran' "$work/stderr" || fail "the application's SIGSEGV handler ran for a blocked fault"
