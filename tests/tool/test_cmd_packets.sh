#!/bin/sh
# test_cmd_packets.sh — `ptrec packets`: the dump lines, --sync on a ring cut mid-packet, errors
# with resync at the next PSB, a truncated tail, and the exit codes of libptrec/tool.h
# (0 clean, 1 gaps/errors, 2 usage, 3 unreadable file).  Expected lines are written from the
# SDM packet layouts and doc/ptrec-packets.md.
. "$top_srcdir/tests/tool/tool_common.sh"

# run NAME EXPECTED_EXIT ARGS... : runs the tool, keeps stdout in $tmp/NAME.out, stderr in
# $tmp/NAME.err, and checks the exit status.
run() {
	name=$1 want=$2
	shift 2
	checks=$((checks + 1))
	"$tool" packets "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
	got=$?
	[ "$got" -eq "$want" ] || fail "$name: exit $got, expected $want"
}

# expect NAME : compares $tmp/NAME.out with the lines on stdin.
expect() {
	checks=$((checks + 1))
	cat >"$tmp/$1.want"
	if ! cmp -s "$tmp/$1.want" "$tmp/$1.out"; then
		fail "$1: output differs"
		diff -u "$tmp/$1.want" "$tmp/$1.out"
	fi
}

# stderr_has NAME TEXT : stderr of NAME contains TEXT.
stderr_has() {
	checks=$((checks + 1))
	grep -F -q -- "$2" "$tmp/$1.err" || { fail "$1: stderr lacks '$2'"; cat "$tmp/$1.err"; }
}

# 1. A clean trace: PSB+, TNT, compressed TIPs, timing packets.  Every payload below is derived
#    by hand from the SDM layouts (see the comments).
{
	bytes $PSB
	bytes 19 be a9 e5 4d 5d 01 00        # TSC 0x15d4de5a9be
	bytes 02 03 2c 00                    # CBR 0x2c
	bytes 99 01                          # MODE.Exec CS.L
	bytes 7d 00 10 40 00 00 00           # FUP IPBytes 3: 0x401000
	bytes 02 23                          # PSBEND
	bytes 1c                             # TNT 100 (stop) 1 1 0: taken, taken, not taken
	bytes 4d 78 56 34 12                 # TIP IPBytes 2: 0x12345678
	bytes 59 a5                          # MTC 0xa5
	bytes a7 23 02                       # CYC 0x1234
	bytes 02 a3 05 00 00 00 00 00        # long TNT: not taken, taken
	bytes 01                             # TIP.PGD suppressed
} >"$tmp/clean.pt"
run clean 0 "$tmp/clean.pt"
expect clean <<'EOF'
00000000  psb
00000010  tsc        0x15d4de5a9be
00000018  cbr        0x2c
0000001c  mode.exec  cs.l
0000001e  fup        3: 0x401000
00000025  psbend
00000027  tnt.8      !!.
00000028  tip        2: 0x12345678
0000002d  mtc        0xa5
0000002f  cyc        0x1234
00000032  tnt.64     .!
0000003a  tip.pgd    0: suppressed
EOF
[ -s "$tmp/clean.err" ] && fail "clean: unexpected stderr: $(cat "$tmp/clean.err")"

# 2. --lastip adds the decompressed IP: FUP 0x401000 (sign-extended 6 bytes), then a 2-byte
#    TIP keeps the upper bits of the last IP.
{
	bytes $PSB
	bytes 7d 00 10 40 00 00 00           # FUP IPBytes 3: 0x401000
	bytes 02 23
	bytes 2d 34 12                       # TIP IPBytes 1: low 16 bits 0x1234
	bytes 6d 00 00 00 81 ff ff           # TIP IPBytes 3: bit 47 set -> 0xffffffff81000000
} >"$tmp/lastip.pt"
run lastip 0 --lastip "$tmp/lastip.pt"
expect lastip <<'EOF'
00000000  psb
00000010  fup        3: 0x401000 (ip 0x0000000000401000)
00000017  psbend
00000019  tip        1: 0x1234 (ip 0x0000000000401234)
0000001c  tip        3: 0xffff81000000 (ip 0xffffffff81000000)
EOF

# 3. A ring cut mid-packet: the tail of a TIP and of a PSB, never-written zeros, then PSB+.
#    --sync skips to the first whole PSB and says how much it skipped.
{
	bytes 40 00 00 82 02 82 00 00 00 00  # 10 bytes of debris
	bytes $PSB
	bytes 99 02                          # MODE.Exec CS.D
	bytes 02 23
	bytes 00 00 00 00                    # PAD x4 (never written)
} >"$tmp/ring.pt"
run ring_sync 0 --sync "$tmp/ring.pt"
expect ring_sync <<'EOF'
00000000  [sync] skipped 10 bytes to the first psb at 0xa
0000000a  psb
0000001a  mode.exec  cs.d
0000001c  psbend
0000001e  pad        4 bytes
EOF

# 4. Without --sync the same debris is decoded as it comes: 0x40 is a 5-bit TNT, 00 00 are
#    PAD, then 82 is a 6-bit TNT (newest taken) and 02 82 00 is a PSB broken at its third byte: an error
#    line, a gap line to the PSB, and exit 1.
run ring_nosync 1 "$tmp/ring.pt"
expect ring_nosync <<'EOF'
00000000  tnt.8      .....
00000001  pad        2 bytes
00000003  tnt.8      .....!
00000004  [error] not a packet: 02 82 00 00 ...
00000004  [gap] skipped 6 bytes to the psb at 0xa
0000000a  psb
0000001a  mode.exec  cs.d
0000001c  psbend
0000001e  pad        4 bytes
EOF
stderr_has ring_nosync "ptrec: $tmp/ring.pt: offset 0x4: not a valid PT packet (02 82 00 00 ...)"

# 5. An undecodable byte in the middle (0x05 is a reserved header) resyncs at the next PSB;
#    a reserved FUP IPBytes value after it, with no PSB left, skips to the end.
{
	bytes $PSB
	bytes 02 23
	bytes 05 1c 1c                       # reserved header, then bytes lost in the gap
	bytes $PSB
	bytes 06                             # TNT: one taken bit
	bytes bd 01 02                       # FUP with IPBytes 101 (reserved)
} >"$tmp/bad.pt"
run bad 1 "$tmp/bad.pt"
expect bad <<'EOF'
00000000  psb
00000010  psbend
00000012  [error] not a packet: 05 1c 1c 02 ...
00000012  [gap] skipped 3 bytes to the psb at 0x15
00000015  psb
00000025  tnt.8      !
00000026  [error] not a packet: bd 01 02
00000026  [gap] skipped 3 bytes to the end of the trace (no psb)
EOF
stderr_has bad "ptrec: $tmp/bad.pt: offset 0x12: not a valid PT packet"
stderr_has bad "ptrec: $tmp/bad.pt: offset 0x26: not a valid PT packet"

# 6. The ring ends inside a TSC and inside a PSB: truncated, not an error (exit 0).
{
	bytes $PSB
	bytes 02 23
	bytes 19 01 02 03                    # TSC needs 8 bytes
} >"$tmp/trunc.pt"
run trunc 0 "$tmp/trunc.pt"
expect trunc <<'EOF'
00000000  psb
00000010  psbend
00000012  [truncated] 4 bytes at the end of the trace: 19 01 02 03
EOF
{ bytes $PSB; bytes 02 82 02 82 02 82; } >"$tmp/trunc_psb.pt"
run trunc_psb 0 "$tmp/trunc_psb.pt"
expect trunc_psb <<'EOF'
00000000  psb
00000010  [truncated] 6 bytes at the end of the trace: 02 82 02 82 ...
EOF

# 7. --sync on a ring that holds no PSB at all (only zeros): nothing decodable, exit 1.
bytes 00 00 00 00 00 00 00 00 >"$tmp/zeros.pt"
run nopsb 1 --sync "$tmp/zeros.pt"
expect nopsb <<'EOF'
00000000  [sync] no psb in 8 bytes
EOF
stderr_has nopsb "ptrec: $tmp/zeros.pt: no PSB in 8 bytes"

# 8. Block packets keep their context across lines: BBP (4-byte items), BIP 0c = ID 1, BEP.IP;
#    after the block the same byte 0c is a TNT again (taken, not taken).
{
	bytes $PSB
	bytes 02 63 80 0c 78 56 34 12 02 b3 0c
} >"$tmp/block.pt"
run block 0 "$tmp/block.pt"
expect block <<'EOF'
00000000  psb
00000010  bbp        type 0x00, 4-byte items
00000013  bip        id 0x01: 0x12345678
00000018  bep        ip
0000001a  tnt.8      !.
EOF

# 9. An empty trace is clean and prints nothing.
: >"$tmp/empty.pt"
run empty 0 "$tmp/empty.pt"
expect empty </dev/null

# 10. Unreadable input: exit 3 and a message with the file name.
run missing 3 "$tmp/no-such-file.pt"
stderr_has missing "ptrec: $tmp/no-such-file.pt: cannot open"
run directory 3 "$tmp"
stderr_has directory "ptrec: $tmp: not a regular file"

# 11. Bad usage: exit 2.
run noarg 2
run badopt 2 --frobnicate "$tmp/clean.pt"
run twofiles 2 "$tmp/clean.pt" "$tmp/clean.pt"
run help 0 --help
checks=$((checks + 1))
grep -q '^usage: ptrec packets' "$tmp/help.out" || fail "help: no usage line"

finish
