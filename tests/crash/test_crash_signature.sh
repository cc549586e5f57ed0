#!/bin/sh
# Crash signatures (report/signature.h, doc/report-format.md), with real crashes: the same site
# gives the same signature in another run (another pid, every address moved by ASLR) and from
# another thread; other sites give others.  raise/abort/assert frames and libptrec's own frames
# (PTREC_ASSERT) are left out; a call through a null pointer is "@0x0" with its caller.  The
# signature is in the text header, the JSON and the crash line (crash_common.sh checks that the
# line's is the report's), and `ptrec list --group` counts the crashes by it, with or without
# the report beside the dump.
. "$top_srcdir/tests/crash/crash_common.sh"
skip_under_qemu_user "the cross C library (libc6-arm64-cross) has no symbols for its internal functions: abort()'s signature keeps 'libc.so.6+0x80990 | libc.so.6+0x341e4' (__pthread_kill_implementation, raise) before crash_abort; segv_null and its second run pass"

fault_pc() { sed -n 's/^address:  \(0x[0-9a-f]*\).*/\1/p' "$1"; }
expect() { # expect WHAT SIGNATURE: the last crash's signature
	[ "$crash_signature" = "$2" ] || fail "$1: signature '$crash_signature', expected '$2'"
}

crash_run segv_null SEGV 'handle_request > crash_segv_null'
expect "segv_null" crash_segv_null
pc1=$(fault_pc "$crash_report") dump1=$crash_dump
"$PTREC_TOOL" report --format json "$dump1" >"$work/r.json" || fail "ptrec report --format json failed"
grep -q '^{"format":"ptrec-report","version":1,"signature":"crash_segv_null",' "$work/r.json" ||
	fail "the JSON report has no top-level signature crash_segv_null"

crash_run segv_null SEGV 'handle_request > crash_segv_null'
expect "segv_null, second run" crash_segv_null
pc2=$(fault_pc "$crash_report")
# (qemu-user does not randomize the addresses of the programs it runs)
if [ "$(cat /proc/sys/kernel/randomize_va_space 2>/dev/null)" != 0 ] && ! under_qemu_user; then
	[ "$pc1" != "$pc2" ] || fail "ASLR is on but both runs faulted at $pc1"
fi

crash_run segv_null_thread SEGV 'segv_null_main > crash_segv_null'
expect "segv_null in another thread" crash_segv_null
sed -n 's/^pid: *\([0-9]*\)  thread: \([0-9]*\)$/\1 \2/p' "$crash_report" | {
	read -r p t; [ -n "$t" ] && [ "$p" != "$t" ]; } ||
	fail "the thread case did not crash in a thread other than main"

crash_run segv_wild SEGV 'handle_request > crash_segv_wild'
expect "segv_wild (another site)" crash_segv_wild
crash_run abort ABRT 'handle_request > crash_abort'
expect "abort (raise, abort and libc's assert left out)" crash_abort
crash_run ptrec_assert ABRT 'handle_request > crash_ptrec_assert' 2
expect "PTREC_ASSERT (libptrec's frames left out)" crash_ptrec_assert
crash_run call_null SEGV 'handle_request > crash_call_null'
expect "call_null" "@0x0 | crash_call_null"

# One line per program and signature: count, first and last seen, program, signature, example.
"$PTREC_TOOL" list --group "$PTREC_DIR" >"$work/group.txt" || fail "ptrec list --group failed"
echo "--- ptrec list --group"; cat "$work/group.txt"
[ "$(wc -l <"$work/group.txt")" -eq 5 ] || fail "expected 5 groups"
head -n 1 "$work/group.txt" | grep -q '^ *3  [0-9-]* [0-9:]*  [0-9-]* [0-9:]*  crasher  *crash_segv_null  (e\.g\. .*\.ptrec)$' ||
	fail "the first group is not the 3 crashes of crash_segv_null"
for s in crash_segv_wild crash_abort crash_ptrec_assert '@0x0 | crash_call_null'; do
	grep -qF "  crasher          $s  (e.g. " "$work/group.txt" || fail "no group for $s"
	[ "$(grep -F "  crasher          $s  (e.g. " "$work/group.txt" | awk '{print $1}')" = 1 ] ||
		fail "the group $s does not count 1"
done
# without its report, a dump's signature comes from the dump itself
rm "$dump1.txt"
"$PTREC_TOOL" list --group "$PTREC_DIR" >"$work/group2.txt" || fail "ptrec list --group failed"
head -n 1 "$work/group2.txt" | grep -q '^ *3  .*  crasher  *crash_segv_null  ' ||
	fail "without a report, the dump is not counted with its signature: $(cat "$work/group2.txt")"
echo "PASS: signatures are stable per site, differ between sites, and group crashes"
