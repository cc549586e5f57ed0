#!/bin/sh
# The report child started at crash time sees only descriptors 0, 1 and 2 (never the
# application's, opened without O_CLOEXEC); thread names are escaped in the stderr line and in
# the text report; PTREC_REPORT_TIMEOUT_MS=0 runs no report tool.
. "$top_srcdir/tests/crash/hardening_common.sh"
ESC=$(printf '\033')

hrun secret_fd PTREC_TOOL="$hardener"
[ "$status" -eq 139 ] || fail "exit status $status, expected 139"
dump=$(the_dump "$PTREC_DIR") || exit 1
[ -f "$dump.txt" ] || fail "the stand-in report tool wrote nothing"
fds=$(sed -n 's/^fd //p' "$dump.txt" | sort -n | tr '\n' ' ')
[ "$fds" = "0 1 2 " ] || fail "the report child had descriptors '$fds', expected '0 1 2 '"
rm -f "$PTREC_DIR"/*

hrun evil_name
[ "$status" -eq 139 ] || fail "exit status $status, expected 139"
line=$(ptrec_line)
grep -q "$ESC" "$work/stderr" && fail "a raw escape byte reached stderr"
case "$line" in *"(ev\\x0ail\\x1b[31m)"*) ;; *) fail "the thread name is not escaped: $line" ;; esac
dump=$(the_dump "$PTREC_DIR") || exit 1
[ -f "$dump.txt" ] || fail "no report"
grep -q "$ESC" "$dump.txt" && fail "a raw escape byte in the report"
grep -q 'ev\\x0ail\\x1b\[31m' "$dump.txt" || fail "the report does not show the escaped name"
grep -q '^il' "$dump.txt" && fail "the thread name split a line of the report"
rm -f "$PTREC_DIR"/*

hrun segv PTREC_REPORT_TIMEOUT_MS=0
[ "$status" -eq 139 ] || fail "exit status $status, expected 139"
dump=$(the_dump "$PTREC_DIR") || exit 1
[ -e "$dump.txt" ] && fail "PTREC_REPORT_TIMEOUT_MS=0 left $dump.txt"
line=$(ptrec_line)
case "$line" in *": dump $dump; no report (PTREC_REPORT_TIMEOUT_MS=0; decode later: ptrec report $dump)") ;;
*) fail "stderr line does not say the report was off: $line" ;; esac
echo "PASS: report child"
