#!/bin/sh
# A snapshot while other threads run: the process keeps going and exits 0; the dump goes to
# PTREC_DIR as ptrec.snapshotter.PID.TIME.snapshot.ptrec (mode 0600, well formed, event 3 =
# snapshot, four threads named as they named themselves, none with an empty ring; the event thread's ring ends in slow_request); the report
# names the snapshot's caller when `ptrec report` is implemented.
. "$top_srcdir/tests/crash/snapshot_common.sh"
: "${PTREC_TOOL:?}"
[ -n "${NM:-}" ] || { echo "SKIP: nm not found (test oracle)"; exit 77; }
prog="$top_builddir/tests/crash/snapshotter"
snapshot_setup snap

"$prog" >"$work/stdout" 2>"$work/stderr" &
pid=$!
wait $pid; st=$?; [ $st -eq 0 ] || { cat "$work/stderr"; fail "snapshotter exited with $st"; }
cat "$work/stderr" "$work/stdout"
set -- "$work"/ptrec.snapshotter.$pid.*.snapshot.ptrec
[ $# -eq 1 ] && [ -f "$1" ] || fail "no snapshot dump in PTREC_DIR"
dump=$1
[ "$(stat -c %a "$dump")" = 600 ] || fail "dump mode is not 600"
$NM "$prog" >"$work/nm.txt" || fail "nm failed"
"$top_builddir/tests/crash/dump_check" "$dump" "$work/nm.txt" >"$work/check.txt" || fail "malformed dump"
cat "$work/check.txt"
grep -q "^event 3 signo 0 tid $pid threads 4 complete 1 " "$work/check.txt" ||
	fail "not a complete snapshot of 4 threads by the main thread"
grep -q "^stack:.*slow_request\$" "$work/check.txt" || fail "snapshot thread's ring does not end in slow_request"
[ "$(grep -c '^thread .* records [1-9]' "$work/check.txt")" -eq 4 ] || fail "a thread has an empty ring"
# Every thread is named as it named itself: the caller (main) and the three workers.
grep -q "^thread $pid name snapshotter " "$work/check.txt" || fail "the caller's thread name is wrong"
for i in 0 1 2; do
	grep -q "^thread [0-9]* name worker-$i " "$work/check.txt" || fail "worker-$i's name is missing"
done
[ "$(cat "$work/stdout")" = "$dump.txt" ] || fail "snapshot path is not the report"
[ "$(stat -c %a "$dump.txt")" = 600 ] || fail "report mode is not 600"
grep -q slow_request "$dump.txt" || fail "report does not name slow_request"
grep -q worker_step "$dump.txt" || fail "report does not name the workers' worker_step"
echo "PASS: snapshot"
