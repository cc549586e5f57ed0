#!/bin/sh
# A chain test (chainer.c, crash_common.sh): a crash signal the application's handler blocks
# (its own, while it runs) is held back by libptrec and sent again once the handler returns.
# It must come back as it was sent: a SIGTRAP queued with sigqueue reaches the handler again
# with SI_QUEUE, the sender's pid and uid and the queued value (it came back as SI_TKILL from
# libptrec, value lost).  The real crash that follows gets its one dump.
CRASHER=chainer
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run queued_again SEGV 'crash_queued_again > crash_after_guards'
grep -q '^chainer: the held-back SIGTRAP came back as it was sent$' "$work/stderr" ||
	fail "the held-back SIGTRAP did not come back with its siginfo"
