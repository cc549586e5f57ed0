#!/bin/sh
# A crash test (see tests/crash/crash_common.sh) with the other instrumentation: the crasher built
# with -fsanitize-coverage=trace-pc records coverage edges; the newest one lies in the crashing
# function, and the report names it.
CRASHER=crasher_edges
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run segv_null SEGV 'last:crash_segv_null'
grep -q '^kinds: edge$' "$work/check.txt" || fail "the ring does not hold coverage edges only"
