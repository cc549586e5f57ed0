#!/bin/sh
# test_cmd_decode.sh — `ptrec decode` end to end: a raw code file and traces built with printf;
# the --insn listing, the branch listing, --last, and the exit codes of libptrec/tool.h
# (0 clean, 1 gaps, 2 usage, 3 unreadable input).  Expected lines are written from the SDM
# semantics and doc/ptrec-decode.md.
. "$top_srcdir/tests/tool/tool_common.sh"

# run NAME EXPECTED_EXIT ARGS...
run() {
	name=$1 want=$2
	shift 2
	checks=$((checks + 1))
	"$tool" decode "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
	got=$?
	[ "$got" -eq "$want" ] || fail "$name: exit $got, expected $want ($(cat "$tmp/$name.err"))"
}
# same NAME : compares $tmp/NAME.out with $tmp/NAME.want
same() {
	checks=$((checks + 1))
	cmp -s "$tmp/$1.out" "$tmp/$1.want" || {
		fail "$1: output differs"
		diff "$tmp/$1.want" "$tmp/$1.out" | head -20
	}
}

loop_trace

run insn 0 --raw "$tmp/code.bin:0x1000" --insn "$tmp/loop.pt"
cat >"$tmp/insn.want" <<'END'
0000000000001000
0000000000001002
0000000000001004
0000000000001007
0000000000001002
0000000000001004
0000000000001007
0000000000001002
0000000000001004
0000000000001007
0000000000001009
[disabled]
END
same insn

run branches 0 --raw "$tmp/code.bin:0x1000" "$tmp/loop.pt"
cat >"$tmp/branches.want" <<'END'
jcc       0000000000001007 -> 0000000000001002 taken
jcc       0000000000001007 -> 0000000000001002 taken
jcc       0000000000001007 -> 0000000000001009 not-taken
disable   0000000000001009 -> 0000000000000000
END
same branches

run last 0 --raw "$tmp/code.bin:0x1000" --last 2 "$tmp/loop.pt"
tail -n 2 "$tmp/branches.want" >"$tmp/last.want"
same last

# Event trace: a page fault at 0x1002 (EVD CR2 0x40, CFE INTR vector 14, then its FUP 0x1002
# and TIP.PGD: "Page faults additionally include the page fault address", SDM Event Trace):
# the event on its own line, where it happened, before the disable (doc/ptrec-decode.md).
bytes $PSB 99 01 dd 00 10 00 00 00 00 00 00 02 23 02 53 00 40 00 00 00 00 00 00 00 \
	02 13 01 0e 3d 02 10 01 >"$tmp/event.pt"
run event 0 --raw "$tmp/code.bin:0x1000" --insn "$tmp/event.pt"
cat >"$tmp/event.want" <<'END'
0000000000001000
[interrupt 14, cr2 0x40]
[disabled]
END
same event
run eventbr 0 --raw "$tmp/code.bin:0x1000" "$tmp/event.pt"
cat >"$tmp/eventbr.want" <<'END'
event     0000000000001002 interrupt 14, cr2 0x40
disable   0000000000001002 -> 0000000000000000
END
same eventbr
run eventlast 0 --raw "$tmp/code.bin:0x1000" --last 2 "$tmp/event.pt"
cp "$tmp/eventbr.want" "$tmp/eventlast.want"
same eventlast

# FROM-TO notation: the same code inside a larger file at offset 4.
{ bytes 90 90 90 90; cat "$tmp/code.bin"; bytes 90 90; } >"$tmp/code2.bin"
run fromto 0 --raw "$tmp/code2.bin:4-15:0x1000" --insn "$tmp/loop.pt"
cp "$tmp/insn.want" "$tmp/fromto.want"
same fromto

# Errata selection parses.
run cpu 0 --cpu 6/0x4e/3 --raw "$tmp/code.bin:0x1000" "$tmp/loop.pt"

# A TIP to an address outside the image, and a TNT after it that the flow must reach there:
# a gap, exit 1.
bytes $PSB 99 01 dd 09 10 00 00 00 00 00 00 02 23 cd 00 00 ad de 00 00 00 00 06 >"$tmp/gap.pt"
run gap 1 --raw "$tmp/code.bin:0x1000" --insn "$tmp/gap.pt"
checks=$((checks + 1))
grep -q '^\[gap: no code image at IP' "$tmp/gap.out" || fail "gap: no [gap: ...] line"
checks=$((checks + 1))
[ "$(head -n 1 "$tmp/gap.out")" = 0000000000001009 ] || fail "gap: first line"

# No PSB at all: a gap, exit 1.
bytes 1c 01 >"$tmp/nosync.pt"
run nosync 1 --raw "$tmp/code.bin:0x1000" --insn "$tmp/nosync.pt"
checks=$((checks + 1))
grep -q '^\[gap: ' "$tmp/nosync.out" || fail "nosync: no gap line"

# Unreadable files: exit 3 with the file name.
run missing 3 --raw "$tmp/code.bin:0x1000" "$tmp/missing.pt"
checks=$((checks + 1))
grep -q "missing.pt" "$tmp/missing.err" || fail "missing: file not named"
run missraw 3 --raw "$tmp/nope.bin:0x1000" "$tmp/loop.pt"
checks=$((checks + 1))
grep -q "nope.bin" "$tmp/missraw.err" || fail "missraw: file not named"
bytes 7f 45 4c 46 02 01 01 00 >"$tmp/bad.elf"
run badelf 3 --elf "$tmp/bad.elf" "$tmp/loop.pt"
checks=$((checks + 1))
grep -q "bad.elf: offset 0x0" "$tmp/badelf.err" || fail "badelf: file/offset not named"

# Usage errors: exit 2.
run noarg 2
run badcpu 2 --cpu six "$tmp/loop.pt"
run badlast 2 --last 0 "$tmp/loop.pt"
run badraw 2 --raw "$tmp/code.bin" "$tmp/loop.pt"
run both 2 --insn --last 3 "$tmp/loop.pt"

finish
