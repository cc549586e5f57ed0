#!/bin/sh
# A chain test (chainer.c, crash_common.sh):
# a guard-page handler that cancels and joins a worker thread before it maps the page and
# resumes, 1100 times with a fresh worker each time.  Each joined thread exits while the fault
# holds every ring; its slot must come back for later threads (more workers than libptrec has
# slots): afterwards one thread is attached and none runs untraced.  Then a real crash: exactly
# one dump, of that crash.
CRASHER=chainer
. "$top_srcdir/tests/crash/crash_common.sh"
# (the 1100 rounds of calls fill the ring: its oldest frames are gone)
crash_run guard_join SEGV 'crash_after_guards'
first_fault 0x2bad0 'the real crash'
grep -q '^chainer: 1100 guard faults joined a thread: 1 attached, 0 untraced$' "$work/stderr" ||
	fail "joined threads' slots were not reused"
