#!/bin/sh
# test_decode_times.sh — `ptrec decode` branch-event times against ptgen's synthetic clock (see
# doc/ptgen.md: one TSC tick per core cycle, crystal clock = TSC/2, CBR 20): for two programs
# and several timing settings (TSC only; TSC+MTC+CYC+CBR with PSB+ every 128 bytes, MTCFreq 0
# and 3, deferred TIPs; MTCFreq 9; MTC+CYC with PSB+ only at the start; CYC without MTC), every
# branch event must carry a time, the times must never go back, and they must stay within the
# generator's clock range (first..last TSC, 1% + 100 ticks allowed for estimates).  Decoded
# once with the clock parameters (--mtc-freq, --tsc-ratio 2/1, --nom-freq 20) and once without
# (ratios calibrated from the trace).  With the parameters and CYC packets, each branch's time
# is also checked against the ground truth: the generator's clock advances 1 + IP % 3 cycles
# per instruction of truth.txt, and a branch is stamped with the time of the packet that
# decided it (a TNT holds up to 47 branches, a deferred TIP waits behind one; a direct jump or
# call needs no packet and takes the time of the last one), so its time must lie between the
# true times of the packet-needing branches (not direct JMP/CALL) 48 before and 48 after it (8
# ticks slack).  A
# wrong --mtc-freq must fail that check.  SKIPs only without ptrace.
. "$top_srcdir/tests/ptgen/ptgen_lib.sh"
: "${PTREC_TOOL:?run me from make check (PTREC_TOOL is not set)}"

work=$(ptgen_workdir) || exit 1
trap 'rm -rf "$work"' EXIT
fails=0 checks=0

# near_truth TRUTH EVENTS START-TSC: prints the first branch event whose time is outside the
# window described above (nothing if all are inside).  IP % 3 is the hex digit sum % 3.
near_truth() {
	awk -v lo="$3" '
	function mod3(h,   i, s) { s = 0
		for (i = 1; i <= length(h); i++) s += index("0123456789abcdef", substr(h, i, 1)) - 1
		return s % 3 }
	NR == FNR { cyc += 1 + mod3($1); ip[NR] = $1; at[NR] = lo + cyc; n = NR; next }
	$1 ~ /^(jcc|jmp|call|ret|ind-jmp|ind-call|far)$/ {
		while (pos < n && ip[pos + 1] != $2) pos++
		if (pos >= n) { print "line " FNR ", branch not in the ground truth: " $0; bad = 1; exit }
		pos++
		ts = ""; for (i = 1; i <= NF; i++) if ($i ~ /^@/) ts = $i
		sub(/^@/, "", ts); sub(/c$/, "", ts)
		k++; truth[k] = at[pos]; stamp[k] = ts + 0; line[k] = FNR ": " $0
		if ($1 !~ /^(jmp|call)$/) pk[++np] = at[pos]  # needs a packet (TNT bit or TIP)
		npk[k] = np }
	END { if (bad) exit
		for (i = 1; i <= k; i++) {
			lo_i = npk[i] - 48; hi_i = npk[i] + 48
			a = (lo_i >= 1 ? pk[lo_i] : lo) - 8; b = (hi_i <= np ? pk[hi_i] : truth[k]) + 8
			if (stamp[i] < a || stamp[i] > b) {
				printf "line %s: time %.0f, true %.0f, want %.0f..%.0f\n", line[i], stamp[i], truth[i], a, b
				exit } } }' "$1" "$2"
}

# check_times DIR NAME DECODE-OPTIONS -- ENCODE-OPTIONS
check_times() {
	_d=$1 _name=$2
	shift 2
	_dec=
	while [ "$1" != "--" ]; do _dec="$_dec $1"; shift; done
	shift
	checks=$((checks + 1))
	_t="$_d/$_name.pt"
	_range=$("$PTGEN" encode "$@" -o "$_t" "$_d" | sed -n 's/.*tsc \([0-9]*\)\.\.\([0-9]*\)$/\1 \2/p')
	if [ -z "$_range" ]; then
		echo "FAIL: $_name: ptgen encode $* failed"; fails=$((fails + 1)); return
	fi
	# shellcheck disable=SC2046,SC2086
	"$PTREC_TOOL" decode $_dec $(cat "$_d/image.txt") "$_t" >"$_t.ev" 2>"$_t.err"
	_rc=$?
	if [ $_rc -ne 0 ]; then
		echo "FAIL: $_name: ptrec decode exited $_rc"; head -n 3 "$_t.err"
		fails=$((fails + 1)); return
	fi
	_bad=$(awk -v lo="${_range% *}" -v hi="${_range#* }" '
		{ ts = ""; for (i = 1; i <= NF; i++) if ($i ~ /^@/) ts = $i
		  if (ts == "") { print "line " NR ", no time: " $0; exit }
		  sub(/^@/, "", ts); sub(/c$/, "", ts); ts += 0
		  if (ts < prev) { print "line " NR ", time goes back from " prev ": " $0; exit }
		  if (ts < lo || ts > hi + (hi - lo) / 100 + 100) {
			printf "line %d, time %.0f outside %.0f..%.0f: %s\n", NR, ts, lo, hi, $0; exit }
		  prev = ts }
		END { if (NR == 0) print "no branch events" }' "$_t.ev")
	case "$_dec $*" in
	*--tsc-ratio*cyc*|*--tsc-ratio*all*)
		[ -n "$_bad" ] || _bad=$(near_truth "$_d/truth.txt" "$_t.ev" "${_range% *}") ;;
	esac
	if [ -n "$_bad" ]; then
		echo "FAIL: $_name (decode$_dec; encode $*): $_bad"
		fails=$((fails + 1))
	fi
}

for p in loops recursion; do
	d="$work/$p"
	ptgen_record "$p" "$d" || exit 1
	while IFS='|' read -r name mtc opts; do
		# shellcheck disable=SC2086
		check_times "$d" "$name-known" --mtc-freq "$mtc" --tsc-ratio 2/1 --nom-freq 20 -- $opts
		# shellcheck disable=SC2086
		check_times "$d" "$name-calibrated" --mtc-freq "$mtc" -- $opts
	done <<EOF2
tsc|3|--timing tsc
all-psb128|3|--timing all --psb-period 128
all-psb128-mtc0|0|--timing all --mtc-freq 0 --psb-period 128 --defer-tip
all-mtc9|9|--timing all --mtc-freq 9 --psb-period 2000
mtc-cyc-start-only|1|--timing mtc,cyc --mtc-freq 1 --psb-period 0
tsc-cyc-cbr|3|--timing tsc,cyc,cbr --psb-period 1024
tsc-mtc-psb256|3|--timing tsc,mtc --psb-period 256 --ip mix --seed 5
EOF2
	# The check can fail: MTCs read with the wrong MTCFreq put times far off the truth.
	checks=$((checks + 1))
	"$PTGEN" encode --timing all --psb-period 512 -o "$d/wrong.pt" "$d" >/dev/null
	# shellcheck disable=SC2046
	"$PTREC_TOOL" decode --mtc-freq 6 --tsc-ratio 2/1 --nom-freq 20 $(cat "$d/image.txt") \
		"$d/wrong.pt" >"$d/wrong.ev" 2>/dev/null
	if [ -z "$(near_truth "$d/truth.txt" "$d/wrong.ev" 68719476736)" ]; then
		echo "FAIL: $p: times decoded with MTCFreq 6 for an MTCFreq 3 trace passed the truth check"
		fails=$((fails + 1))
	fi
	echo "checked: $p ($(wc -l <"$d/tsc-known.pt.ev") branch events per trace)"
done

echo "$checks checks, $fails failed"
[ $fails -eq 0 ]
