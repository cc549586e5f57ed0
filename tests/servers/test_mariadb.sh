#!/bin/sh
# A real database server with crash handlers of its own: Debian's MariaDB (a test-only peer
# configure finds; .ci/run installs it) run unmodified under `ptrec run`.  mariadbd's
# handle_fatal_signal prints "got signal 11" and a backtrace of its own (backtrace_symbols, with
# libptrec's frames below it), then re-raises the signal with the default action.  Killed by
# SIGSEGV while a client waits in SELECT SLEEP, it must do all of that, die of SIGSEGV (139), and
# leave exactly one dump and report whose stack is the server's connection loop, matching gdb's.
if [ -z "${MARIADBD:-}" ]; then
	echo "SKIP: configure found no mariadbd (Debian package mariadb-server)"
	exit 77
fi
for t in mariadb-install-db mariadb; do
	command -v "$t" >/dev/null || { echo "SKIP: no $t (Debian package mariadb-server)"; exit 77; }
done
. "$top_srcdir/tests/servers/server_common.sh"

# a short path for the server's socket
rm -rf "$work"
work=$(mktemp -d "${TMPDIR:-/tmp}/ptrec-mariadb.XXXXXX") || exit 99
mkdir "$work/dumps"
user=$(id -un) # as root, mariadbd must be told it may run as root
mariadb-install-db --no-defaults --user="$user" --datadir="$work/data" --skip-test-db \
	--auth-root-authentication-method=normal >"$work/install.log" 2>&1 ||
	{ cat "$work/install.log"; fail "mariadb-install-db failed"; }
(cd "$work" && exec "$PTREC_TOOL" run --dir "$work/dumps" --report-timeout 30000 -- \
	"$MARIADBD" --no-defaults --user="$user" --datadir="$work/data" --socket="$work/sock" \
	--skip-networking --pid-file="$work/pid" --innodb-buffer-pool-size=16M) \
	>"$work/out" 2>"$work/err" &
pid=$!
sql() { mariadb --no-defaults -S "$work/sock" -uroot -N -B -e "$1" 2>&1; }
for _ in $(seq 1 150); do
	[ "$(sql 'select 1')" = 1 ] && break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.2
done
[ "$(sql 'select 1')" = 1 ] || { cat "$work/err"; fail "mariadbd did not start"; }

mariadb --no-defaults -S "$work/sock" -uroot -N -B -e 'select sleep(300)' >"$work/client" 2>&1 &
client=$!
for _ in $(seq 1 150); do
	[ -n "$(sql "select id from information_schema.processlist where info = 'select sleep(300)'")" ] &&
		break
	sleep 0.2
done
gdb_stack "$pid"
victim=$pid
kill -SEGV "$pid"
wait_server 120 "hung in its crash handler"
wait "$client"
echo "--- mariadbd (status $status), stderr:"; cat "$work/err"
[ "$status" -eq 139 ] || fail "exit status $status, expected 139 (killed by SIGSEGV, as mariadbd re-raises it)"
grep -q 'got signal 11' "$work/err" || fail "mariadbd's own crash report did not start"
grep -q '(handle_fatal_signal+' "$work/err" || fail "mariadbd's own backtrace is missing"
grep -q '^Writing a core file' "$work/err" || fail "mariadbd's handler did not run to its end"

one_dump "$victim" "$work/err"
sent_by_us
same_as_gdb
case "$stack" in
*"handle_connections_sockets "*"mysqld_main "*) ;;
*) fail "the crashed thread's stack is not mariadbd's connection loop: $stack" ;;
esac
echo "PASS: mariadbd under ptrec run: its own crash report complete, one dump and report"
