#!/bin/sh
# Latency watches on intel_pt (tests/crash/watcher.c with PTREC_BACKEND=intel_pt).  With
# PTWRITE (CPU and kernel `ptw`) the span is cut at its markers; without it the watch dump
# carries the TSCs read at begin and end, and the report says that the span was placed by time,
# with the timing resolution, and keeps the branches timed inside it: the returns from the
# 30 ms sleep in step_c through step_b and span_work, and nothing of before_span (called just
# before the watch began).  Needs a usable intel_pt PMU: SKIP (77) with the reason otherwise.
set -u
fail() { echo "FAIL: $*"; exit 1; }
: "${top_builddir:?}" "${PTREC_TOOL:?}"
prog="$top_builddir/tests/crash/watcher"
if [ ! -d /sys/bus/event_source/devices/intel_pt ]; then
	echo "SKIP: no intel_pt PMU (/sys/bus/event_source/devices/intel_pt): this machine cannot"
	echo "      record with Intel PT ($("$PTREC_TOOL" info 2>/dev/null | grep '^verdict:'))"
	exit 77
fi
work=$(mktemp -d "$top_builddir/tests/watchpt.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT
export PTREC_DIR="$work"
export ASAN_OPTIONS="detect_leaks=0"
export PTREC_BACKEND=intel_pt
export PTREC_SNAPSHOT_INTERVAL_MS=60000
unset PTREC_FLAGS PTREC_SNAPSHOT_MAX

"$prog" >"$work/stdout" 2>"$work/stderr"
st=$?
cat "$work/stderr"
if [ $st -eq 97 ]; then
	echo "SKIP: ptrec_init refused the intel_pt backend here (perf_event_paranoid, the locked"
	echo "      memory budget or a busy PMU): $("$PTREC_TOOL" info 2>/dev/null | grep '^verdict:')"
	exit 77
fi
[ $st -eq 0 ] || fail "watcher exited with $st"
rep=
for d in "$work"/ptrec.watcher.*.watch*.ptrec.txt; do
	[ -f "$d" ] && grep -q '^watch:    "slow_op"' "$d" && rep=$d
done
[ -n "$rep" ] || fail "no report for the watch slow_op"
cat "$rep"
grep -q '^backend:  intel_pt' "$rep" || fail "the dump was not recorded with intel_pt"

# The event thread's span, whichever way it was placed.
span=$(sed -n '/^the watched span/,/^$/p' "$rep")
[ -n "$span" ] || fail "the report is not cut to the span"
echo "$span" | grep -q 'before_span' && fail "the span shows before_span, called before it began"
echo "$span" | grep -q 'ret .*step_b.* -> .*span_work' || fail "no return from step_b to span_work"
echo "$span" | grep -q 'ret .*span_work.* -> .*main' || fail "no return from span_work to main"

if grep -q '^span:     placed by time' "$rep"; then
	grep -Eq '^span:     .*timing resolution at the begin ([0-9]+ (ns|TSC ticks)|unknown)' "$rep" ||
		fail "the span: line gives no timing resolution"
	echo "$span" | head -1 | grep -q '^the watched span, placed by time: ' ||
		fail "the span's branch list does not say it was placed by time"
	"$PTREC_TOOL" report --format json "${rep%.txt}" >"$work/r.json" || fail "json report failed"
	grep -q '"placed_by":"time","in_history":true' "$work/r.json" || fail "JSON: not placed by time"
	grep -Eq '"begin_tsc":[1-9][0-9]*,"end_tsc":[1-9]' "$work/r.json" || fail "JSON: no TSCs"
	"$PTREC_TOOL" report --format trace "${rep%.txt}" >"$work/r.trace" || fail "trace failed"
	grep -q '"name":"watch slow_op (placed by time)"' "$work/r.trace" || fail "no watch slice"
else
	echo "$span" | head -1 | grep -q '^the watched span: [0-9]* branches from its begin to its end marker' ||
		fail "with PTWRITE the span is not cut at its markers"
fi
echo "PASS: watch on intel_pt"
