#!/bin/sh
# A chain test (chainer.c, crash_common.sh):
# the SIGSEGV handler forks a child that execs /bin/sh to log a line, waits for it with
# waitpid, resets to SIG_DFL and returns (as servers that start a debugger or a log shipper
# from their crash handler do).  The child runs and exits 0 (libptrec's fork handling in a
# crashed process must not hang or kill it), the parent's waitpid gets it, and exactly one
# dump, of the first fault, comes from the parent; the process dies of SIGSEGV.
CRASHER=chainer
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run fork_exec SEGV 'handle_request > crash_with > crash_write_wild'
grep -q '^chainer: child of the handler ran$' "$work/stderr" || fail "the handler's child did not run"
grep -q "^chainer: the handler's child exited with 0\$" "$work/stderr" || fail "the handler did not reap its child with status 0"
first_fault 0x1bad0
