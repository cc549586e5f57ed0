#!/bin/sh
# A crash test (see tests/crash/crash_common.sh): crasher abort.
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run abort ABRT 'handle_request > crash_abort'
# abort() sends SIGABRT to its own thread (tgkill): the report names the process itself as the
# sender, and gives no fault address
sed -n '/^== Process/,/^$/p' "$crash_report"
grep -q "^sent by:  pid $crash_pid, uid $(id -u) (this process)\$" "$crash_report" ||
	fail "the report does not name the process $crash_pid as SIGABRT's sender"
! grep -q '^fault address:' "$crash_report" || fail "a fault address for abort()"
echo "PASS: abort"
