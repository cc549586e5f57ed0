#!/bin/sh
# A real multi-threaded server: Debian's memcached (a test-only peer configure finds; .ci/run
# installs it) run unmodified under `ptrec run`, with four workers and its maintenance threads
# (libevent loops, condition waits).  Killed by SIGSEGV, it must die of SIGSEGV (139) and leave
# exactly one dump and report holding every thread the process had, each under its own name,
# the crashed one being the main thread in its event loop, with gdb's stack.
if [ -z "${MEMCACHED_BIN:-}" ]; then
	echo "SKIP: configure found no memcached (Debian package memcached)"
	exit 77
fi
. "$top_srcdir/tests/servers/server_common.sh"
user=""
[ "$(id -u)" -ne 0 ] || user="-u root" # memcached refuses root without it

# shellcheck disable=SC2086
(cd "$work" && exec "$PTREC_TOOL" run --dir "$work/dumps" --report-timeout 30000 -- \
	"$MEMCACHED_BIN" $user -s "$work/sock" -t 4 -m 16) >"$work/out" 2>"$work/err" &
pid=$!
server=$pid
wait_socket "$work/sock" || { cat "$work/err"; fail "memcached did not start"; }
# its threads start before the socket is made; let the last ones name themselves
sleep 0.5
list_threads "$pid"
[ "$(grep -c ' mc-worker$' "$work/threads")" -eq 4 ] || fail "memcached did not start 4 workers"
gdb_stack "$pid"
kill -SEGV "$pid"
wait_server 60 "did not die"
echo "--- memcached (status $status), stderr:"; cat "$work/err"
[ "$status" -eq 139 ] || fail "exit status $status, expected 139 (killed by SIGSEGV)"

one_dump "$server" "$work/err"
sent_by_us
same_as_gdb
all_threads
case "$stack" in
*"event_base_loop "*) ;;
*) fail "the crashed main thread's stack is not memcached's event loop: $stack" ;;
esac
echo "PASS: memcached under ptrec run: one dump and report with all $n threads"
