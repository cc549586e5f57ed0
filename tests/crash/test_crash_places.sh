#!/bin/sh
# Where reports go on a server under systemd: as an unprivileged user whose cwd is not writable
# (root's 0755 directory), with PTREC_DIR unset and $STATE_DIRECTORY set, the dump goes to the
# state directory; one line naming it reaches the system log (a test syslog socket) and
# stderr; `ptrec info` says the report would go there and why; `ptrec list` finds it.
. "$top_srcdir/tests/crash/hardening_common.sh"
as_nobody_setup "running as nobody from a directory nobody cannot write"
mkdir -m 755 "$scratch/cwd" "$scratch/bin"
mkdir -m 700 "$scratch/state"
chown "$uid:$gid" "$scratch/state"
mkdir -m 777 "$scratch/log"
cp "$hardener" "$PTREC_TOOL" "$scratch/bin/"
# as_nobody CMD...: execs CMD as nobody in the unwritable cwd (call it in a subshell).
as_nobody() {
	cd "$scratch/cwd" && exec env -u PTREC_DIR HOME=/nonexistent STATE_DIRECTORY="$scratch/state" \
		PTREC_SYSLOG="$scratch/log/sock" PTREC_TOOL="$scratch/bin/ptrec" \
		setpriv --reuid="$uid" --regid="$gid" --clear-groups "$@"
}

(as_nobody "$scratch/bin/hardener" syslog-sink "$scratch/log/sock" "$scratch/log/line" 60) &
sink=$!
for i in 1 2 3 4 5 6 7 8 9 10; do [ -S "$scratch/log/sock" ] && break; sleep 0.2; done
[ -S "$scratch/log/sock" ] || fail "the test syslog socket did not appear"

(as_nobody "$scratch/bin/ptrec" info) >"$work/info" 2>&1 || fail "ptrec info failed: $(cat "$work/info")"
grep "report_location" "$work/info"
grep -q "for this user: $scratch/state (STATE_DIRECTORY)" "$work/info" ||
	fail "ptrec info does not say the report goes to STATE_DIRECTORY"
# The place "cwd" under core.places: its path and why it is skipped, each on its line.
sed -n '/^    cwd /,/^      why /p' "$work/info" >"$work/cwd"
grep -q "^      path  *$scratch/cwd\$" "$work/cwd" && grep -q "^      usable  *no\$" "$work/cwd" &&
	grep -q "^      why  *not usable: Permission denied\$" "$work/cwd" ||
	fail "ptrec info does not say why the cwd is skipped: $(cat "$work/cwd")"

(as_nobody "$scratch/bin/hardener" segv) >"$work/stdout" 2>"$work/stderr" &
pid=$!
wait $pid
status=$?
cat "$work/stderr"
[ "$status" -eq 139 ] || fail "exit status $status, expected 139"
[ -z "$(ls -A "$scratch/cwd")" ] || fail "files in the unwritable cwd"
dump=$(the_dump "$scratch/state") || exit 1
line=$(ptrec_line)
case "$line" in "ptrec: SIGSEGV in pid $pid thread "*": dump $dump"*) ;; *) fail "stderr line: $line" ;; esac
wait $sink || fail "no syslog datagram arrived"
logged=$(cat "$scratch/log/line")
echo "syslog: $logged"
[ "$logged" = "<10>ptrec[$pid]: ${line#ptrec: }" ] || fail "the syslog line is not the stderr line: $logged"

(as_nobody "$scratch/bin/ptrec" list) >"$work/list" 2>&1 || fail "ptrec list failed"
cat "$work/list"
grep -q "SIGSEGV  hardener *$pid *$dump" "$work/list" || fail "ptrec list does not show the dump"
echo "PASS: places under a systemd-like environment"
