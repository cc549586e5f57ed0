#!/bin/sh
# test_decode_libipt.sh — differential test: `ptrec decode --insn` and libipt's instruction
# decoder (tests/oracle/ipt_oracle, pt_insn_*) on the same traces with the same images must give the
# same instruction sequence, for every program in tests/progs and every encoder setting in
# ptgen_lib.sh.  And for each program a trace cut short in the middle of a packet: there the
# decoders may stop at different points after the last packet (libipt stops early), so ours must
# print a prefix of the ground truth at least as long as libipt's.  And a trace with an internal
# buffer overflow (OVF) halfway: the same instructions and [overflow] line.  SKIPs without libipt
# (HAVE_LIBIPT) or ptrace.
. "$top_srcdir/tests/ptgen/ptgen_lib.sh"
: "${PTREC_TOOL:?run me from make check (PTREC_TOOL is not set)}"

if [ ! -x "$PTGEN_ORACLE" ]; then
	echo "SKIP: libipt is not available (configure found no libipt), so there is no oracle"
	exit 77
fi

work=$(ptgen_workdir) || exit 1
trap 'rm -rf "$work"' EXIT
fails=0 checks=0

# compare NAME TRACE IMAGE MTC: ours vs libipt's instruction lists.
compare() {
	checks=$((checks + 1))
	# shellcheck disable=SC2046
	"$PTREC_TOOL" decode --insn $(cat "$3") "$2" >"$2.ours" 2>"$2.ours.err"
	# shellcheck disable=SC2046
	"$PTGEN_ORACLE" $(cat "$3") --mtc-freq "$4" "$2" >"$2.ipt" 2>"$2.ipt.err"
	ptgen_addresses "$2.ours" >"$2.ours.addr"
	ptgen_addresses "$2.ipt" >"$2.ipt.addr"
	if [ ! -s "$2.ipt.addr" ]; then
		echo "FAIL: $1: libipt decoded nothing"; fails=$((fails + 1)); return
	fi
	ptgen_same_insns "$1: ptrec (expected) vs libipt" "$2.ipt.addr" "$2.ours.addr" ||
		{ head -n 3 "$2.ours.err"; fails=$((fails + 1)); }
}

for p in $PTGEN_PROGS; do
	d="$work/$p"
	ptgen_record "$p" "$d" || exit 1
	while IFS='|' read -r name opts; do
		t="$d/$name.pt"
		# shellcheck disable=SC2086
		"$PTGEN" encode $opts -o "$t" "$d" >/dev/null || { fails=$((fails + 1)); continue; }
		mtc=$(echo "$opts" | sed -n 's/.*--mtc-freq \([0-9]*\).*/\1/p')
		compare "$p/$name" "$t" "$d/image.txt" "${mtc:-3}"
	done <<EOF2
$PTGEN_SETTINGS
EOF2
	# The same trace cut 5 bytes into its second half.
	t="$d/cut.pt"
	"$PTGEN" encode --psb-period 256 -o "$d/full.pt" "$d" >/dev/null
	size=$(wc -c <"$d/full.pt")
	head -c $((size / 2 + 5)) "$d/full.pt" >"$t"
	checks=$((checks + 1))
	# shellcheck disable=SC2046
	"$PTREC_TOOL" decode --insn $(cat "$d/image.txt") "$t" >"$t.ours" 2>"$t.ours.err"
	# shellcheck disable=SC2046
	"$PTGEN_ORACLE" $(cat "$d/image.txt") "$t" >"$t.ipt" 2>/dev/null
	ptgen_addresses "$t.ours" >"$t.ours.addr"
	ptgen_addresses "$t.ipt" >"$t.ipt.addr"
	ours=$(wc -l <"$t.ours.addr") theirs=$(wc -l <"$t.ipt.addr")
	head -n "$ours" "$d/truth.txt" >"$t.truth"
	if ! cmp -s "$t.truth" "$t.ours.addr" || [ "$ours" -lt "$theirs" ] || [ "$theirs" -eq 0 ]; then
		echo "FAIL: $p/cut: ptrec printed $ours instructions, libipt $theirs; ptrec's must be a" \
			"prefix of the ground truth at least as long as libipt's"
		diff "$t.truth" "$t.ours.addr" | head -n 5
		fails=$((fails + 1))
	fi
	# With an internal buffer overflow halfway: the same instructions, the same [overflow].
	ptgen_overflow_trace "$d"
	checks=$((checks + 1))
	# shellcheck disable=SC2046
	"$PTREC_TOOL" decode --insn $(cat "$d/image.txt") "$d/overflow.pt" >"$d/ovf.ours" 2>/dev/null
	# shellcheck disable=SC2046
	"$PTGEN_ORACLE" $(cat "$d/image.txt") "$d/overflow.pt" >"$d/ovf.ipt" 2>/dev/null
	grep -v '^\[\(enabled\|disabled\)' "$d/ovf.ours" >"$d/ovf.ours.addr"
	grep -v '^\[\(enabled\|disabled\)' "$d/ovf.ipt" >"$d/ovf.ipt.addr"
	if ! grep -q '^\[overflow' "$d/ovf.ipt"; then
		echo "FAIL: $p/overflow: libipt shows no overflow"; fails=$((fails + 1))
	else
		ptgen_same_insns "$p/overflow: ptrec (expected) vs libipt, [overflow] included" \
			"$d/ovf.ipt.addr" "$d/ovf.ours.addr" || fails=$((fails + 1))
	fi
	echo "compared: $p"
done

echo "$checks checks, $fails failed"
[ $fails -eq 0 ]
