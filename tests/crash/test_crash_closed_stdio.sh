#!/bin/sh
# A daemon that closed descriptors 0, 1 and 2 after ptrec_init crashes: the dump and the report
# take those numbers, and the report tool still gets the report as its stdout and stderr, so
# the report is complete and names the crashing function.
. "$top_srcdir/tests/crash/hardening_common.sh"
hrun closed_stdio
[ "$status" -eq 139 ] || fail "exit status $status, expected 139 (SIGSEGV)"
dump=$(the_dump "$PTREC_DIR") || exit 1
"$checker" "$dump" >"$work/check.txt" || fail "malformed dump"
grep -q "complete 1" "$work/check.txt" || fail "dump not complete"
cat "$dump.txt"
grep -q INCOMPLETE "$dump.txt" && fail "the report is incomplete"
grep -q crash_here "$dump.txt" || fail "the report does not name crash_here"
echo "PASS: closed stdio"
