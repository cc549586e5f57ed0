#!/bin/sh
# A real multi-threaded server: Debian's memcached (a test-only peer configure finds; .ci/run
# installs it) run unmodified under `ptrec run`, with four workers and its maintenance threads
# (libevent loops, condition waits).  Killed by SIGSEGV, it must die of SIGSEGV (139) and leave
# exactly one dump and report holding every thread the process had, each under its own name,
# the crashed one being the main thread in its event loop, with gdb's stack, and a worker (not
# crashed, blocked in epoll_wait: no registers but the sp and pc the kernel shows) with gdb's
# stack of that worker too.
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
worker=$(awk '/ mc-worker$/ { print $1; exit }' "$work/threads")
# gdb's stack of the worker (frames 1.., as gdb_stack takes them), then of the main thread.
if [ -n "${GDB:-}" ]; then
	"$GDB" -p "$pid" -batch -nx -ex 'thread apply all bt' </dev/null 2>/dev/null |
		awk -v lwp="(LWP $worker)" '/^Thread / { on = index($0, lwp) > 0; next } on' |
		sed -n 's/^#\([1-9][0-9]*\) *0x0*\([0-9a-f]*\) in .*/\2/p' >"$work/gdb_worker.txt"
fi
gdb_stack "$pid"
# gdb's attach interrupted the worker's epoll_wait: let it wait again before the crash.
for _ in $(seq 1 100); do
	case $(cat "/proc/$pid/task/$worker/syscall" 2>/dev/null) in running | -1* | "") sleep 0.2 ;;
	*) break ;; esac
done
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
sed -n "/^== Thread $worker (mc-worker)/,/^== /p" "$report" >"$work/worker.txt"
grep -q '^state:    blocked in a system call: epoll_wait (232)' "$work/worker.txt" ||
	fail "the worker $worker is not shown blocked in epoll_wait"
grep -q '^  (stops: outermost frame' "$work/worker.txt" ||
	fail "the worker $worker's stack does not reach its outermost frame"
if [ -s "$work/gdb_worker.txt" ]; then
	sed -n '/^stack (unwound/,/^  (stops:/p' "$work/worker.txt" |
		awk '/^  #[0-9]+ +0x/ && !index($0, "(inlined into ") {
			if (n++ > 0) { a = $2; sub(/^0x0*/, "", a); print a } }' >"$work/ours_worker.txt"
	echo "--- worker $worker: gdb's return addresses, then ours"
	paste "$work/gdb_worker.txt" "$work/ours_worker.txt"
	cmp -s "$work/gdb_worker.txt" "$work/ours_worker.txt" ||
		fail "the worker's unwound stack differs from gdb's"
fi
echo "PASS: memcached under ptrec run: one dump and report with all $n threads"
