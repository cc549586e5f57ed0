#!/bin/sh
# test_decode_count.sh — every way of decoding a trace gives the same flow: one run per call
# (ptrec_pt_flow_next_run), batches of runs (ptrec_pt_flow_next_runs) run for run, and totals
# without runs (ptrec_pt_flow_count, the fast path behind `ptrec decode --stat`), whose totals
# must equal the runs added up and what `ptrec decode --stat` prints.  On ptgen traces of real
# programs with every encoder setting of ptgen_lib.sh, cut like a wrapped ring (the oldest bytes
# start mid-packet), with an overflow, a wrong TNT bit, bytes overwritten with garbage (bad
# packets, resyncs) and code missing from the image.  And the hot paths (the block cache's
# successor links, TNT bursts, the totals-only loop) must give exactly the runs of the general
# walk alone (flow_compare_general, a decoder built without them).  The totals-only loop takes
# whole chains of blocks per lookup (TNT bits, direct jumps and calls, the returns of calls made
# inside the chain): `recursion` goes deeper than the 64-entry return stack while chains push,
# so a return stack left wrong by a chain would show as a gap or a different total.  Chains also
# return to calls made before them (checking the return addresses they pop) and end at the
# indirect branch that takes the TIP read behind their last bit (its target in their key):
# `chains` returns from the same code to different callers, `indirect` and `switch` (a jump
# table) change the TIP target between visits of one branch, `nocomp` settings mix returns
# by TIP with the compressed ones, the ovf/psb settings put overflows and PSBs inside chain
# windows.  Spans (several chains per lookup, keyed by the trace bytes but the MTC payloads)
# apply the MTCs inside them: the mtc settings (perf's default timing: TSC and MTC, no CYC)
# check the first and last time with spans through MTCs, overflows and PSBs among them.
# SKIPs only without ptrace.
. "$top_srcdir/tests/ptgen/ptgen_lib.sh"
: "${PTREC_TOOL:?run me from make check (PTREC_TOOL is not set)}"
COMPARE="$top_builddir/tests/ptgen/flow_compare"
GENERAL="$top_builddir/tests/ptgen/flow_compare_general"

work=$(ptgen_workdir) || exit 1
trap 'rm -rf "$work"' EXIT
fails=0 checks=0

# check WHAT TRACE IMAGE-FILE: flow_compare agrees with itself and with ptrec decode --stat.
check() {
	checks=$((checks + 1))
	# shellcheck disable=SC2046
	"$COMPARE" $(cat "$3") "$2" >"$2.cmp" 2>&1
	_rc=$?
	if [ $_rc -ne 0 ]; then
		echo "FAIL: $1: flow_compare exited $_rc:"; head -n 4 "$2.cmp"
		fails=$((fails + 1))
		return
	fi
	# shellcheck disable=SC2046
	"$COMPARE" --runs $(cat "$3") "$2" >"$2.hot" 2>&1
	# shellcheck disable=SC2046
	"$GENERAL" --runs $(cat "$3") "$2" >"$2.gen" 2>&1
	_rc=$?
	if [ $_rc -ne 0 ] || ! cmp -s "$2.hot" "$2.gen"; then
		echo "FAIL: $1: the hot paths differ from the general walk (general exited $_rc):"
		diff "$2.gen" "$2.hot" | head -n 5
		fails=$((fails + 1))
		return
	fi
	# shellcheck disable=SC2046
	"$PTREC_TOOL" decode --stat $(cat "$3") "$2" >"$2.stat" 2>"$2.err"
	_rc=$?
	if [ $_rc -gt 1 ]; then
		echo "FAIL: $1: ptrec decode --stat exited $_rc:"; head -n 3 "$2.err"
		fails=$((fails + 1))
	elif grep -vxFf "$2.stat" "$2.cmp" >"$2.miss"; then
		echo "FAIL: $1: ptrec decode --stat differs from the runs' totals in:"
		head -n 4 "$2.miss"
		fails=$((fails + 1))
	fi
}

# garble TRACE OFFSET...: overwrites 3 bytes at each offset.
garble() {
	_t=$1
	shift
	for _o in "$@"; do
		printf '\377\003\231' | dd of="$_t" bs=1 seek="$_o" conv=notrunc 2>/dev/null
	done
}

for p in loops signals indirect recursion switch chains; do
	d="$work/$p"
	ptgen_record "$p" "$d" || exit 1
	grep -v 'libc\.so' "$d/image.txt" >"$d/image-nolibc.txt"
	while IFS='|' read -r name opts; do
		t="$d/$name.pt"
		# shellcheck disable=SC2086
		"$PTGEN" encode $opts -o "$t" "$d" >/dev/null || { fails=$((fails + 1)); continue; }
		for c in $(ptgen_ring_cuts "$t"); do
			check "$p/$name cut ${c##*.}" "$c" "$d/image.txt"
		done
		size=$(wc -c <"$t")
		cp "$t" "$t.bad"
		garble "$t.bad" $((size / 5)) $((size / 3)) $((size / 2)) $((size * 3 / 4))
		check "$p/$name garbled" "$t.bad" "$d/image.txt"
		check "$p/$name without libc" "$t" "$d/image-nolibc.txt"
	done <<EOF2
$PTGEN_SETTINGS
ovf-psb200|--psb-period 200 --overflow 2000:100
ovf-timing|--timing all --overflow 3000:500 --psb-period 700
mtc-ovf|--timing tsc,mtc --overflow 3000:500 --psb-period 700
mtc9-mix|--timing tsc,mtc --mtc-freq 9 --ip mix --seed 5
corrupt-tnt|--corrupt-tnt 500 --psb-period 300
repeat|--repeat 3 --psb-period 2000
EOF2
	echo "checked: $p"
done
echo "$checks checks, $fails failed"
[ $fails -eq 0 ]
