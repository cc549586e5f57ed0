#!/bin/sh
# A chain test (chainer.c, crash_common.sh):
# 8 threads take 2000 guard faults each at the same time, each handled by the application's
# handler (a runtime's threads: Go recovers nil dereferences on all of them at once): no dump
# for those, and libptrec must not fault itself while the threads start and end their handling
# together (two threads stopping the hooks at once wrote the hook gate after the other had made
# it read-only: SIGSEGV in ptrec_hooks_stop).  Then main's real crash: exactly one dump, of it.
CRASHER=chainer
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run guard_threads SEGV 'handle_request > crash_guard_threads > crash_after_guards'
first_fault 0x2bad0 'the real crash'
grep -q '^chainer: 16000 guard faults handled in 8 threads$' "$work/stderr" ||
	fail "the guard faults were not all handled"
