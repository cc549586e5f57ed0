#!/bin/sh
# A chain test (chainer.c, crash_common.sh): a crash signal sent to the process (kill) while
# libptrec's snapshot writer thread runs and main blocks it.  The kernel gives it to the writer
# (which cannot block the fault signals); libptrec passes it back to the process instead of
# running the application's handler on its own thread, and main's handler takes it once main
# unblocks it.  The real crash that follows gets its one dump.
CRASHER=chainer
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run own_thread SEGV 'crash_own_thread > crash_write_wild'
grep -q '^chainer: the SIGBUS sent to the process reached main$' "$work/stderr" ||
	fail "the SIGBUS sent to the process did not reach main"
