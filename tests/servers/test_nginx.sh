#!/bin/sh
# A real multi-process server: Debian's nginx (a test-only peer configure finds; .ci/run
# installs it) run unmodified under `ptrec run`, a master and two workers (children the
# recorder follows).  A worker killed by SIGSEGV must leave one dump and report of that worker,
# and die of SIGSEGV as far as its parent can tell: the master's waitpid(-1) reaps it ("exited
# on signal 11" in nginx's log) and starts a new worker.  The master and the other worker go
# on; nginx then stops cleanly on SIGQUIT, and no dump is written for them.
if [ -z "${NGINX_BIN:-}" ]; then
	echo "SKIP: configure found no nginx (Debian package nginx)"
	exit 77
fi
. "$top_srcdir/tests/servers/server_common.sh"
unset NGINX # nginx reads inherited sockets from it
mkdir "$work/logs"
# as root, nginx would start its workers as nobody, who may not reach a build tree under /root
user=""
[ "$(id -u)" -ne 0 ] || user="user root;"
cat >"$work/nginx.conf" <<CONF
$user
worker_processes 2;
error_log $work/logs/error.log info;
pid $work/nginx.pid;
events { worker_connections 16; }
http {
	access_log off;
	client_body_temp_path $work/cb; proxy_temp_path $work/pt; fastcgi_temp_path $work/ft;
	uwsgi_temp_path $work/ut; scgi_temp_path $work/st;
	server { listen unix:$work/sock; location / { return 200 "ok\n"; } }
}
CONF

(cd "$work" && exec "$PTREC_TOOL" run --dir "$work/dumps" --report-timeout 30000 -- \
	"$NGINX_BIN" -p "$work" -c "$work/nginx.conf" -g "daemon off;") >"$work/out" 2>"$work/err" &
pid=$!
for _ in $(seq 1 100); do
	[ "$(children | wc -l)" -eq 2 ] && break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.2
done
[ "$(children | wc -l)" -eq 2 ] || { cat "$work/err" "$work/logs/error.log"; fail "nginx did not start two workers"; }
victim=$(children | head -n 1)
other=$(children | tail -n 1)
gdb_stack "$victim"
kill -SEGV "$victim"
for _ in $(seq 1 150); do
	grep -q "worker process $victim exited on signal 11" "$work/logs/error.log" &&
		[ "$(children | wc -l)" -eq 2 ] && break
	sleep 0.2
done
echo "--- nginx's error log"; cat "$work/logs/error.log"
echo "--- stderr"; cat "$work/err"
grep -q "worker process $victim exited on signal 11" "$work/logs/error.log" ||
	fail "the master did not see worker $victim die of SIGSEGV"
[ "$(children | wc -l)" -eq 2 ] || fail "the master did not start a new worker"
kill -0 "$other" 2>/dev/null || fail "the other worker $other died"

kill -QUIT "$pid"
wait_server 60 "did not stop on SIGQUIT"
[ "$status" -eq 0 ] || fail "nginx stopped with status $status after SIGQUIT, expected 0"

# nginx points its processes' stderr at its error log
cat "$work/err" "$work/logs/error.log" >"$work/stderr"
one_dump "$victim" "$work/stderr"
sent_by_us
same_as_gdb
# the worker was waiting for events when the signal came, in the loop the master forked it into
case "$stack" in
*"ngx_process_events_and_timers "*"ngx_spawn_process "*"ngx_master_process_cycle "*"main "*) ;;
*) fail "the crashed worker's stack is not nginx's worker loop: $stack" ;;
esac
echo "PASS: nginx under ptrec run: a worker's crash dumped, reaped as SIGSEGV by the master, replaced"
