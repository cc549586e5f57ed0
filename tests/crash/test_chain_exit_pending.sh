#!/bin/sh
# A chain test (chainer.c, crash_common.sh): a worker ends with pthread_exit inside its SIGSEGV
# handler while SIGSEGVs sent to it and to the process wait (the handler blocks SIGSEGV).  As the
# kernel does with a dying thread's pending signals, the thread's own is dropped and the
# process's goes to another thread (main, once it unblocks SIGSEGV); the real crash that
# follows gets its one dump.
CRASHER=chainer
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run exit_pending SEGV 'crash_exit_pending > crash_after_guards'
grep -q '^chainer: the SIGSEGV sent to the process reached main$' "$work/stderr" ||
	fail "the SIGSEGV sent to the process did not reach main"
