#!/bin/sh
# A vfork child shares its parent's memory, and with it libptrec's state, until it execs or
# exits.  Its crash leaves its own dump and report, and the parent records on: the parent's
# later crash gets its dump and report too.  What the child does to its own signal actions and
# mask (reset before exec) stays its own: the parent's handler still runs, its mask still
# holds what it blocked.
. "$top_srcdir/tests/crash/crash_common.sh"

(cd "$work" && exec "$crasher" vfork) >"$work/stdout" 2>"$work/stderr" &
pid=$!
wait $pid
status=$?
echo "--- stderr of crasher vfork (pid $pid, status $status)"; cat "$work/stderr"
[ "$status" -eq 139 ] || fail "vfork: exit status $status, expected 139"
child=$(sed -n 's/^crasher: vfork child \([0-9]*\) died of signal 11$/\1/p' "$work/stderr")
[ -n "$child" ] || fail "vfork: the child did not die of SIGSEGV"
for p in "$child" "$pid"; do
	[ "$(grep -c "^ptrec: SIGSEGV in pid $p thread $p " "$work/stderr")" -eq 1 ] ||
		fail "vfork: no single ptrec line for pid $p"
	set -- "$PTREC_DIR"/ptrec.$comm.$p.*.ptrec
	[ $# -eq 1 ] && [ -f "$1" ] && [ -s "$1.txt" ] || fail "vfork: no dump and report of pid $p"
done
dump=$1 # the parent's
$NM "$crasher" >"$work/nm.txt" || fail "nm failed"
"$checker" "$dump" "$work/nm.txt" >"$work/check.txt" || fail "vfork: malformed dump of the parent"
cat "$work/check.txt"
grep -q "^event 1 signo 11 tid $pid .* complete 1 " "$work/check.txt" || fail "vfork: the parent's dump is not its crash"
grep -q "^fault si_code 1 addr 0x0\$" "$work/check.txt" || fail "vfork: the parent's dump does not hold its fault"
grep -q "^stack:.*crash_segv_null\$" "$work/check.txt" || fail "vfork: the parent's ring does not end in crash_segv_null"
grep -q crash_segv_null "$dump.txt" || fail "vfork: the parent's report does not name crash_segv_null"
grep -q crash_in_vfork_child "$PTREC_DIR"/ptrec.$comm.$child.*.ptrec.txt ||
	fail "vfork: the child's report does not name crash_in_vfork_child"
rm -f "$PTREC_DIR"/*

crash_run vfork_signal SEGV 'crash_vfork_signal > crash_segv_null'
grep -q '^crasher: parent handler ran$' "$work/stderr" || fail "vfork_signal: the parent's SIGSEGV handler did not run"
