#!/bin/sh
# A real threaded DNS resolver in a new root: Debian's Unbound (a test-only peer configure finds;
# .ci/run installs it) run unmodified under `ptrec run` in the foreground (-d, as its systemd
# unit runs it) with two threads: the main one and a worker that blocks every signal (Unbound's
# ub_thread_blocksigs), and, as root, `chroot:` a folder of the test (after libptrec's init).
# The worker is made to call a null function pointer (gdb pushes its pc as the return address
# and sets the pc to 0): a fault in a thread that blocks SIGSEGV, which the kernel kills at once.
# - As root with `username: unbound`: Unbound drops privileges, so it is not dumpable; it dies
#   of SIGSEGV (139) with no file and the ptrec line says why.
# - As root with no username: the dump is written inside the new root (PTREC_DIR under it, as
#   the host names it), with no report (the tool is not inside the new root), and the line says
#   so; `ptrec report` on the host then gives the worker's fault at address 0 and gdb's stack
#   below the null call, and both threads (the other one without its name: it is read from
#   /proc, which the new root lacks).  Not root, the same without the new root: the report is
#   written at once, both threads named.
# Unbound answers its control tool (unbound-control status) before each crash.
if [ -z "${UNBOUND_BIN:-}" ]; then
	echo "SKIP: configure found no unbound (Debian package unbound)"
	exit 77
fi
control=$(dirname "$UNBOUND_BIN")/unbound-control
[ -x "$control" ] || { echo "SKIP: no unbound-control beside $UNBOUND_BIN"; exit 77; }
[ -n "${GDB:-}" ] || { echo "SKIP: no gdb to make Unbound's worker thread fault"; exit 77; }
. "$top_srcdir/tests/servers/server_common.sh"

work_in_tmp unbound
free_port
chmod 755 "$work"
root=
[ "$(id -u)" -ne 0 ] || root=yes
if [ -n "$root" ]; then
	id -u unbound >/dev/null 2>&1 || { echo "SKIP: running as root and no user unbound"; exit 77; }
	copies_for unbound
fi

# start NAME EXTRA: Unbound in the folder $jail ($work/NAME) with EXTRA added to its server
# configuration, dumps in $jail/dumps; waits for it to answer unbound-control.
start() {
	jail=$work/$1
	mkdir "$jail" "$jail/dumps" || exit 99
	cat >"$jail/unbound.conf" <<CONF
server:
	verbosity: 1
	num-threads: 2
	interface: 127.0.0.1
	port: $port
	do-ip6: no
	directory: "$jail"
	pidfile: ""
	use-syslog: no
	logfile: "$jail/unbound.log"
	do-daemonize: no
	local-zone: "test." static
	local-data: "a.test. A 10.0.0.1"
$2
remote-control:
	control-enable: yes
	control-interface: $jail/control.sock
	control-use-cert: no
CONF
	[ -z "$root" ] || chown -R unbound "$jail"
	(cd "$jail" && exec "$tool" run --dir "$jail/dumps" --report-timeout 30000 -- \
		"$UNBOUND_BIN" -d -p -c "$jail/unbound.conf") >"$jail/out" 2>"$jail/err" &
	pid=$!
	for _ in $(seq 1 100); do
		"$control" -c "$jail/unbound.conf" status 2>/dev/null | grep -q "is running" && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.2
	done
	"$control" -c "$jail/unbound.conf" status | grep -q "is running" ||
		{ cat "$jail/err" "$jail/unbound.log"; fail "unbound did not answer unbound-control"; }
	list_threads "$pid"
	[ "$(wc -l <"$work/threads")" -eq 2 ] || fail "unbound does not run two threads"
	worker=$(sed -n '2s/ .*//p' "$work/threads")
	grep -q '^SigBlk:[[:space:]]*fffffffe' "/proc/$pid/task/$worker/status" ||
		fail "unbound's worker does not block the signals"
}

# null_call: gdb stops the worker (gdb's thread 2), keeps its backtrace (the pc of frame 0 and
# the return addresses of frames 1.. into $work/gdb.txt: below the null call they are frames 1..
# of ours), pushes its pc
# and sets the pc to 0, as a call through a null pointer does; the worker faults when detached.
null_call() {
	"$GDB" -p "$pid" -batch -nx -ex 'thread 2' -ex bt -ex 'set $sp = $sp - 8' \
		-ex 'set *(long *)$sp = $pc' -ex 'set $pc = 0' -ex detach </dev/null >"$work/gdb.out" 2>&1
	grep -q "^\[Switching to thread 2 .*(LWP $worker))\]" "$work/gdb.out" ||
		{ cat "$work/gdb.out"; fail "gdb did not stop the worker $worker"; }
	# (`thread 2` prints frame 0 once more before the backtrace)
	sed -n 's/^#\([0-9][0-9]*\) *0x0*\([0-9a-f]*\) in .*/\1 \2/p' "$work/gdb.out" |
		awk '$1 == "0" { n = 0 } { a[n++] = $2 } END { for (i = 0; i < n; i++) print a[i] }' \
		>"$work/gdb.txt"
	[ -s "$work/gdb.txt" ] || { cat "$work/gdb.out"; fail "no backtrace of the worker from gdb"; }
}

if [ -n "$root" ] && [ "$(cat /proc/sys/fs/suid_dumpable 2>/dev/null)" = 0 ]; then
	start user "	chroot: \"$work/user\"
	username: \"unbound\""
	[ "$(stat -c %U "/proc/$pid")" = unbound ] || fail "unbound does not run as unbound"
	server=$pid
	null_call
	wait_server 60 "did not die"
	echo "--- unbound (status $status), stderr:"; cat "$jail/err"
	[ "$status" -eq 139 ] || fail "exit status $status, expected 139 (killed by SIGSEGV)"
	[ "$(ptrec_lines "$jail/err")" -eq 1 ] || fail "expected exactly one ptrec line"
	line=$(ptrec_line "$jail/err")
	case "$line" in
	"ptrec: SIGSEGV in pid $server thread $worker (unbound): no dump written (the process is not dumpable ("*) ;;
	*) fail "the ptrec line does not say why the worker left no dump: $line" ;;
	esac
	[ -z "$(ls "$jail/dumps")" ] || fail "a file was written for a process that is not dumpable"
fi

if [ -n "$root" ]; then
	start jail "	chroot: \"$work/jail\"
	username: \"\""
	[ "$(readlink "/proc/$pid/root")" = "$jail" ] || fail "unbound is not in its new root"
else
	start jail ""
fi
server=$pid
null_call
wait_server 60 "did not die"
echo "--- unbound (status $status), stderr:"; cat "$jail/err"
[ "$status" -eq 139 ] || fail "exit status $status, expected 139 (killed by SIGSEGV)"
set -- "$jail"/dumps/ptrec.*.ptrec
[ $# -eq 1 ] && [ -f "$1" ] || fail "expected exactly one dump in $jail/dumps"
dump=$1
if [ -n "$root" ]; then
	[ "$(ptrec_lines "$jail/err")" -eq 1 ] || fail "expected exactly one ptrec line"
	line=$(ptrec_line "$jail/err")
	case "$line" in
	"ptrec: SIGSEGV in pid $server thread $worker (unbound): dump $dump; no report (the report tool $PTREC_TOOL is not inside the process's new root $jail (chroot after ptrec_init); decode on the host: ptrec report $dump)") ;;
	*) fail "the ptrec line does not name the dump by its host path and why there is no report: $line" ;;
	esac
	[ ! -e "$dump.txt" ] || fail "a report inside the new root"
	"$tool" report "$dump" >"$dump.txt" || fail "ptrec report failed on the host"
fi
mv "$dump" "$dump.txt" "$work/dumps/" || exit 99
one_dump "$server" "$jail/err"
grep -q "^pid: *$server  thread: $worker\$" "$report" || fail "the report's crashed thread is not the worker"
grep -q '^event: *crash, signal SIGSEGV (11), code SEGV_MAPERR (1)$' "$report" || fail "not a SEGV_MAPERR"
grep -q '^fault address: 0x0$' "$report" || fail "the fault address is not 0"
if [ -n "$root" ]; then
	# in the new root there is no /proc: the other thread's name is not in the dump
	grep -q '^dump: *complete, 2 thread(s)$' "$report" || fail "the dump does not hold both threads"
	grep -q "^== Thread $worker (unbound) \[crashed\]" "$report" || fail "no section for the worker"
	grep -q "^== Thread $server (" "$report" || fail "no section for the main thread"
else
	all_threads
fi
# frame 0 is the null pc (0x0, as gdb shows it); from frame 1 on, ours are gdb's frames
# from 0 on (the pushed pc, then the return addresses), as same_as_gdb compares them
sed -n '/\[crashed\]/,/^$/p' "$report" | grep -q '^  #0  *0x0\( .*\)\?  \[registers\]$' ||
	fail "the crashed worker's frame 0 is not at 0"
sed -n '/\[crashed\]/,/^$/p' "$report" |
	awk '/^  #[0-9]+ +0x/ && $1 != "#0" {
		if (!inlined) { a = $2; sub(/^0x/, "", a); print a }
		inlined = index($0, "(inlined into ") > 0
	}' | head -n "$(wc -l <"$work/gdb.txt")" >"$work/ours.txt"
echo "--- gdb's frames, then ours from frame 1"; paste "$work/gdb.txt" "$work/ours.txt"
cmp -s "$work/gdb.txt" "$work/ours.txt" || fail "the unwound stack differs from gdb's"
case "$stack" in
*"epoll_wait "*"event_base_loop "*"start_thread "*) ;;
*) fail "the worker's stack is not its event loop: $stack" ;;
esac
echo "PASS: unbound under ptrec run: a null call in a worker that blocks every signal, in a new root, dumped"
