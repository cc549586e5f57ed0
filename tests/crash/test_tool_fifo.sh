#!/bin/sh
# A FIFO named as input never hangs a subcommand: it is refused at once as not a regular file.
# A large file that is not a dump is refused after reading its header only.
set -u
fail() { echo "FAIL: $*"; exit 1; }
work=$(mktemp -d "$top_builddir/tests/fifo.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT
mkfifo "$work/f" || { echo "SKIP: mkfifo failed"; exit 77; }
for cmd in report packets decode; do
	timeout 20 "$PTREC_TOOL" $cmd "$work/f" >"$work/out" 2>&1
	st=$?
	cat "$work/out"
	[ $st -ne 124 ] || fail "ptrec $cmd hung on a FIFO"
	[ $st -eq 3 ] || fail "ptrec $cmd: exit status $st, expected 3"
	grep -q "$work/f: not a regular file (a FIFO)" "$work/out" || fail "ptrec $cmd does not say it is a FIFO"
done
truncate -s 1G "$work/big" || { echo "SKIP: cannot make a sparse file"; exit 77; }
if [ -x /usr/bin/time ]; then
	/usr/bin/time -f 'maxrss %M' -o "$work/time" "$PTREC_TOOL" report "$work/big" >"$work/out" 2>&1
	st=$?
else
	echo "note: /usr/bin/time not found; memory use not measured"
	"$PTREC_TOOL" report "$work/big" >"$work/out" 2>&1
	st=$?
fi
cat "$work/out" "$work/time" 2>/dev/null
[ $st -eq 3 ] || fail "exit status $st for a 1 GB non-dump, expected 3"
grep -q "$work/big: offset 0x0: bad magic: not a ptrec dump" "$work/out" || fail "no bad-magic message"
if [ -s "$work/time" ]; then
	rss=$(sed -n 's/^maxrss //p' "$work/time")
	[ "$rss" -lt 200000 ] || fail "reading a 1 GB non-dump used $rss KiB"
fi
echo "PASS: FIFOs and large non-dumps"
