#!/bin/sh
# A crash test (see tests/crash/crash_common.sh) with GCC's -pg -mfentry -mfentry-name=
# __ptrec_fentry (the entry hook that patched entries call too): entry-only records, returns
# inferred from the stack pointer.  The ring replays to the same call stack as the
# -finstrument-functions crasher, and the report names the crashing function and its caller.
[ -x "$top_builddir/tests/crash/crasher_fentry" ] ||
	{ echo "SKIP: \$CC does not take -pg -mfentry -mfentry-name (not GCC)"; exit 77; }
CRASHER=crasher_fentry
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run segv_null SEGV 'handle_request > crash_segv_null'
grep -q '^kinds: entry$' "$work/check.txt" || fail "the ring does not hold entry records only"
