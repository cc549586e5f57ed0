#!/bin/sh
# A process that is not dumpable (prctl PR_SET_DUMPABLE 0, as OpenSSH and gpg-agent do) gets no
# dump, no report and no minidump (PTREC_MINIDUMP=1) anywhere, like the kernel writes no core
# for it: none of its memory, arguments, auxiliary vector or status; the stderr line says why.
. "$top_srcdir/tests/crash/hardening_common.sh"
hrun nondumpable PTREC_MINIDUMP=1
[ "$status" -eq 139 ] || fail "exit status $status, expected 139 (SIGSEGV)"
line=$(ptrec_line)
case "$line" in
"ptrec: SIGSEGV in pid $pid thread "*": no dump written (the process is not dumpable"*) ;;
*) fail "stderr line does not say the process is not dumpable: $line" ;;
esac
[ -z "$(ls -A "$PTREC_DIR")" ] || fail "files written for a non-dumpable process: $(ls "$PTREC_DIR")"
for d in "$work" /var/tmp /tmp; do
	ls "$d" | grep -q "ptrec\.hardener\.$pid\." && fail "a file of pid $pid in $d"
done
ls "$work" | grep -q '^core' && fail "a file next to the core in $work"
# The same program, dumpable again, is dumped.
hrun redumpable
[ "$status" -eq 139 ] || fail "exit status $status, expected 139"
dump=$(the_dump "$PTREC_DIR") || exit 1
"$checker" "$dump" >/dev/null || fail "malformed dump"
echo "PASS: non-dumpable processes leave nothing"
