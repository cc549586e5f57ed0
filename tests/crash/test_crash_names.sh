#!/bin/sh
# Planted names block nothing: a leftover "<core>.ptrec.txt" moves the dump and its report to
# the next place, together; in a world-writable directory names carry 8 random hex digits.
. "$top_srcdir/tests/crash/hardening_common.sh"
mkdir -m 1777 "$work/shared"
hrun segv PTREC_DIR="$work/shared"
[ "$status" -eq 139 ] || fail "exit status $status, expected 139"
dump=$(the_dump "$work/shared") || exit 1
case "${dump##*/}" in
ptrec.hardener.$pid.[0-9]*.[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f].ptrec) ;;
*) fail "no random suffix in a world-writable directory: $dump" ;;
esac
[ -f "$dump.txt" ] || fail "no report next to $dump"

unset PTREC_DIR
core=$(CRASHER=hardener expected_glob 0 11)
case "$core" in
*'*'*|"$work"/ptrec.*) echo "SKIP: core_pattern ($(cat /proc/sys/kernel/core_pattern)) does not name one fixed file"; exit 77 ;;
esac
echo planted >"$core.txt"
hrun segv
[ "$status" -eq 139 ] || fail "exit status $status, expected 139"
[ "$(cat "$core.txt")" = planted ] || fail "the planted $core.txt was changed"
[ -e "$core" ] && fail "the dump stayed at $core, whose report name is taken"
dump=$(the_dump "$work") || exit 1
[ -f "$dump.txt" ] || fail "no report next to $dump"
line=$(ptrec_line)
case "$line" in *": dump $dump, report $dump.txt; signature: "?*) ;; *) fail "stderr line: $line" ;; esac
echo "PASS: planted names"
