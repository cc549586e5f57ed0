#!/bin/sh
# A real database server: Debian's PostgreSQL (a test-only peer configure finds; .ci/run installs
# it) run unmodified under `ptrec run`.  The postmaster forks a backend per connection and reaps
# them in its SIGCHLD handler with waitpid(-1); when one dies of a signal it stops every other
# child, runs crash recovery and accepts connections again.  A backend killed by SIGSEGV while it
# runs `pg_sleep` must leave exactly one dump and report, of that backend, whose stack runs from
# pg_sleep through PostgresMain to the postmaster's main; the postmaster must see "terminated by
# signal 11", recover, serve a new query, and stop with status 0 on SIGINT with no other dump.
# PostgreSQL refuses to run as root: as root the test runs it as the user postgres (setpriv, which
# execs), in a folder under /tmp with copies of ptrec and libptrec.so that user can read.
if [ -z "${POSTGRES_BIN:-}" ]; then
	echo "SKIP: configure found no postgres (Debian package postgresql)"
	exit 77
fi
pgbin=$(dirname "$(readlink -f "$POSTGRES_BIN")")
for t in initdb psql; do
	[ -x "$pgbin/$t" ] || { echo "SKIP: no $t beside $POSTGRES_BIN"; exit 77; }
done
. "$top_srcdir/tests/servers/server_common.sh"

# a short path for the server's socket, reachable by the user postgres
work_in_tmp pg
as_pg=
if [ "$(id -u)" -eq 0 ]; then
	id -u postgres >/dev/null 2>&1 || { echo "SKIP: running as root and no user postgres"; exit 77; }
	command -v setpriv >/dev/null || { echo "SKIP: running as root and no setpriv"; exit 77; }
	as_pg="setpriv --reuid=postgres --regid=postgres --init-groups --"
	copies_for postgres
	chown -R postgres "$work" || exit 99
fi
psql() { "$pgbin/psql" -X -h "$work" -U postgres -d postgres -Atc "$1" 2>&1; }

$as_pg "$pgbin/initdb" -D "$work/data" -A trust -U postgres --no-sync >"$work/initdb.log" 2>&1 ||
	{ cat "$work/initdb.log"; fail "initdb failed"; }
(cd "$work" && exec $as_pg "$tool" run --dir "$work/dumps" --report-timeout 30000 -- \
	"$POSTGRES_BIN" -D "$work/data" -k "$work" -c listen_addresses= -c fsync=off \
	-c logging_collector=off) >"$work/out" 2>"$work/err" &
pid=$!
# ready_count: how many times the postmaster said it accepts connections
ready_count() { grep -c 'database system is ready to accept connections' "$work/err"; }
for _ in $(seq 1 150); do
	[ "$(ready_count)" -ge 1 ] && [ "$(psql 'select 1')" = 1 ] && break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.2
done
[ "$(psql 'select 1')" = 1 ] || { cat "$work/err"; fail "postgres did not start"; }

# a backend sleeping in pg_sleep, its client waiting
"$pgbin/psql" -X -h "$work" -U postgres -d postgres -Atc 'select pg_sleep(300)' \
	>"$work/client" 2>&1 &
client=$!
victim=
for _ in $(seq 1 150); do
	victim=$(psql "select pid from pg_stat_activity where wait_event = 'PgSleep'")
	[ -n "$victim" ] && break
	sleep 0.2
done
[ -n "$victim" ] || { cat "$work/err"; fail "no backend in pg_sleep"; }
gdb_stack "$victim"
kill -SEGV "$victim"
wait "$client"
for _ in $(seq 1 150); do
	[ "$(ready_count)" -ge 2 ] && [ "$(psql 'select 6 * 7')" = 42 ] && break
	sleep 0.2
done
echo "--- postgres's log"; cat "$work/err"
echo "--- the client"; cat "$work/client"
grep -q "server process (PID $victim) was terminated by signal 11" "$work/err" ||
	fail "the postmaster did not see backend $victim die of SIGSEGV"
grep -q 'server closed the connection unexpectedly' "$work/client" ||
	fail "the client did not see its backend die"
[ "$(ready_count)" -ge 2 ] || fail "the postmaster did not recover and accept connections again"
[ "$(psql 'select 6 * 7')" = 42 ] || fail "no query served after the recovery"

kill -INT "$pid"
wait_server 60 "did not stop on SIGINT"
[ "$status" -eq 0 ] || fail "postgres stopped with status $status after SIGINT, expected 0"

one_dump "$victim" "$work/err"
sent_by_us
same_as_gdb
case "$stack" in
*"pg_sleep "*"PostgresMain "*"PostmasterMain "*"main "*) ;;
*) fail "the crashed backend's stack is not pg_sleep's under PostgresMain: $stack" ;;
esac
echo "PASS: postgres under ptrec run: a backend's crash dumped, reaped as SIGSEGV, recovered"
