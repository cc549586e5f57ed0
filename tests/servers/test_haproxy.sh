#!/bin/sh
# A real proxy in master-worker mode: Debian's HAProxy (a test-only peer configure finds;
# .ci/run installs it) run unmodified under `ptrec run` with `-W`: a master that forks a worker
# of two threads and reaps it with waitpid(-1).  A reload (SIGUSR2) makes the master exec itself
# again and fork a new worker while the old one finishes; the new worker must still be recorded.
# Killed by SIGSEGV, the new worker must leave exactly one dump and report, of itself, with
# gdb's stack through HAProxy's poll loop; the master must see "exited with code 139
# (Segmentation fault)" and, by its default exit-on-failure, end with status 139 itself, with no
# dump of its own or of the old worker.
if [ -z "${HAPROXY_BIN:-}" ]; then
	echo "SKIP: configure found no haproxy (Debian package haproxy)"
	exit 77
fi
. "$top_srcdir/tests/servers/server_common.sh"
cat >"$work/haproxy.cfg" <<CONF
global
	master-worker
	nbthread 2
defaults
	mode http
	timeout connect 1s
	timeout client 5s
	timeout server 5s
frontend fe
	bind unix@$work/sock
	http-request return status 200 content-type text/plain string "ok"
CONF

(cd "$work" && exec "$PTREC_TOOL" run --dir "$work/dumps" --report-timeout 30000 -- \
	"$HAPROXY_BIN" -W -db -f "$work/haproxy.cfg") >"$work/out" 2>"$work/err" &
pid=$!
wait_socket "$work/sock" || { cat "$work/err"; fail "haproxy did not start"; }
for _ in $(seq 1 100); do
	[ "$(children | wc -l)" -eq 1 ] && break
	sleep 0.2
done
[ "$(children | wc -l)" -eq 1 ] || { cat "$work/err"; fail "haproxy did not fork one worker"; }
old=$(children)

kill -USR2 "$pid"
new=
for _ in $(seq 1 150); do
	if grep -q "Former worker ($old) exited with code 0" "$work/err"; then
		new=$(children)
		[ -n "$new" ] && [ "$new" != "$old" ] && break
	fi
	sleep 0.2
done
echo "--- haproxy after the reload"; cat "$work/err"
[ -n "$new" ] && [ "$new" != "$old" ] || fail "the reload did not replace worker $old"
# the master execs itself with "-sf OLD" added, and its new worker inherits that command line
tr '\0' ' ' <"/proc/$new/cmdline" | grep -q -- " -sf $old " || fail "the master did not exec itself again"
grep -q '/libptrec\.so' "/proc/$new/maps" || fail "the new worker has no libptrec mapped"
[ "$(ls /proc/"$new"/task | wc -l)" -eq 2 ] || fail "the new worker does not run two threads"

gdb_stack "$new"
kill -SEGV "$new"
wait_server 60 "did not end after its worker's crash"
echo "--- haproxy (status $status), stderr:"; cat "$work/err"
grep -q "Current worker ($new) exited with code 139 (Segmentation fault)" "$work/err" ||
	fail "the master did not see worker $new die of SIGSEGV"
[ "$status" -eq 139 ] || fail "the master ended with status $status, expected 139 (exit-on-failure)"

one_dump "$new" "$work/err"
sent_by_us
same_as_gdb
grep -q '^dump: *complete, 2 thread(s)$' "$report" || fail "the dump does not hold the worker's 2 threads"
case "$stack" in
*"run_poll_loop "*"main "*) ;;
*) fail "the crashed worker's stack is not HAProxy's poll loop under main: $stack" ;;
esac
echo "PASS: haproxy -W under ptrec run: the reloaded master's new worker crashed, dumped, reaped as SIGSEGV"
