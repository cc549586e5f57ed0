#!/bin/sh
# test_decode_truth.sh — `ptrec decode --insn` against the ground truth: for every program in
# tests/progs (loops, recursion, function pointers, jump tables, setjmp/longjmp, signals and
# faults, a shared library, plus libc and ld.so) and every encoder setting in ptgen_lib.sh
# (return compression on/off, PSB period from 64 bytes to start-only, short/long TNT, every IP
# compression, with and without timing packets), the decoded instruction addresses must equal
# the single-stepped ones exactly, the decode must report success (exit 0), the [enabled] and
# [disabled] lines must sit exactly where tracing turned on and off (and no other event lines
# appear).  And for each program a trace with an internal buffer overflow (OVF) halfway.  SKIPs
# only without ptrace.
. "$top_srcdir/tests/ptgen/ptgen_lib.sh"
: "${PTREC_TOOL:?run me from make check (PTREC_TOOL is not set)}"

work=$(ptgen_workdir) || exit 1
trap 'rm -rf "$work"' EXIT
fails=0 checks=0

for p in $PTGEN_PROGS; do
	d="$work/$p"
	ptgen_record "$p" "$d" || exit 1
	while IFS='|' read -r name opts; do
		t="$d/$name.pt"
		checks=$((checks + 1))
		# shellcheck disable=SC2086
		"$PTGEN" encode $opts -o "$t" "$d" >/dev/null || { fails=$((fails + 1)); continue; }
		# shellcheck disable=SC2046
		"$PTREC_TOOL" decode --insn $(cat "$d/image.txt") "$t" >"$t.out" 2>"$t.err"
		rc=$?
		if [ $rc -ne 0 ]; then
			echo "FAIL: $p/$name: ptrec decode --insn exited $rc:"; head -n 5 "$t.err"
			fails=$((fails + 1))
			continue
		fi
		ptgen_addresses "$t.out" >"$t.addr"
		if ! ptgen_same_insns "$p/$name: ptrec vs ground truth" "$d/truth.txt" "$t.addr"; then
			fails=$((fails + 1))
			continue
		fi
		# Events where they belong: [enabled] before the first instruction after TIP.PGE,
		# [disabled] after a syscall or before a faulting instruction; nothing else.
		if ! cmp -s "$d/truth-events.txt" "$t.out"; then
			echo "FAIL: $p/$name: event lines differ from the ground truth's"
			diff "$d/truth-events.txt" "$t.out" | head -n 8
			fails=$((fails + 1))
			continue
		fi
	done <<EOF2
$PTGEN_SETTINGS
EOF2
	# An internal buffer overflow halfway: exit status 1 (history lost), [overflow] where it
	# happened, the ground truth before it (up to the last packet; a basic block at most, here
	# under 256 instructions) and after it (from the FUP on).
	checks=$((checks + 1))
	ptgen_overflow_trace "$d"
	# shellcheck disable=SC2046
	"$PTREC_TOOL" decode --insn $(cat "$d/image.txt") "$d/overflow.pt" >"$d/overflow.out" 2>/dev/null
	rc=$?
	if [ $rc -ne 1 ]; then
		echo "FAIL: $p/overflow: ptrec decode --insn exited $rc, want 1 (decoded with gaps)"
		fails=$((fails + 1))
	elif ! ptgen_check_overflow "$p/overflow" "$d/overflow.out" "$d/truth.txt" \
		$((PTGEN_OVF_AT - 256)); then
		fails=$((fails + 1))
	fi
	echo "checked: $p ($(wc -l <"$d/truth.txt") instructions)"
done

echo "$checks checks, $fails failed"
[ $fails -eq 0 ]
