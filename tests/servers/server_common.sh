# server_common.sh — shared steps of the real-server tests (sourced by tests/servers/test_*.sh):
# the build tree's libptrec.so preloaded by `ptrec run`, a scratch folder $work (removed at
# exit, with the server killed if it still runs: set $pid), and the checks of the one dump.
set -u
fail() { echo "FAIL: $*"; exit 1; }
: "${top_builddir:?}" "${PTREC_TOOL:?}"
if [ -n "${SAN_LDFLAGS:-}" ]; then
	# The sanitizer build's libptrec.so needs the ASan runtime preloaded first, which would
	# replace the server's allocator: not the server an operator runs.  The crash path's
	# sanitizer coverage comes from the chain tests.
	echo "SKIP: sanitizer build (ASan would be preloaded into the server)"
	exit 77
fi
soname=$(sed -n 's/^#define PTREC_SONAME "\(.*\)"$/\1/p' "$top_builddir/config.h")
PTREC_PRELOAD_LIB="$top_builddir/libptrec/.libs/$soname"
export PTREC_PRELOAD_LIB
unset PTREC_DIR PTREC_BACKEND PTREC_FLAGS PTREC_RING_SIZE PTREC_PRELOAD LD_PRELOAD \
	STATE_DIRECTORY LOGS_DIRECTORY
export PTREC_SYSLOG=none

work=$(mktemp -d "$top_builddir/tests/server.XXXXXX") || exit 99
pid=
cleanup() {
	[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
mkdir "$work/dumps"

# wait_socket PATH: waits (up to 20 s) for the server $pid to make the unix socket PATH, or to die.
wait_socket() {
	for _ in $(seq 1 100); do
		[ -S "$1" ] && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.2
	done
	return 1
}

# free_port: sets $port to a port of a few (from the test's pid) that no TCP or UDP socket
# uses on this machine (the kernel's socket tables); SKIPs when none is free.
free_port() {
	for port in $((23000 + $$ % 20000)) $((24000 + $$ % 20000)) $((25000 + $$ % 20000)); do
		hex=$(printf '%04X' "$port")
		grep -q "^ *[0-9]*: [0-9A-F]*:$hex " /proc/net/tcp /proc/net/tcp6 /proc/net/udp \
			/proc/net/udp6 2>/dev/null || return 0
	done
	echo "SKIP: no free port"
	exit 77
}

# children: the children of the server ($pid: `ptrec run` execs the server, so it is its pid).
children() {
	for st in /proc/[0-9]*/stat; do
		read -r p _ _ pp _ 2>/dev/null <"$st" && [ "$pp" = "$pid" ] && echo "$p"
	done
}

# list_threads PID: the threads of PID, "TID COMM" per line, into $work/threads.
list_threads() {
	for t in /proc/"$1"/task/*; do
		echo "${t##*/} $(cat "$t/comm")"
	done | sort -n >"$work/threads"
	echo "--- the threads of $1"; cat "$work/threads"
}

# all_threads: the report ($report) holds every thread list_threads listed, under its name.
all_threads() {
	n=$(wc -l <"$work/threads")
	grep -q "^dump: *complete, $n thread(s)\$" "$report" || fail "the dump does not hold all $n threads"
	while read -r tid name; do
		grep -q "^== Thread $tid ($name)" "$report" || fail "no section for thread $tid ($name)"
	done <"$work/threads"
}

# work_in_tmp NAME: $work moved to a fresh folder under /tmp (a short path, for sockets, and one
# outside a build tree another user may not reach), with its dumps folder.
work_in_tmp() {
	rm -rf "$work"
	work=$(mktemp -d "${TMPDIR:-/tmp}/ptrec-$1.XXXXXX") || exit 99
	mkdir "$work/dumps" || exit 99
}

# copies_for USER: as root, a server whose processes run as USER needs the tool and the
# preloaded library where USER can read them: copies in $work/bin (made 755 with $work), used
# from then on ($tool, $PTREC_PRELOAD_LIB).  $tool is $PTREC_TOOL otherwise.
tool=$PTREC_TOOL
copies_for() {
	chmod 755 "$work" && mkdir -p "$work/bin" || exit 99
	cp "$PTREC_TOOL" "$work/bin/ptrec" && cp "$PTREC_PRELOAD_LIB" "$work/bin/" || exit 99
	chmod 755 "$work/bin" "$work/bin/"* || exit 99
	tool=$work/bin/ptrec
	PTREC_PRELOAD_LIB=$work/bin/$(basename "$PTREC_PRELOAD_LIB")
}

# web_user: as root, the user a web server's workers run as (www-data, else nobody; SKIP
# without either) in $user, with copies_for it and $work/dumps its own; not root: $user empty.
web_user() {
	user=
	[ "$(id -u)" -eq 0 ] || return 0
	for u in www-data nobody; do
		id -u "$u" >/dev/null 2>&1 && { user=$u; break; }
	done
	[ -n "$user" ] || { echo "SKIP: running as root and no user www-data or nobody"; exit 77; }
	copies_for "$user"
	chown "$user" "$work/dumps"
}

# wait_log FILE PATTERN WHAT: waits up to 20 s, while $pid lives, for a line matching PATTERN
# (grep) in FILE; fails with FILE shown and "WHAT" when none came.
wait_log() {
	for _ in $(seq 1 100); do
		grep -q "$2" "$1" && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.2
	done
	grep -q "$2" "$1" || { cat "$1"; fail "$3"; }
}

# wait_server SECONDS WHAT: waits for $pid to end (killing it after SECONDS), sets $status.
wait_server() {
	(sleep "$1"; kill -KILL "$pid" 2>/dev/null; echo hung >"$work/hung") >/dev/null 2>&1 </dev/null &
	dog=$!
	wait "$pid"
	status=$?
	kill "$dog" 2>/dev/null
	pid=
	[ ! -e "$work/hung" ] || fail "the server $2: killed after $1 s"
}

# one_dump VICTIM STDERR: exactly one ptrec line (in STDERR) and one 0600 dump in $work/dumps,
# both of pid VICTIM, with its report, which names a SIGSEGV; sets $report and $stack (the
# crashed thread's unwound frames with a symbol name, innermost first, space-separated; C++
# names without their parameters).
one_dump() {
	[ "$(grep -c '^ptrec: SIGSEGV in pid ' "$2")" -eq 1 ] || fail "expected exactly one ptrec line"
	grep -q "^ptrec: SIGSEGV in pid $1 " "$2" || fail "the ptrec line is not of pid $1"
	set -- "$work"/dumps/ptrec.*.ptrec "$1"
	[ $# -eq 2 ] && [ -f "$1" ] || fail "expected exactly one dump in --dir"
	case "$1" in *".$2."*) ;; *) fail "the dump $1 is not of pid $2" ;; esac
	[ "$(stat -c %a "$1")" = 600 ] || fail "the dump's mode is $(stat -c %a "$1"), not 600"
	report=$1.txt
	[ -f "$report" ] || fail "no report beside the dump"
	echo "--- report"; cat "$report"
	grep -q "^pid: *$2 " "$report" || fail "the report is not of pid $2"
	grep -q '^event: *crash, signal SIGSEGV (11)' "$report" || fail "the report does not name the crash"
	stack=$(sed -n '/\[crashed\]/,/^$/p' "$report" |
		sed -n 's/^  #[0-9]* *0x[0-9a-f]* \([A-Za-z_][^ (+]*\)\((.*)\)\{0,1\}+0x.*/\1/p' | tr '\n' ' ')
}

# ptrec_lines FILE: the lines libptrec wrote in FILE, less `ptrec run`'s own note that nothing
# records here (no PT, an uninstrumented server: test_run_not_recording.sh); ptrec_line FILE:
# the one such line.
ptrec_lines() {
	grep '^ptrec: ' "$1" | grep -vc '^ptrec: no branch history will be recorded in '
}
ptrec_line() {
	grep '^ptrec: ' "$1" | grep -v '^ptrec: no branch history will be recorded in '
}

# nothing_for WHAT: the run left no ptrec line in $work/err and no file in $work/dumps (faults
# the program handled itself: WHAT names them in the failure).
nothing_for() {
	[ "$(ptrec_lines "$work/err")" -eq 0 ] || fail "a ptrec line for $1"
	[ -z "$(ls "$work/dumps")" ] || fail "a dump for $1"
}

# sent_by_us: the report names this script (which ran kill) as the signal's sender, and gives
# no fault address: the signal was not a fault.
sent_by_us() {
	grep -q "^sent by:  pid $$, uid $(id -u) (another process)\$" "$report" ||
		fail "the report does not name this test (pid $$) as the signal's sender"
	! grep -q '^fault address:' "$report" || fail "a fault address for a signal sent by kill"
}

# gdb_stack PID: gdb's backtrace of the live process PID (attached, then detached) into
# $work/gdb.txt, as return addresses of frames 1.. (frame 0 may print without its address);
# empty when configure found no gdb or it could not attach.
gdb_stack() {
	: >"$work/gdb.txt"
	[ -n "${GDB:-}" ] || return 0
	"$GDB" -p "$1" -batch -nx -ex bt </dev/null 2>/dev/null |
		sed -n 's/^#\([1-9][0-9]*\) *0x0*\([0-9a-f]*\) in .*/\2/p' >"$work/gdb.txt"
	# gdb's attach interrupted the thread's wait (epoll_wait returns EINTR) and it may still be
	# stopped for a moment after the detach: a process-directed signal sent now can go to
	# another thread, or find this one between two waits.  Let it go back to its wait.
	sleep 0.5
}

# same_as_gdb: the report's unwound stack of the crashed thread holds, from frame 1 on, the
# return addresses gdb gave for the same thread ($work/gdb.txt) in the same order (gdb stops at
# main, ours may go on); a check skipped when gdb gave none.  A function inlined at a frame's
# address is a frame of its own in both ("(inlined into ...)" in ours), and the function it was
# inlined into follows at the same address: gdb prints that one without its address, so ours is
# left out too.
same_as_gdb() {
	[ -s "$work/gdb.txt" ] || { echo "(no gdb backtrace to compare with)"; return 0; }
	sed -n '/\[crashed\]/,/^$/p' "$report" |
		awk '/^  #[0-9]+ +0x/ {
			if (n++ > 0 && !inlined) { a = $2; sub(/^0x/, "", a); print a }
			inlined = index($0, "(inlined into ") > 0
		}' | head -n "$(wc -l <"$work/gdb.txt")" >"$work/ours.txt"
	echo "--- gdb's return addresses, then ours"; paste "$work/gdb.txt" "$work/ours.txt"
	cmp -s "$work/gdb.txt" "$work/ours.txt" || fail "the unwound stack differs from gdb's"
}
