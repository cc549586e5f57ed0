#!/bin/sh
# Latency watches (tests/crash/watcher.c): a span over its budget leaves a watch dump whose
# report shows exactly the branches between the span's begin and end markers, in the known
# call sequence (the nested under-budget watch's markers inside it, nothing from before the
# span), with the watch's name, duration and budget in the header and the calling thread
# labelled as the watch's, not [crashed]; a concurrent watch on a worker thread gets its own
# dump of that thread alone; under-budget and rate-limited spans leave nothing.
. "$top_srcdir/tests/crash/snapshot_common.sh"
: "${PTREC_TOOL:?}"
prog="$top_builddir/tests/crash/watcher"
snapshot_setup watch
export PTREC_SNAPSHOT_INTERVAL_MS=60000

"$prog" >"$work/stdout" 2>"$work/stderr" &
pid=$!
wait $pid; st=$?
cat "$work/stderr"
[ $st -eq 0 ] || fail "watcher exited with $st"
set -- "$work"/ptrec.watcher.$pid.*.watch.ptrec "$work"/ptrec.watcher.$pid.*.watch.[0-9]*.ptrec
for d; do [ -f "$d" ] && set -- "$@" "$d"; shift; done
[ $# -eq 2 ] || fail "expected 2 watch dumps, found $#: $*"
ls "$work" | grep -Ev '^std(out|err)$|\.watch(\.[0-9]+)?\.ptrec' && fail "files other than watch dumps were written"
main_rep=; worker_rep=
for d in "$@"; do
	[ "$(stat -c %a "$d")" = 600 ] || fail "$d: mode is not 600"
	[ -f "$d.txt" ] || fail "$d: no report"
	if grep -q '^watch:    "slow_op"' "$d.txt"; then main_rep=$d.txt; fi
	if grep -q '^watch:    "worker_op"' "$d.txt"; then worker_rep=$d.txt; fi
done
[ -n "$main_rep" ] || fail "no report for the watch slow_op"
[ -n "$worker_rep" ] || fail "no report for the watch worker_op"
cat "$main_rep"

# The header: who asked and why, the span's duration and budget.
grep -q "^event:    watch" "$main_rep" || fail "event is not watch"
grep -q "^asked by: thread $pid (watcher), its watch went over budget" "$main_rep" ||
	fail "the header does not say that thread $pid's watch asked"
grep -Eq '^watch:    "slow_op": took [0-9]+ us, budget 1000 us' "$main_rep" ||
	fail "no duration and budget in the header"
took=$(sed -n 's/^watch:    "slow_op": took \([0-9]*\) us.*/\1/p' "$main_rep")
[ "$took" -ge 20000 ] || fail "slow_op took $took us, it sleeps 30 ms"
grep -q "\[crashed\]" "$main_rep" && fail "a thread is labelled [crashed]"
grep -q "^== Thread $pid (watcher) \[watch over budget\]" "$main_rep" ||
	fail "the calling thread is not labelled as the watch's"
[ "$(grep -c '^== Thread ' "$main_rep")" -eq 1 ] || fail "the snapshot holds other threads"

# The span, newest first: kind and the functions named on each line.
sed -n '/^the watched span: /,/^$/p' "$main_rep" | sed 1d | grep '^  #' |
	sed 's/^  #[0-9]* *//' | awk '{
		k = $1; if ($1 == "--") k = $2 " " $3;
		s = k ":"; n = split($0, w, " ");
		for (i = 1; i <= n; i++) if (w[i] ~ /^[A-Za-z_][A-Za-z0-9_]*\+0x/) { sub(/\+.*/, "", w[i]); s = s " " w[i] }
		print s }' >"$work/span.txt"
cat >"$work/expect.txt" <<'END'
watch end: main
ret: span_work main
ret: step_b span_work
ret: step_c step_b
call: step_b step_c
call: span_work step_b
ret: step_a span_work
call: span_work step_a
call: main span_work
watch end: main
ret: quick_work main
ret: step_a quick_work
call: quick_work step_a
call: main quick_work
watch begin: main
watch begin: main
END
diff "$work/expect.txt" "$work/span.txt" || fail "the span's branches are not the span's calls"
grep -q "^the watched span: 16 branches" "$main_rep" || fail "span header does not count 16"

# The JSON report carries the watch and the span too.
"$PTREC_TOOL" report --format json "${main_rep%.txt}" >"$work/r.json" || fail "json report failed"
grep -q '"watch":{"name":"slow_op","budget_ns":1000000' "$work/r.json" || fail "no watch in JSON"
grep -q '"crashed":false,"event_thread":true,"role":"watch over budget"' "$work/r.json" ||
	fail "JSON labels the thread wrongly"
"$PTREC_TOOL" report --format trace "${main_rep%.txt}" >"$work/r.trace" || fail "trace failed"
grep -q '"name":"watch slow_op"' "$work/r.trace" || fail "no watch slice in the trace"

# The worker's watch: its own thread only, its own span.
grep -q "^== Thread [0-9]* (watcher) \[watch over budget\]" "$worker_rep" || fail "worker label"
[ "$(grep -c '^== Thread ' "$worker_rep")" -eq 1 ] || fail "worker snapshot holds other threads"
grep -q "worker_span" "$worker_rep" || fail "worker report does not name worker_span"
grep -q "span_work\|quick_work" "$worker_rep" && fail "worker report shows the main thread's calls"
grep -q "^the watched span: 6 branches" "$worker_rep" || fail "worker span is not 6 branches"
echo "PASS: watch"
