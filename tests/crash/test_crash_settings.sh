#!/bin/sh
# Invalid PTREC_* values keep their defaults and are said once on stderr and in ptrec_status.
. "$top_srcdir/tests/crash/hardening_common.sh"
hrun status PTREC_RING_SIZE=3K PTREC_BACKEND=bogus PTREC_REPORT_TIMEOUT_MS=50
[ "$status" -eq 0 ] || fail "exit status $status"
[ "$(grep -c '^ptrec: invalid settings ignored: ' "$work/stderr")" -eq 1 ] ||
	fail "expected one stderr line about invalid settings"
for v in PTREC_RING_SIZE=3K PTREC_BACKEND=bogus PTREC_REPORT_TIMEOUT_MS=50; do
	grep -q "ignored: .*$v: " "$work/stderr" || fail "stderr does not name $v"
	grep -q "^settings_problems .*$v: .*default kept" "$work/stdout" || fail "ptrec_status does not name $v"
done
grep -q '^ring_size 65536$' "$work/stdout" || fail "the default ring size was not kept"
hrun status
grep -q 'invalid settings' "$work/stderr" && fail "valid settings reported as invalid"
grep -q '^settings_problems $' "$work/stdout" || fail "ptrec_status reports problems with valid settings"
echo "PASS: invalid settings are said"
