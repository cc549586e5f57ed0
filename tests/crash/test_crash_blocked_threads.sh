#!/bin/sh
# test_crash_blocked_threads.sh — every thread's stack in a crash report, without PT and
# without ptrace: the other threads as /proc/self/task/TID/syscall shows them (TASK records).
#
# blocked_threads (tests/crash/blocked_threads.c, -O2 -fomit-frame-pointer, backend none: no
# branch history at all) has a thread in nanosleep under sleeper_a -> sleeper_b, one in read()
# under reader_c, one in pthread_cond_wait under waiter_d and one spinning in spin_e; its main
# thread crashes.  Spec, for that build:
# - the process dies of SIGSEGV and its report names each waiting thread's state (blocked in a
#   system call) and shows its stack, unwound from the sp and pc the kernel gave, with its
#   functions in call order, down to the outermost frame;
# - each of those stacks equals gdb's backtrace of the same thread, pc for pc (gdb attached to
#   the live process before the crash, then detached; skipped without gdb);
# - the spinning thread is "running on a CPU", with no stack;
# - the JSON report has each thread's "task" and "backtrace"; --threads crashed shows none of it.
# The same program at -O0 with frame pointers (blocked_threads_fp): sleeper_b finds its caller
# through rbp, which the kernel does not show and no libc frame below it saved:
# - the sleeper's stack shows nanosleep and sleeper_b, then stops saying "rbp unknown: the
#   thread was in a system call"; nothing is guessed: every thread's stack is the start of
#   gdb's.
. "$top_srcdir/tests/common/qemu_user.sh"
skip_under_qemu_user "/proc/PID/task/TID/syscall shows qemu's own x86-64 threads, not the program's sp and pc"
set -u
fail() { echo "FAIL: $*"; exit 1; }
: "${top_srcdir:?}" "${top_builddir:?}" "${PTREC_TOOL:?}"
work=$(mktemp -d "$top_builddir/tests/crash.XXXXXX") || exit 99
pid=
trap '[ -z "$pid" ] || kill -KILL $pid 2>/dev/null; rm -rf "$work"' EXIT
export PTREC_BACKEND=none PTREC_SYSLOG=none PTREC_REPORT_TIMEOUT_MS=20000
export ASAN_OPTIONS="handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:handle_abort=0:detect_leaks=0:allow_user_segv_handler=1"
unset STATE_DIRECTORY LOGS_DIRECTORY PTREC_FLAGS PTREC_RING_SIZE

# blocked TID: 0 once the thread waits in a system call again (gdb's attach interrupted it).
blocked() {
	s=$(cat "/proc/$pid/task/$1/syscall" 2>/dev/null) || return 0 # unreadable: do not wait
	case "$s" in running|"") return 1 ;; -1*) return 1 ;; esac
}

# crash PROGRAM: runs it in $work/PROGRAM, takes gdb's stacks of its threads once they wait
# ($w/gdb.txt), crashes it; sets w, dump, report and the tids sleeper reader waiter spinner.
crash() {
	w=$work/$1
	mkdir "$w" && mkfifo "$w/ctl" || exit 99
	PTREC_DIR=$w "$top_builddir/tests/crash/$1" "$w/ctl" >"$w/stdout" 2>"$w/stderr" &
	pid=$!
	n=0
	until grep -q '^ready ' "$w/stdout"; do
		kill -0 $pid 2>/dev/null || { cat "$w/stderr"; fail "$1 ended before it was ready"; }
		n=$((n + 1))
		[ $n -lt 1200 ] || fail "$1 was not ready after 2 minutes"
		sleep 0.1
	done
	set -- "$1" $(sed -n 's/^ready //p' "$w/stdout")
	sleeper=$2 reader=$3 waiter=$4 spinner=$5
	: >"$w/gdb.txt"
	if [ -n "${GDB:-}" ]; then
		"$GDB" -p $pid -batch -nx -x "$top_srcdir/tests/crash/gdb_threads.py" </dev/null \
			2>"$w/gdb.err" | grep '^THREAD ' >"$w/gdb.txt"
		[ -s "$w/gdb.txt" ] || echo "(gdb could not attach: $(head -c 300 "$w/gdb.err"))"
		n=0
		until blocked $sleeper && blocked $reader && blocked $waiter; do
			n=$((n + 1))
			[ $n -lt 1200 ] || fail "the threads did not go back to their waits after gdb left"
			sleep 0.1
		done
	fi
	printf x >"$w/ctl"
	wait $pid
	status=$?
	pid=
	echo "--- $1: stderr (status $status)"; cat "$w/stderr"
	[ $status -eq 139 ] || fail "$1 ended with status $status, expected 139 (SIGSEGV)"
	dump=$(ls "$w"/*.ptrec 2>/dev/null | head -n 1)
	[ -n "$dump" ] || fail "no dump in $w"
	report=$dump.txt
	[ -s "$report" ] || fail "no report $report"
}

# section TID: the thread's section of the report.
section() { sed -n "/^== Thread $1 /,/^== /p" "$report"; }
# frames TID: the pcs (hex, no 0x) of the thread's unwound stack, inlined calls left out.
frames() {
	section "$1" | sed -n '/^stack (unwound/,/^  (stops:/p' |
		awk '/^  #[0-9]+ +0x/ && !index($0, "(inlined into ") { a = $2; sub(/^0x0*/, "", a); print a }'
}
# gdb_frames TID: gdb's pcs of the thread, the same way.
gdb_frames() {
	grep "^THREAD $1 " "$w/gdb.txt" | cut -d' ' -f3- | tr ' ' '\n' | sed 's/^0*//'
}
# in_order TID F1 F2 ...: the thread's unwound frames name F1, F2, ... in this order (libc's
# names may carry prefixes and versions: __nanosleep, pthread_cond_wait@@GLIBC_2.3.2).
in_order() {
	t=$1; shift
	section "$t" | sed -n '/^stack (unwound/,/^  (stops:/p' >"$w/stack.txt"
	for f in "$@"; do
		line=$(grep -n -m1 -E "[ _]$f(@@?[A-Z0-9_.]+)?\+0x" "$w/stack.txt" | cut -d: -f1)
		[ -n "$line" ] || { section "$t"; fail "thread $t: no frame in $f"; }
		sed -i "1,${line}d" "$w/stack.txt"
	done
}
# like_gdb TID equal|start: the thread's stack equals gdb's, or is its start (not empty).
like_gdb() {
	[ -s "$w/gdb.txt" ] || { echo "(no gdb: thread $1 not compared with gdb)"; return 0; }
	gdb_frames $1 >"$w/gdb.$1"
	frames $1 >"$w/ours.$1"
	echo "--- thread $1: gdb's pcs, then ours"; paste "$w/gdb.$1" "$w/ours.$1"
	[ -s "$w/gdb.$1" ] || fail "gdb gave no stack for thread $1"
	[ -s "$w/ours.$1" ] || fail "thread $1: no frames"
	[ $2 = equal ] || head -n "$(wc -l <"$w/ours.$1")" "$w/gdb.$1" >"$w/gdb.$1.start"
	[ $2 = equal ] || mv "$w/gdb.$1.start" "$w/gdb.$1"
	cmp -s "$w/gdb.$1" "$w/ours.$1" || fail "thread $1: the stack differs from gdb's"
}

crash blocked_threads
for t in $sleeper $reader $waiter; do
	section $t | grep -q '^state:    blocked in a system call: ' ||
		{ section $t; fail "thread $t: not shown blocked in a system call"; }
	section $t | grep -q '^stack (unwound from the sp and pc the kernel showed' ||
		{ section $t; fail "thread $t: no unwound stack"; }
done
# The sanitizer build links the ASan runtime, whose interceptors (read, pthread_cond_wait) are
# built with frame pointers: there the stacks stop at an unknown rbp, as they should.
if [ -z "${SAN_LDFLAGS:-}" ]; then
	for t in $sleeper $reader $waiter; do
		section $t | grep -q '(stops: outermost frame' ||
			{ section $t; fail "thread $t: the stack does not reach the outermost frame"; }
	done
	in_order $sleeper nanosleep sleeper_b sleeper_a sleeper_main
	in_order $reader read reader_c reader_main
	in_order $waiter pthread_cond_wait waiter_d waiter_main
	whole=equal
else
	echo "(sanitizer build: the stacks may stop at the ASan runtime's interceptors)"
	for t in $sleeper $reader $waiter; do
		section $t | grep -Eq '\(stops: (outermost frame|[a-z0-9]+ unknown: the thread)' ||
			{ section $t; fail "thread $t: the stack stops for another reason"; }
	done
	whole=start
fi
section $spinner | grep -q '^state:    running on a CPU: no registers' ||
	{ section $spinner; fail "thread $spinner (spinning): not shown running"; }
section $spinner | grep -q '^stack (unwound' && fail "thread $spinner (running) has a stack"
echo "--- the other threads' sections"
for t in $sleeper $reader $waiter $spinner; do section $t | sed '/^last /,$d'; done
for t in $sleeper $reader $waiter; do like_gdb $t $whole; done

"$PTREC_TOOL" report --format json "$dump" >"$w/report.json" || fail "JSON report failed"
for t in $sleeper $reader $waiter; do
	grep -q "{\"tid\":$t,[^{]*\"task\":{\"state\":\"syscall\",\"syscall\":{\"nr\":" \
		"$w/report.json" || fail "JSON: thread $t has no task in a system call"
done
grep -q "{\"tid\":$spinner,[^{]*\"task\":{\"state\":\"running\"" "$w/report.json" ||
	fail "JSON: thread $spinner is not running"
n=$(grep -o '"backtrace":\[' "$w/report.json" | wc -l)
[ "$n" -eq 4 ] || fail "JSON: $n backtraces, expected 4 (the crashed thread and three waiting)"
"$PTREC_TOOL" report --threads crashed "$dump" >"$w/crashed.txt" || fail "--threads crashed failed"
grep -q '^state:' "$w/crashed.txt" && fail "--threads crashed shows other threads' states"

crash blocked_threads_fp
echo "--- the sleeper's section"; section $sleeper | sed '/^last /,$d'
in_order $sleeper nanosleep sleeper_b
section $sleeper | grep -q '^  (stops: rbp unknown: the thread was in a system call; no other' ||
	fail "thread $sleeper: the stack does not stop for the unknown rbp"
for t in $sleeper $reader $waiter; do like_gdb $t start; done
echo PASS
