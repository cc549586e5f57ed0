#!/bin/sh
# A real FastCGI server with a process pool: Debian's PHP-FPM (a test-only peer configure finds;
# .ci/run installs php8.2-fpm) run unmodified under `ptrec run` in the foreground, as its systemd
# unit runs it (--nodaemonize): a master and two static workers, which as root run as www-data
# (or nobody) with `process.dumpable = yes` and `catch_workers_output = yes` (their stderr is a
# pipe the master copies into its log).  Requests over its unix socket (tests/servers/fcgi_get.c):
# - a request slower than request_slowlog_timeout: the master stops the worker with
#   PTRACE_ATTACH, reads its PHP stack from its memory, writes it to the slowlog and detaches;
#   that leaves no ptrec line and no dump, and the request still completes;
# - a script recursing through array_map() until the worker's C stack overflows: a real SIGSEGV
#   on a stack that has no room left, one dump and report of that worker, with the fault address
#   and the recursion's frames; the master reaps it ("exited on signal 11 (SIGSEGV)") and starts
#   another;
# - an idle worker killed by SIGSEGV: one dump and report, with gdb's stack, the ptrec line in the
#   master's log, the worker reaped and replaced.
# SIGTERM then stops PHP-FPM with status 0.  Without libptrec PHP-FPM logs the same lines.
if [ -z "${PHP_FPM_BIN:-}" ]; then
	echo "SKIP: configure found no php-fpm (Debian package php8.2-fpm)"
	exit 77
fi
if [ -z "${CC:-}" ]; then
	echo "SKIP: no C compiler for the FastCGI client"
	exit 77
fi
. "$top_srcdir/tests/servers/server_common.sh"

# a folder the workers' user can reach, with copies of ptrec and libptrec.so it can read
work_in_tmp php-fpm
chmod 755 "$work"
web_user
$CC -o "$work/fcgi_get" "$top_srcdir/tests/servers/fcgi_get.c" || fail "fcgi_get does not build"
get() { "$work/fcgi_get" "$work/sock" "$work/$1"; }

cat >"$work/php-fpm.conf" <<CONF
[global]
pid = $work/php-fpm.pid
error_log = $work/error.log
log_level = notice
[www]
${user:+user = $user}
${user:+group = $(id -gn "$user")}
listen = $work/sock
pm = static
pm.max_children = 2
process.dumpable = yes
catch_workers_output = yes
slowlog = $work/slow.log
request_slowlog_timeout = 1s
CONF
echo '<?php echo "ok\n";' >"$work/ok.php"
# slow until the test has seen the slowlog's trace end
cat >"$work/slow.php" <<PHP
<?php
function waiting() { while (!file_exists("$work/go")) usleep(50000); }
waiting();
echo "done\n";
PHP
cat >"$work/deep.php" <<'PHP'
<?php
function down($n) { return array_map('down', [$n + 1]); }
down(0);
PHP

(cd "$work" && exec "$tool" run --dir "$work/dumps" --report-timeout 30000 -- \
	"$PHP_FPM_BIN" --nodaemonize -n -y "$work/php-fpm.conf") >"$work/out" 2>"$work/err" &
pid=$!
wait_socket "$work/sock" || { cat "$work/err" "$work/error.log"; fail "php-fpm did not start"; }
for _ in $(seq 1 100); do
	[ "$(children | wc -l)" -eq 2 ] && break
	sleep 0.2
done
[ "$(children | wc -l)" -eq 2 ] || { cat "$work/error.log"; fail "php-fpm did not start two workers"; }
[ -z "$user" ] || [ "$(stat -c %U "/proc/$(children | head -n 1)")" = "$user" ] ||
	fail "the workers do not run as $user"
get ok.php | grep -q '^ok$' || fail "no answer to a request"

# the slowlog: the master ptraces the worker in the middle of the request
get slow.php >"$work/slow.out" &
client=$!
for _ in $(seq 1 150); do
	grep -q 'NOTICE: finished trace of ' "$work/error.log" && break
	sleep 0.2
done
touch "$work/go"
wait "$client" || fail "the slow request failed"
echo "--- the slowlog"; cat "$work/slow.log"
grep -q 'NOTICE: finished trace of ' "$work/error.log" || { cat "$work/error.log"; fail "the master did not trace the slow worker"; }
grep -q "^\[0x[0-9a-f]*\] waiting() $work/slow.php:3\$" "$work/slow.log" ||
	fail "the slowlog does not hold the slow request's PHP stack"
grep -q '^done$' "$work/slow.out" || fail "the slow request did not complete"
nothing_for "the slowlog's ptrace of a worker"

# stack_lines: the ptrec lines the workers wrote into the master's log, into $work/stderr
stack_lines() {
	sed -n 's/^.* said into stderr: "\(ptrec: .*\)"$/\1/p' "$work/error.log" >"$work/stderr"
}
# reaped VICTIM: waits for the master to reap VICTIM as killed by SIGSEGV and run two workers
reaped() {
	for _ in $(seq 1 150); do
		grep -q "child $1 exited on signal 11 (SIGSEGV" "$work/error.log" &&
			[ "$(children | wc -l)" -eq 2 ] && break
		sleep 0.2
	done
	echo "--- PHP-FPM's log"; cat "$work/error.log"
	grep -q "child $1 exited on signal 11 (SIGSEGV" "$work/error.log" ||
		fail "the master did not see worker $1 die of SIGSEGV"
	[ "$(children | wc -l)" -eq 2 ] || fail "the master did not start a new worker"
}

# a stack overflow in PHP's recursion
! get deep.php >/dev/null || fail "the recursing request completed"
for _ in $(seq 1 150); do
	grep -q 'exited on signal 11' "$work/error.log" && break
	sleep 0.2
done
deep=$(sed -n 's/^.* child \([0-9]*\) exited on signal 11.*/\1/p' "$work/error.log")
[ -n "$deep" ] || { cat "$work/error.log"; fail "no worker died of the recursion"; }
reaped "$deep"
stack_lines
one_dump "$deep" "$work/stderr"
grep -q '^event: *crash, signal SIGSEGV (11), code SEGV_MAPERR (1)$' "$report" ||
	fail "the overflow is not a SEGV_MAPERR"
grep -q '^fault address: *0x' "$report" || fail "no fault address for the overflow"
case "$stack" in
*"execute_ex zend_call_function "*"execute_ex zend_call_function "*) ;;
*) fail "the overflowed worker's stack is not PHP's recursion: $stack" ;;
esac
mkdir "$work/overflow" && mv "$work"/dumps/* "$work/overflow/" || exit 99

# an idle worker killed by SIGSEGV
victim=$(children | head -n 1)
gdb_stack "$victim"
kill -SEGV "$victim"
reaped "$victim"
kill -TERM "$pid"
wait_server 60 "did not stop on SIGTERM"
[ "$status" -eq 0 ] || fail "php-fpm stopped with status $status after SIGTERM, expected 0"
grep -q 'NOTICE: exiting, bye-bye!' "$work/error.log" || fail "php-fpm did not log its stop"
stack_lines
grep -v "^ptrec: SIGSEGV in pid $deep " "$work/stderr" >"$work/stderr2"
one_dump "$victim" "$work/stderr2"
owner=${user:-$(id -un)}
[ "$(stat -c %U "$work"/dumps/ptrec.*.ptrec)" = "$owner" ] ||
	fail "the dump is not owned by $owner, the worker's user"
sent_by_us
same_as_gdb
case "$stack" in
*"accept "*"__libc_start_call_main "*) ;;
*) fail "the crashed worker's stack is not waiting in accept under main: $stack" ;;
esac
echo "PASS: php-fpm under ptrec run: slowlog ptrace left alone, a stack overflow and a killed worker dumped, reaped"
