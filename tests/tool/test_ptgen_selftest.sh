#!/bin/sh
# test_ptgen_selftest.sh — the ground-truth generator checked against independent witnesses:
#  1. the recorded ground truth: every program exits 0 under single-step (each checks its own
#     results), main's first instruction ran exactly once, and code we know must run did, the
#     right number of times (signal handlers, a shared-library function, an atexit handler);
#  2. every PT stream ptgen writes (all encoder settings) is a valid packet stream for libipt's
#     packet decoder, from the first byte to the last, with the packets the settings ask for;
#  3. libipt's instruction decoder, given the trace and the image, reproduces the ground truth
#     exactly, instruction for instruction, with its enable/disable events exactly where the
#     program entered and left the kernel;
#  4. with an internal buffer overflow (OVF) halfway, libipt shows the ground truth up to its
#     last packet before it and from the FUP after it;
#  5. the check can fail: one flipped TNT bit makes libipt's instructions differ.
# Needs libipt (test oracle); SKIPs without it or without ptrace.
. "$top_srcdir/tests/ptgen/ptgen_lib.sh"

if [ ! -x "$PTGEN_ORACLE" ]; then
	echo "SKIP: libipt is not available (configure found no libipt), so there is no oracle"
	exit 77
fi
NM=${NM:-nm}

work=$(ptgen_workdir) || exit 1
trap 'rm -rf "$work"' EXIT
fails=0 checks=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# sym_count DIR OBJECT SYMBOL: how often SYMBOL's first instruction (in OBJECT, placed where
# DIR/image.txt says) appears in DIR/truth.txt.
sym_count() {
	base=$(sed -n "s|^--elf $2:||p" "$1/image.txt" | head -n 1)
	value=$("$NM" "$2" | awk -v s="$3" '$3 == s { print $1; exit }')
	if [ -z "$base" ] || [ -z "$value" ]; then
		echo "-1"
		return
	fi
	addr=$(printf '%016x' $((base + 0x$value)))
	grep -c "^$addr\$" "$1/truth.txt"
}

# expect_runs DIR OBJECT SYMBOL N
expect_runs() {
	checks=$((checks + 1))
	n=$(sym_count "$1" "$2" "$3")
	[ "$n" = "$4" ] || fail "$(basename "$1"): $3 ran $n times in the ground truth, expected $4"
}

lib="$PTGEN_PROGDIR/libptgen_shared.so"
for p in $PTGEN_PROGS; do
	d="$work/$p"
	ptgen_record "$p" "$d" || exit 1
	prog="$PTGEN_PROGDIR/$p"
	expect_runs "$d" "$prog" main 1
	case $p in
	signals) expect_runs "$d" "$prog" on_usr1 2; expect_runs "$d" "$prog" on_fault 2 ;;
	shared) expect_runs "$d" "$lib" ptgen_shared_sum 2; expect_runs "$d" "$lib" ptgen_shared_apply 1 ;;
	loops) expect_runs "$d" "$prog" at_exit_handler 1 ;;
	esac
	n=$(wc -l <"$d/truth.txt")
	checks=$((checks + 1))
	[ "$n" -gt 1000 ] && [ "$n" -lt 200000 ] || fail "$p: $n instructions recorded (want 1k..200k)"

	echo "$PTGEN_SETTINGS" | while IFS='|' read -r name opts; do
		t="$d/$name.pt"
		# shellcheck disable=SC2086
		"$PTGEN" encode $opts -o "$t" "$d" >/dev/null || { echo "FAIL: $p/$name: ptgen encode"; exit 1; }
		"$PTGEN_ORACLE" --packets "$t" >"$t.packets" ||
			{ echo "FAIL: $p/$name: libipt's packet decoder rejects the trace"; exit 1; }
		mtc=$(echo "$opts" | sed -n 's/.*--mtc-freq \([0-9]*\).*/\1/p')
		# shellcheck disable=SC2046
		"$PTGEN_ORACLE" $(cat "$d/image.txt") --mtc-freq "${mtc:-3}" "$t" >"$t.ipt" 2>"$t.err" ||
			{ echo "FAIL: $p/$name: libipt reports decode errors:"; head -n 3 "$t.err"; exit 1; }
		ptgen_addresses "$t.ipt" >"$t.addr"
		ptgen_same_insns "$p/$name: libipt vs ground truth" "$d/truth.txt" "$t.addr" || exit 1
		cmp -s "$d/truth-events.txt" "$t.ipt" ||
			{ echo "FAIL: $p/$name: libipt's enable/disable events are not where tracing turned on and off:"
			  diff "$d/truth-events.txt" "$t.ipt" | head -n 6; exit 1; }
		has() { grep -q "^$1 " "$t.packets"; }
		case $opts in
		*"--tnt short"*) ! has tnt.64 || { echo "FAIL: $p/$name: long TNT with --tnt short"; exit 1; } ;;
		esac
		case $opts in
		*--timing*) ;;
		*) ! has tsc && ! has mtc && ! has cyc ||
			{ echo "FAIL: $p/$name: timing packets without --timing"; exit 1; } ;;
		esac
		case $opts in
		*"--timing all"*) for k in tsc tma mtc cyc cbr; do
			has $k || { echo "FAIL: $p/$name: no $k packet with --timing all"; exit 1; }; done ;;
		esac
		case $opts in
		*"--psb-period 64"*) [ "$(awk '$1 == "psb" { print $2 }' "$t.packets")" -gt 3 ] ||
			{ echo "FAIL: $p/$name: too few PSBs for a 64-byte period"; exit 1; } ;;
		esac
	done || fails=$((fails + 1))
	checks=$((checks + $(echo "$PTGEN_SETTINGS" | wc -l)))

	# Without return compression every RET is a TIP: more TIPs than with it.
	tip_comp=$(awk '$1 == "tip" { print $2 }' "$d/default.pt.packets")
	tip_nocomp=$(awk '$1 == "tip" { print $2 }' "$d/nocomp-psb64.pt.packets")
	checks=$((checks + 1))
	[ "${tip_nocomp:-0}" -gt "${tip_comp:-0}" ] ||
		fail "$p: $tip_nocomp TIPs without return compression, $tip_comp with it"
	# An internal buffer overflow halfway: libipt shows [overflow] there, the ground truth
	# before it (up to its last packet) and after it.
	checks=$((checks + 1))
	ptgen_overflow_trace "$d"
	# shellcheck disable=SC2046
	"$PTGEN_ORACLE" $(cat "$d/image.txt") "$d/overflow.pt" >"$d/overflow.ipt" 2>/dev/null
	ptgen_check_overflow "$p/overflow (libipt)" "$d/overflow.ipt" "$d/truth.txt" \
		$((PTGEN_OVF_AT - 256)) || fails=$((fails + 1))
	echo "ok: $p: libipt reproduces $n instructions under $(echo "$PTGEN_SETTINGS" | wc -l) encoder settings"
done

# The comparison can fail: a single flipped TNT bit must change what libipt decodes.
d="$work/loops"
checks=$((checks + 1))
"$PTGEN" encode --corrupt-tnt 40 -o "$d/bad.pt" "$d" >/dev/null
# shellcheck disable=SC2046
"$PTGEN_ORACLE" $(cat "$d/image.txt") "$d/bad.pt" >"$d/bad.ipt" 2>/dev/null
ptgen_addresses "$d/bad.ipt" >"$d/bad.addr"
if cmp -s "$d/truth.txt" "$d/bad.addr"; then
	fail "a trace with a flipped TNT bit still decodes to the ground truth"
fi

echo "$checks checks, $fails failed"
[ $fails -eq 0 ]
