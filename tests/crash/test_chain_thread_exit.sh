#!/bin/sh
# A chain test (chainer.c, crash_common.sh):
# 1100 worker threads each fault, and the server's handler ends the faulting thread with
# pthread_exit (the fault is handled by ending its thread).  Each such fault ends there:
# recording goes on, and every worker's slot comes back (more workers than libptrec has
# slots): afterwards one thread is attached and none runs untraced.  Then a real crash in
# main: exactly one dump, of that crash, replayed from calls made after the workers.
CRASHER=chainer
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run thread_exit SEGV 'crash_thread_exit > crash_after_guards'
first_fault 0x2bad0 'the real crash'
grep -q '^chainer: 1100 faulting threads ended: 1 attached, 0 untraced$' "$work/stderr" ||
	fail "the ended threads' faults did not end (slots not reused)"
