#!/bin/sh
# A crash test (see tests/crash/crash_common.sh): crasher call_null, a call through an unset
# callback.  The fault is at pc 0, and the registers are in the dump all the same: the report's
# faulting instruction is at address 0x0 (not "unknown"), and the unwound stack goes on from the
# return address the call left at SP into crash_call_null and its callers.
. "$top_srcdir/tests/common/qemu_user.sh"
skip_on_aarch64 "a call through a null pointer: the return address is in x30, which the report's unwinder does not use yet (x86-64 only so far)"
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run call_null SEGV 'handle_request > crash_call_null'
first_fault 0x0
sed -n '/^== Faulting instruction/,/^$/p' "$crash_report"
grep -q '^unknown (no registers' "$crash_report" && fail "the report says the dump has no registers"
sed -n '/^== Faulting instruction/,/^$/p' "$crash_report" | grep -q '^address:  0x0$' ||
	fail "the faulting instruction is not at address 0x0"
sed -n '/\[crashed\]/,/^$/p' "$crash_report" | sed -n '/^stack (unwound/,/^  (stops/p' >"$work/unwound.txt"
cat "$work/unwound.txt"
grep -q '^  #0   0x0  \[registers\]$' "$work/unwound.txt" || fail "frame #0 is not at pc 0x0"
grep -q '^  #1 .* crash_call_null+0x[0-9a-f]* .*\[return address at sp\]' "$work/unwound.txt" ||
	fail "frame #1 is not the return into crash_call_null (the return address at SP)"
grep -q ' handle_request+0x' "$work/unwound.txt" || fail "the unwound stack does not reach handle_request"
echo "PASS: a call through a null pointer has its faulting instruction and stack"
