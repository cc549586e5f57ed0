# tool_common.sh — shared steps of the `ptrec` command-line tests (sourced by
# tests/tool/test_cmd_*.sh): the tool under test, a scratch folder $tmp (removed at exit), the
# check counters with fail and finish, and the byte writer with a PSB and a small looping code
# image and trace that several tests decode.
set -u

tool=${PTREC_TOOL:-${top_builddir:-.}/libptrec/tool/ptrec}
[ -x "$tool" ] || { echo "ptrec tool not built: $tool"; exit 99; }
tmp=$(mktemp -d "${top_builddir:-.}/tests/$(basename "$0" .sh).XXXXXX") && tmp=$(cd "$tmp" && pwd) ||
	exit 99
trap 'rm -rf "$tmp"' EXIT HUP INT TERM
fails=0 checks=0

fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}
# finish: the totals, and the test's exit status.
finish() {
	echo "$checks checks, $fails failed"
	[ "$fails" -eq 0 ]
}

# bytes HEX... : writes the bytes to stdout (octal escapes, as POSIX printf requires).
bytes() {
	for b in "$@"; do
		# shellcheck disable=SC2059
		printf "\\$(printf '%03o' "0x$b")"
	done
}
PSB="02 82 02 82 02 82 02 82 02 82 02 82 02 82 02 82"

# loop_trace: $tmp/code.bin, to map at 0x1000: xor eax,eax; inc eax; cmp eax,3; jne 0x1002;
# jmp rax; and $tmp/loop.pt: PSB+ (MODE.Exec 64-bit, FUP 0x1000), TNT taken taken not-taken,
# TIP.PGD without IP.
loop_trace() {
	bytes 31 c0 ff c0 83 f8 03 75 f9 ff e0 >"$tmp/code.bin"
	bytes $PSB 99 01 dd 00 10 00 00 00 00 00 00 02 23 1c 01 >"$tmp/loop.pt"
}
