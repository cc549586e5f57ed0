#!/bin/sh
# A burst of 40 snapshots with no rate limit (tests/crash/reaper.c): the queue holds 4, so
# some are refused with -PTREC_ERATE and counted as dropped; requested = written + dropped,
# and exactly `written` dumps are on disk.
. "$top_srcdir/tests/crash/snapshot_common.sh"
prog="$top_builddir/tests/crash/reaper"
snapshot_setup burst
export PTREC_SNAPSHOT_INTERVAL_MS=0
export PTREC_SNAPSHOT_MAX=1000
export PTREC_FLAGS=4 # PTREC_F_NO_REPORT: dumps only
"$prog" burst 40 >"$work/stdout" 2>"$work/stderr"
st=$?
cat "$work/stderr" "$work/stdout"
[ $st -eq 0 ] || fail "reaper exited with $st"
written=$(sed -n 's/^written \([0-9]*\) dropped.*/\1/p' "$work/stdout")
[ "$(ls "$work" | grep -Ec '\.snapshot(\.[0-9]+)?\.ptrec$')" -eq "$written" ] || fail "dumps on disk != written"
echo "PASS: snapshot burst"
