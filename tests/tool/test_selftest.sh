#!/bin/sh
# test_selftest.sh — `ptrec selftest` on this machine: the instrumented backend must PASS (its
# decoded calls and returns match the workload's known sequence); intel_pt and intel_bts must
# PASS where `ptrec info` says they are usable and SKIP with a reason where it says they are not
# (on these KVM guests: SKIP).  --json says the same; the exit status is 0.  And the check can
# fail: with the loop run 3 times instead of 4 the instrumented backend FAILs at the first
# missing call, and the exit status is 1.
set -u
tool=${PTREC_TOOL:?PTREC_TOOL not set}
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

out=$("$tool" selftest); rc=$?
echo "$out"
[ $rc -eq 0 ] || fail "exit status $rc, expected 0"
[ "$(echo "$out" | wc -l)" -eq 3 ] || fail "expected one line per backend"
echo "$out" | grep -q '^instrumented  PASS  20 workload calls and returns as expected' ||
	fail "instrumented did not PASS"

info=$("$tool" info --json)
for b in intel_pt intel_bts; do
	usable=$(echo "$info" | sed -n "/\"$b\": {/,/}/p" | sed -n 's/.*"usable": \([a-z]*\).*/\1/p' | head -n 1)
	line=$(echo "$out" | grep "^$b ")
	case "$usable" in
	true)  echo "$line" | grep -q "^$b *PASS  " || fail "$b is usable here but did not PASS: $line" ;;
	false) echo "$line" | grep -Eq "^$b *SKIP  .{10,}" || fail "$b is not usable here but did not SKIP with a reason: $line" ;;
	*)     fail "ptrec info --json does not say whether $b is usable" ;;
	esac
done

json=$("$tool" selftest --json); rc=$?
echo "$json"
[ $rc -eq 0 ] || fail "--json: exit status $rc"
echo "$json" | grep -q '{"backend":"instrumented","verdict":"PASS","detail":"20 workload calls' ||
	fail "--json: instrumented is not PASS"
echo "$json" | grep -q '"ok":true}$' || fail "--json: not ok"

bad=$("$tool" selftest --trips 3); rc=$?
echo "$bad"
[ $rc -eq 1 ] || fail "--trips 3: exit status $rc, expected 1"
echo "$bad" | grep -q '^instrumented  FAIL  event 7: expected "enter wl_odd", decoded "enter wl_ind_c"' ||
	fail "--trips 3: instrumented did not FAIL at the missing 4th trip"
dir=$(echo "$bad" | sed -n 's/.*dump kept: \(.*\)\/[^/]*$/\1/p' | head -n 1)
[ -n "$dir" ] && rm -rf "$dir"

[ $fails -eq 0 ] && echo "PASS: ptrec selftest" || exit 1
