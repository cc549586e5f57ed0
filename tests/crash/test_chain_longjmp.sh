#!/bin/sh
# A chain test (chainer.c, crash_common.sh): a recovering server whose SIGSEGV handler (SIGSEGV
# blocked while it runs) leaves with siglongjmp, 1000 times, survives every one of them, as it
# does without libptrec: no dump for those, and recording goes on after each jump.  Then a
# real crash under SIG_DFL: exactly one dump, of that crash, whose history ends in the call to
# the crashing function (the jumped-over calls have no returns, so only the end is checked).
CRASHER=chainer
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run longjmp SEGV 'crash_after_guards'
grep -q '^chainer: recovered 1000 times$' "$work/stderr" || fail "the server did not survive its handled faults"
first_fault 0x2bad0 'the real crash'
grep -q '^chainer: rseq \(on -> on\|off -> off\)$' "$work/stderr" || fail "the thread's rseq registration did not come back after the handled faults"
