#!/bin/sh
# A real caching proxy, run the two ways its operators run it: Debian's Squid (a test-only peer
# configure finds; .ci/run installs it) unmodified under `ptrec run`.
# - As its systemd unit runs it (--foreground -YC), as an unprivileged user (as root the test
#   runs it as proxy or nobody): a master that forks and execs a kid (squid-1) and restarts it
#   when it dies.  The kid, killed by SIGSEGV (-C: Squid leaves fatal signals to the kernel),
#   leaves exactly one dump and report, of itself, with gdb's stack through Squid's event loop;
#   the master starts a new kid, and stops with status 0 on SIGTERM.
# - As containers run it (-N: no master), started as root with cache_effective_user and
#   coredump_dir: Squid drops to that user in place and allows dumps again itself.  Killed by
#   SIGSEGV, Squid's own fatal-signal handler logs "FATAL: Received Segment Violation...dying.",
#   writes its clean logs and abort()s: Squid ends with status 134 as without libptrec, with
#   exactly one dump and report, of the SIGSEGV (the first fault), with gdb's stack, owned by
#   that user.
# Each Squid serves a request first.  Not covered: a master started as root runs with real uid
# proxy and effective uid 0 when it execs its kids, so the loader runs them in secure mode and
# ignores LD_PRELOAD: they are not recorded.
if [ -z "${SQUID_BIN:-}" ]; then
	echo "SKIP: configure found no squid (Debian package squid)"
	exit 77
fi
command -v bash >/dev/null || { echo "SKIP: no bash for the HTTP request"; exit 77; }
. "$top_srcdir/tests/servers/server_common.sh"

# a folder Squid's user can reach, with copies of ptrec and libptrec.so it can read
work_in_tmp squid
chmod 755 "$work"
user=
if [ "$(id -u)" -eq 0 ]; then
	for u in proxy nobody; do
		id -u "$u" >/dev/null 2>&1 && { user=$u; break; }
	done
	[ -n "$user" ] || { echo "SKIP: running as root and no user proxy or nobody"; exit 77; }
	copies_for "$user"
fi
# the command that starts a program as that user (as this one when not root)
as_user=env
[ -z "$user" ] || as_user="setpriv --reuid $user --regid $(id -g "$user") --init-groups"

free_port

# request: one HTTP request for Squid's own menu page, answered by Squid (its access rules for
# the cache manager make the answer an error page: the request is served all the same)
request() {
	bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" &&
		printf "GET http://localhost:%s/squid-internal-mgr/menu HTTP/1.0\r\n\r\n" "$1" >&3 &&
		cat <&3' request "$port" >"$run/response" 2>&1
	{ head -n 1 "$run/response" | grep -q '^HTTP/1\.1 [0-9]* ' &&
		grep -q '^Server: squid' "$run/response"; } ||
		{ cat "$run/response"; fail "squid did not answer a request"; }
}

# start NAME EXTRA WRAP ARGS...: Squid with EXTRA added to its configuration and the arguments
# ARGS, `ptrec run` started by the command WRAP ($as_user or env), in a fresh folder $run
# (NAME: logs, pid file) Squid's user owns; waits for it to accept connections and serve a
# request.
start() {
	run=$work/$1
	mkdir "$run" || exit 99
	cat >"$run/squid.conf" <<CONF
http_port 127.0.0.1:$port
pid_filename $run/squid.pid
cache_log $run/cache.log
access_log stdio:$run/access.log
cache_store_log none
cache_mem 8 MB
pinger_enable off
shutdown_lifetime 1 second
visible_hostname localhost
http_access allow localhost
http_access deny all
$2
CONF
	wrap=$3
	shift 3
	[ -z "$user" ] || chown -R "$user" "$run" "$work/dumps"
	# shellcheck disable=SC2086
	(cd "$run" && exec $wrap "$tool" run --dir "$work/dumps" --report-timeout 30000 -- \
		"$SQUID_BIN" -f "$run/squid.conf" "$@") >"$run/out" 2>"$run/err" &
	pid=$!
	for _ in $(seq 1 150); do
		grep -q 'Accepting HTTP Socket connections' "$run/cache.log" 2>/dev/null && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.2
	done
	grep -q 'Accepting HTTP Socket connections' "$run/cache.log" 2>/dev/null ||
		{ cat "$run/err" "$run/cache.log"; fail "squid did not start"; }
	request
}

# 1. master and kid, as an unprivileged user.  The kid's stderr is /dev/null: the ptrec line
# reaches the system log only (a test syslog socket of the user's, tests/crash/hardener's sink).
mkdir "$work/log" || exit 99
[ -z "$user" ] || chown "$user" "$work/log"
syslog=$work/log/syslog.sock
$as_user "$top_builddir/tests/crash/hardener" syslog-sink "$syslog" "$work/log/logged" 120 &
sink=$!
for _ in $(seq 1 50); do
	[ -S "$syslog" ] && break
	sleep 0.2
done
[ -S "$syslog" ] || fail "the test syslog socket did not appear"
start kid "" "$as_user env PTREC_SYSLOG=$syslog" --foreground -YC
for _ in $(seq 1 100); do
	[ "$(children | wc -l)" -eq 1 ] && break
	sleep 0.2
done
[ "$(children | wc -l)" -eq 1 ] || fail "squid's master does not run one kid"
kid=$(children)
grep -q '/libptrec\.so' "/proc/$kid/maps" || fail "the kid has no libptrec mapped"
gdb_stack "$kid"
kill -SEGV "$kid"
new=
for _ in $(seq 1 150); do
	new=$(children)
	[ -n "$new" ] && [ "$new" != "$kid" ] &&
		[ "$(grep -c 'Accepting HTTP Socket connections' "$run/cache.log")" -ge 2 ] && break
	sleep 0.2
done
echo "--- cache.log"; cat "$run/cache.log"
[ -n "$new" ] && [ "$new" != "$kid" ] || fail "the master did not start a new kid"
request
kill -TERM "$pid"
wait_server 60 "did not stop on SIGTERM"
echo "--- squid (status $status), stderr:"; cat "$run/err"
[ "$status" -eq 0 ] || fail "squid stopped with status $status after SIGTERM, expected 0"
wait "$sink" || fail "no line reached the system log"
echo "--- the system log"; cat "$work/log/logged"; echo
sed 's/^<10>ptrec\[[0-9]*\]: /ptrec: /' "$work/log/logged" >"$work/stderr"
grep -q "^<10>ptrec\[$kid\]: " "$work/log/logged" || fail "the system log's line is not of the kid"
cat "$run/err" "$run/cache.log" >>"$work/stderr"
one_dump "$kid" "$work/stderr"
sent_by_us
same_as_gdb
case "$stack" in
*"EventLoop::run "*"SquidMain "*"main "*) ;;
*) fail "the crashed kid's stack is not Squid's event loop under main: $stack" ;;
esac
mkdir "$work/kid-dumps" && mv "$work"/dumps/* "$work/kid-dumps/" || exit 99

# 2. no master, started as root (or as this user) with Squid's own fatal-signal handler
owner=$(id -un)
if [ -n "$user" ]; then
	start alone "cache_effective_user $user
coredump_dir $work/dumps" env -N -Y
	owner=$user
	[ "$(stat -c %U "/proc/$pid")" = "$user" ] || fail "squid does not run as $user"
else
	start alone "" env -N -Y
fi
gdb_stack "$pid"
server=$pid
kill -SEGV "$pid"
wait_server 60 "did not end after SIGSEGV"
echo "--- squid -N (status $status), cache.log:"; cat "$run/cache.log"
echo "--- stderr:"; cat "$run/err"
grep -q 'FATAL: Received Segment Violation\.\.\.dying\.$' "$run/cache.log" ||
	fail "squid's own handler did not log the SIGSEGV"
[ "$status" -eq 134 ] ||
	fail "squid ended with status $status, expected 134 (its handler's abort())"
cat "$run/err" "$run/cache.log" >"$work/stderr"
one_dump "$server" "$work/stderr"
[ "$(stat -c %U "$work"/dumps/ptrec.*.ptrec)" = "$owner" ] || fail "the dump is not owned by $owner"
sent_by_us
same_as_gdb
case "$stack" in
*"EventLoop::run "*"SquidMain "*"main "*) ;;
*) fail "the crashed squid's stack is not its event loop under main: $stack" ;;
esac
echo "PASS: squid under ptrec run: a kid's crash dumped, the kid restarted; squid -N's handler's abort() dumped as the SIGSEGV"
