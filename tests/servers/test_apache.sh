#!/bin/sh
# A real server that drops privileges: Debian's Apache httpd (a test-only peer configure finds;
# .ci/run installs it) with the event MPM, run unmodified under `ptrec run`.  Started as root, its
# children become the user www-data (or nobody), which makes them not dumpable: the kernel writes
# no core file for them, and libptrec writes no dump either (a dump holds their memory).
# - Apache as shipped: a child killed by SIGSEGV leaves no file, and the ptrec line in Apache's
#   error log says why and how a server allows dumps again.  The parent's waitpid(-1) reaps the
#   child ("exit signal Segmentation fault (11)").
# - With CoreDumpDirectory, Apache's children allow dumps again (PR_SET_DUMPABLE 1): a child
#   killed by SIGSEGV leaves exactly one dump and report, 0600 and owned by the child's user, with
#   gdb's stack from the child's MPM loop to main; the parent reaps it and starts a new child.
# Not root (Apache changes no user), or with fs.suid_dumpable other than 0 (the children stay
# dumpable), only the second part runs.
if [ -z "${APACHE2_BIN:-}" ]; then
	echo "SKIP: configure found no apache2 (Debian package apache2)"
	exit 77
fi
modules=$(dirname "$APACHE2_BIN")/../lib/apache2/modules
for m in mpm_event authz_core; do
	[ -f "$modules/mod_$m.so" ] || { echo "SKIP: no mod_$m.so in $modules"; exit 77; }
done
. "$top_srcdir/tests/servers/server_common.sh"

# a folder the children's user can reach, with copies of ptrec and libptrec.so it can read
work_in_tmp apache
mkdir "$work/logs" "$work/run"
chmod 755 "$work"
web_user

# start EXTRA: Apache in the foreground with EXTRA added to its configuration, on the first
# free port of a few; waits for its children; sets $pid.
start() {
	for port in $((20000 + $$ % 20000)) $((21000 + $$ % 20000)) $((22000 + $$ % 20000)); do
		: >"$work/logs/error.log"
		cat >"$work/apache.conf" <<CONF
ServerRoot $work
ServerName localhost
DefaultRuntimeDir $work/run
PidFile $work/run/apache.pid
Listen 127.0.0.1:$port
LoadModule mpm_event_module $modules/mod_mpm_event.so
LoadModule authz_core_module $modules/mod_authz_core.so
ErrorLog $work/logs/error.log
LogLevel info
DocumentRoot $work
StartServers 2
${user:+User $user}
${user:+Group $(id -gn "$user")}
$1
CONF
		(cd "$work" && exec "$tool" run --dir "$work/dumps" --report-timeout 30000 -- \
			"$APACHE2_BIN" -f "$work/apache.conf" -DFOREGROUND) >"$work/out" 2>"$work/err" &
		pid=$!
		for _ in $(seq 1 100); do
			[ "$(children | wc -l)" -ge 2 ] && return 0
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.2
		done
		grep -q 'Address already in use' "$work/logs/error.log" "$work/err" || break
		wait "$pid"
		pid=
	done
	cat "$work/err" "$work/logs/error.log"
	fail "apache2 did not start two children"
}

# crash VICTIM: kills the child VICTIM by SIGSEGV and waits until the parent reaped it and runs
# two children again.
crash() {
	kill -SEGV "$1"
	for _ in $(seq 1 150); do
		grep -q "child pid $1 exit signal Segmentation fault (11)" "$work/logs/error.log" &&
			[ "$(children | wc -l)" -ge 2 ] && break
		sleep 0.2
	done
	echo "--- Apache's error log"; cat "$work/logs/error.log"
	grep -q "child pid $1 exit signal Segmentation fault (11)" "$work/logs/error.log" ||
		fail "the parent did not see child $1 die of SIGSEGV"
	[ "$(children | wc -l)" -ge 2 ] || fail "the parent did not start a new child"
}

# stop: SIGTERM stops Apache; its parent ends with status 0
stop() {
	kill -TERM "$pid"
	wait_server 60 "did not stop on SIGTERM"
	[ "$status" -eq 0 ] || fail "apache2 stopped with status $status after SIGTERM, expected 0"
}

# what the kernel does with a process that changed credentials: 0 makes it not dumpable
suid_dumpable=$(cat /proc/sys/fs/suid_dumpable 2>/dev/null)
if [ -n "$user" ] && [ "$suid_dumpable" != 0 ]; then
	echo "(fs.suid_dumpable is ${suid_dumpable:-unknown}, not 0: Apache's children stay dumpable, the first part is not run)"
elif [ -n "$user" ]; then
	start ""
	victim=$(children | head -n 1)
	[ "$(stat -c %U "/proc/$victim")" = "$user" ] || fail "the child $victim does not run as $user"
	crash "$victim"
	stop
	# Apache points its processes' stderr at its error log
	line=$(grep "^ptrec: SIGSEGV in pid $victim " "$work/logs/error.log")
	case "$line" in
	*": no dump written (the process is not dumpable ("*"prctl(PR_SET_DUMPABLE, 1)"*"CoreDumpDirectory))") ;;
	*) fail "the ptrec line does not say why child $victim left no dump and how to allow it: $line" ;;
	esac
	[ -z "$(ls "$work/dumps")" ] || fail "a file was written for a child that is not dumpable"
	[ "$(ptrec_lines "$work/logs/error.log")" -eq 1 ] || fail "expected exactly one ptrec line"
fi

start "CoreDumpDirectory $work/dumps"
victim=$(children | head -n 1)
gdb_stack "$victim"
crash "$victim"
stop
cat "$work/err" "$work/logs/error.log" >"$work/stderr"
one_dump "$victim" "$work/stderr"
owner=${user:-$(id -un)}
[ "$(stat -c %U "$work"/dumps/ptrec.*.ptrec)" = "$owner" ] ||
	fail "the dump is not owned by $owner, the child's user"
sent_by_us
same_as_gdb
case "$stack" in
*"ap_run_mpm "*"main "*) ;;
*) fail "the crashed child's stack is not Apache's MPM under main: $stack" ;;
esac
echo "PASS: apache2 under ptrec run: a privilege-dropped child's crash explained, then dumped with CoreDumpDirectory"
