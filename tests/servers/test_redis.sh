#!/bin/sh
# A real server: Debian's redis-server (a test-only peer configure finds; .ci/run installs it)
# run unmodified under `ptrec run` and crashed with DEBUG SEGFAULT.  Redis owns its crash
# signals: its handler logs a bug report, cancels and joins its bio threads, runs a memory
# test over every anonymous writable mapping (libptrec's, and the TCBs, included), then
# resets SIGSEGV to SIG_DFL and kills itself.  Expected: Redis's report complete, the process
# dead of SIGSEGV as Redis meant, and exactly one ptrec dump and report, whose stack is Redis's
# command path.  jemalloc's background thread is off: the memory test rewrites every thread's
# TCB, and a thread that wakes meanwhile dies with or without libptrec (see the rseq note in
# doc/recorder.md); only the crashing thread is libptrec's to protect.  (Each of these broke
# once: Redis hung in killThreads; the memory test's pattern in the rseq area made the kernel
# kill it with no dump, at 2-3 crashes in 30.)
if [ -z "${REDIS_SERVER:-}" ] || [ -z "${REDIS_CLI:-}" ]; then
	echo "SKIP: configure found no redis-server and redis-cli (Debian package redis-server)"
	exit 77
fi
. "$top_srcdir/tests/servers/server_common.sh"

(cd "$work" && exec "$PTREC_TOOL" run --dir "$work/dumps" --report-timeout 30000 -- \
	"$REDIS_SERVER" --port 0 --unixsocket "$work/sock" --save "" --appendonly no \
	--daemonize no --enable-debug-command local --logfile "$work/redis.log" --dir "$work" \
	--jemalloc-bg-thread no) \
	>"$work/out" 2>"$work/err" &
pid=$!
server=$pid
wait_socket "$work/sock"
[ "$("$REDIS_CLI" -s "$work/sock" ping 2>&1)" = PONG ] ||
	{ cat "$work/err" "$work/redis.log"; fail "redis-server under ptrec run did not answer PING"; }
[ "$("$REDIS_CLI" -s "$work/sock" set request 42 2>&1)" = OK ] || fail "SET failed"
"$REDIS_CLI" -s "$work/sock" debug segfault >/dev/null 2>&1

# Redis's handler takes a few seconds (its memory test)
wait_server 120 "hung in its crash handler"
echo "--- redis-server (status $status), stderr:"; cat "$work/err"
echo "--- its log, from the bug report:"; sed -n '/REDIS BUG REPORT START/,$p' "$work/redis.log" | grep -v '^\*\*\* Preparing'
[ "$status" -eq 139 ] || fail "exit status $status, expected 139 (killed by SIGSEGV, as Redis re-raises it)"

grep -q 'crashed by signal: 11' "$work/redis.log" || fail "Redis's own crash report did not start"
grep -q '^Fast memory test PASSED' "$work/redis.log" || fail "Redis's memory test did not finish"
grep -q 'REDIS BUG REPORT END' "$work/redis.log" || fail "Redis's own crash report was cut short"

one_dump "$server" "$work/err"
grep -q '^symbol: *debugCommand+' "$report" || fail "the faulting instruction is not in debugCommand"
# DEBUG SEGFAULT writes to a read-only page of its own: a fault the kernel reports with the address
grep -q '^event: *crash, signal SIGSEGV (11), code SEGV_ACCERR (2)$' "$report" || fail "not SEGV_ACCERR"
grep -q '^fault address: 0x[0-9a-f]*000$' "$report" || fail "no page-aligned fault address"
! grep -q '^sent by:' "$report" || fail "a sender for a fault"
# the crashing thread's unwound stack: DEBUG's handler called from the command path
case "$stack" in
*"debugCommand call processCommand processInputBuffer readQueryFromClient "*"aeMain main "*) ;;
*) fail "the crashing thread's stack is not Redis's command path: $stack" ;;
esac
echo "PASS: redis-server crashed under ptrec run: Redis's report complete, one dump and report"
