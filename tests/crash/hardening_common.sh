# hardening_common.sh — shared steps of the hardening tests (issue 16, issue 10 part 3), sourced
# after crash_common.sh's setup: runs tests/crash/hardener, finds what it left.
. "$top_srcdir/tests/crash/crash_common.sh"
hardener="$top_builddir/tests/crash/hardener"

# hrun CASE [ENV=VALUE...]: runs `hardener CASE` in $work with the given environment; sets pid
# and status, leaves stdout and stderr in $work/stdout and $work/stderr.
hrun() {
	local c=$1
	shift
	(cd "$work" && exec env "$@" "$hardener" "$c") >"$work/stdout" 2>"$work/stderr" &
	pid=$!
	wait $pid
	status=$?
	echo "--- hardener $c (pid $pid, status $status)"
	cat "$work/stderr"
}

# as_nobody_setup WHAT: SKIPs unless root with setpriv and a user nobody; sets uid and gid of
# nobody and makes a scratch directory (mode 755, removed at exit) in $scratch.
as_nobody_setup() {
	[ "$(id -u)" = 0 ] || { echo "SKIP: $1 needs root"; exit 77; }
	command -v setpriv >/dev/null 2>&1 || { echo "SKIP: setpriv not found (to run as nobody)"; exit 77; }
	uid=$(id -u nobody 2>/dev/null) || { echo "SKIP: no user nobody"; exit 77; }
	gid=$(id -g nobody)
	scratch=$(mktemp -d /tmp/ptrec-nobody.XXXXXX) || exit 99
	trap 'rm -rf "$work" "$scratch"' EXIT
	chmod 755 "$scratch"
}

# as_nobody DIR PROGRAM CASE: runs `PROGRAM CASE` in DIR as nobody (after as_nobody_setup);
# sets pid and status, leaves stdout and stderr in $work/stdout and $work/stderr.
as_nobody() {
	(cd "$1" && exec setpriv --reuid="$uid" --regid="$gid" --clear-groups "$2" "$3") \
		>"$work/stdout" 2>"$work/stderr" &
	pid=$!
	wait $pid
	status=$?
	echo "--- $2 $3 as nobody (pid $pid, status $status)"
	cat "$work/stderr"
}

# ptrec_line: the one "ptrec: " line of $work/stderr (fails unless there is exactly one).
ptrec_line() {
	[ "$(grep -c '^ptrec: ' "$work/stderr")" -eq 1 ] || fail "expected exactly one ptrec line on stderr"
	grep '^ptrec: ' "$work/stderr"
}

# the_dump DIR: the one dump of $pid in DIR (ptrec.COMM.PID.TIME...ptrec).
the_dump() {
	set -- "$1"/ptrec.*.$pid.*.ptrec
	[ $# -eq 1 ] && [ -f "$1" ] || fail "no single dump of pid $pid in $(dirname "$1")"
	echo "$1"
}
