#!/bin/sh
# A crash test (see tests/crash/crash_common.sh): an application that keeps its own SIGSEGV handler
# (PTREC_F_NO_SIGNALS) calls ptrec_crash_dump() from it: the dump and report are written once
# (a second call is refused as busy), then the application dies of the signal itself.  The
# handler is instrumented too, so the ring ends in it, called from the crashing function.
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run own_handler SEGV 'handle_request > crash_segv_null > own_handler'
grep -q '^crasher: second ptrec_crash_dump is busy$' "$work/stderr" ||
	fail "a second ptrec_crash_dump was not refused with -PTREC_EBUSY"
