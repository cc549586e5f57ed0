#!/bin/sh
# A chain test (chainer.c, crash_common.sh):
# Redis's crash handler (SA_SIGINFO|SA_NODEFER|SA_RESETHAND, installed after
# ptrec_init) logs, resets its handlers to SIG_DFL and kill()s itself.  One dump, of the first
# fault, taken before the handler ran (the ring ends in the crashing function); the crash log
# comes out complete and the process dies of SIGSEGV.
CRASHER=chainer
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run redis SEGV 'handle_request > crash_redis > crash_write_wild'
first_fault 0x1bad0
grep -q '^chainer: crash log complete$' "$work/stderr" || fail "the application's crash log was cut short"
