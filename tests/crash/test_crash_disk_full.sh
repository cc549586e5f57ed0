#!/bin/sh
# Disk full: a dump cut short by ENOSPC is removed with its report, and the next place is used.
. "$top_srcdir/tests/crash/hardening_common.sh"
mkdir "$work/full"
mount -t tmpfs -o size=16k,mode=0755 ptrec-full "$work/full" 2>/dev/null ||
	{ echo "SKIP: cannot mount a small tmpfs (needs root and mount permission)"; exit 77; }
trap 'umount "$work/full"; rm -rf "$work"' EXIT
hrun segv PTREC_DIR="$work/full"
[ "$status" -eq 139 ] || fail "exit status $status, expected 139"
[ -z "$(ls -A "$work/full")" ] || fail "partial files left on the full disk: $(ls -l "$work/full")"
line=$(ptrec_line)
dump=$(printf '%s\n' "$line" | sed -n 's/^.*: dump \([^,;]*\)[,;].*$/\1/p')
[ -n "$dump" ] && [ -f "$dump" ] || fail "no dump in the next place: $line"
"$checker" "$dump" >"$work/check.txt" || fail "malformed dump"
grep -q "complete 1" "$work/check.txt" || fail "the dump in the next place is not complete"
echo "PASS: disk full falls back to the next place"
