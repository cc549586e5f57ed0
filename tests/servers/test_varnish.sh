#!/bin/sh
# A real cache with a crash handler of its own: Debian's Varnish (a test-only peer configure
# finds; .ci/run installs it) run unmodified under `ptrec run`.  The manager process forks the
# cache child (its threads: the CLI loop, acceptors, worker pools, expiry, ...) and relays the
# child's output.  The child handles SIGSEGV itself: its handler prints a panic with the signal
# and a backtrace, then aborts; the manager reports "died signal=6" and the panic, and starts a
# new child.  A child killed by SIGSEGV must leave exactly one dump and report, of the child,
# holding every thread it had, with gdb's stack through the CLI loop to main; Varnish's own
# handler must still run and see the signal as it was sent; the manager must restart the child,
# and on SIGTERM end as it does after any panic (status 64), with no other dump.
if [ -z "${VARNISHD_BIN:-}" ]; then
	echo "SKIP: configure found no varnishd (Debian package varnish)"
	exit 77
fi
. "$top_srcdir/tests/servers/server_common.sh"

# -j none: no privilege separation; a small worker pool keeps the thread count down
(cd "$work" && exec "$PTREC_TOOL" run --dir "$work/dumps" --report-timeout 30000 -- \
	"$VARNISHD_BIN" -F -n "$work/n" -a "$work/sock" -b none -s malloc,16m -T none -j none \
	-p thread_pools=1 -p thread_pool_min=5 -p thread_pool_max=20) >"$work/out" 2>"$work/err" &
pid=$!
started() { sed -n 's/^Info: Child (\([0-9]*\)) said Child starts$/\1/p' "$work/err" "$work/out"; }
for _ in $(seq 1 150); do
	[ -n "$(started)" ] && break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.2
done
victim=$(started)
[ -n "$victim" ] || { cat "$work/err" "$work/out"; fail "varnishd did not start its child"; }
# let the child's pools reach their size and its threads name themselves
sleep 1
list_threads "$victim"
gdb_stack "$victim"
kill -SEGV "$victim"
for _ in $(seq 1 150); do
	[ "$(started | wc -l)" -ge 2 ] && break
	sleep 0.2
done
kill -TERM "$pid"
wait_server 60 "did not stop on SIGTERM"
cat "$work/err" "$work/out" >"$work/log"
echo "--- varnishd (status $status)"; cat "$work/log"
grep -q "^Error: Child ($victim) died signal=6\$" "$work/log" ||
	fail "the manager did not see child $victim end by its own handler's abort"
# Varnish's handler got the signal with the sender in si_addr (a kill's si_pid), as the kernel
# gave it, and code SI_USER (0)
grep -q "^Signal 11 (Segmentation fault) received at 0x$(printf %x $$) si_code 0\$" "$work/log" ||
	fail "Varnish's own handler did not get the SIGSEGV as it was sent"
[ "$(started | wc -l)" -ge 2 ] || fail "the manager did not start a new child"
[ "$status" -eq 64 ] || fail "varnishd stopped with status $status after a panic, expected 64"

# the manager relays the child's stderr, the ptrec line included
sed 's/^Info: Child ([0-9]*) said //' "$work/log" >"$work/stderr"
one_dump "$victim" "$work/stderr"
sent_by_us
same_as_gdb
all_threads
case "$stack" in
*"CLI_Run "*"child_main "*"main "*) ;;
*) fail "the crashed child's stack is not Varnish's CLI loop under main: $stack" ;;
esac
echo "PASS: varnishd under ptrec run: the child's crash dumped before Varnish's own panic, the child restarted"
