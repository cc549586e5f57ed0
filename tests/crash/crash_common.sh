# crash_common.sh — shared steps of the crash tests (sourced by tests/crash/test_crash_*.sh).
#
# crash_run CASE SIGNAL STACK [EVENT [STATUS]]
#   Runs `crasher CASE` in a fresh directory with libptrec recording (instrumented backend),
#   then checks, like a person would after a crash:
#   - the process died of SIGNAL (exit status 128 + number), or exited with STATUS when given
#     (a previous handler that exits);
#   - exactly one stderr line from ptrec names SIGNAL (or the assertion), the pid and the dump;
#   - the dump lies in PTREC_DIR (the first place tried), is mode 0600 and well formed
#     (dump_check);
#   - the crashing thread's ring replays to a call stack ending in STACK (symbols from nm), or,
#     for STACK = "last:F", its newest record lies in function F;
#   - the dump holds the stack near SP and the vDSO, and the crasher's build-id (as readelf
#     reads it from the file, when readelf is there);
#   - the report (DUMP.txt, mode 0600) names the crashing function and its caller, when
#     `ptrec report` is implemented; otherwise the stderr line says how to decode later;
#   - the stderr line ends with the report's crash signature (in $crash_signature after).
#
# first_fault ADDR [WHAT]
#   After crash_run: the dump's fault is a SEGV_MAPERR at ADDR (WHAT names it in the failure,
#   "the first fault" unless given).
set -u

fail() { echo "FAIL: $*"; exit 1; }
. "${top_srcdir:?}/tests/common/qemu_user.sh"

: "${top_builddir:?}" "${PTREC_TOOL:?}"
[ -n "${NM:-}" ] || { echo "SKIP: nm not found (test oracle)"; exit 77; }
crasher="$top_builddir/tests/crash/${CRASHER:-crasher}"
checker="$top_builddir/tests/crash/dump_check"
comm=$(basename "$crasher" | cut -c1-15) # the kernel's %e and the fallback name

work=$(mktemp -d "$top_builddir/tests/crash.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT
mkdir "$work/fallback"
export PTREC_DIR="$work/fallback"
export PTREC_REPORT_TIMEOUT_MS=20000
# The sanitizer build links the ASan runtime: keep its own handlers out of the way.
# Reports go nowhere else: no systemd directories, no syslog datagrams from the tests.
unset STATE_DIRECTORY LOGS_DIRECTORY
export PTREC_SYSLOG=none
export ASAN_OPTIONS="handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:handle_abort=0:detect_leaks=0:allow_user_segv_handler=1"
# The instrumented backend on every machine (a PT machine would otherwise record PT packets).
export PTREC_BACKEND=instrumented
unset PTREC_FLAGS PTREC_RING_SIZE

# Expected dump path as a shell glob: PTREC_DIR when set (the first place), else next to the
# core file from core_pattern (independent of crash/dump_path.c), else the cwd.
expected_glob() {
	local pid=$1 signo=$2 pattern uses base
	if [ -n "${PTREC_DIR:-}" ]; then echo "$PTREC_DIR/ptrec.$comm.$pid.*.ptrec"; return; fi
	pattern=$(cat /proc/sys/kernel/core_pattern 2>/dev/null || echo core)
	uses=$(cat /proc/sys/kernel/core_uses_pid 2>/dev/null || echo 0)
	case "$pattern" in
	"|"*) echo "$work/ptrec.$comm.$pid.*.ptrec"; return ;;
	esac
	base=$(printf '%s' "$pattern" | sed -e 's/%%/\x01/g' -e "s/%[pP]/$pid/g" -e "s/%e/$comm/g" \
		-e 's/%[iItcE]/*/g' -e "s/%h/$(uname -n)/g" -e "s/%u/$(id -u)/g" -e "s/%g/$(id -g)/g" \
		-e "s/%s/$signo/g" -e 's/%.//g' -e 's/\x01/%/g')
	case "$pattern" in *%p*) ;; *) [ "$uses" = 1 ] && base="$base.$pid" ;; esac
	case "$base" in /*) ;; *) base="$work/$base" ;; esac
	if [ -w "$(dirname "$base")" ]; then echo "$base.ptrec"
	else echo "$work/ptrec.$comm.$pid.*.ptrec"; fi
}

crash_run() {
	local case=$1 sig=$2 stack=$3 event=${4:-1} want signo pid status dump line fn caller
	case $sig in SEGV) signo=11 ;; BUS) signo=7 ;; ILL) signo=4 ;; FPE) signo=8 ;;
	ABRT) signo=6 ;; TRAP) signo=5 ;; SYS) signo=31 ;; *) fail "unknown signal $sig" ;; esac
	want=${5:-$((128 + signo))}
	(cd "$work" && exec "$crasher" "$case") >"$work/stdout" 2>"$work/stderr" &
	pid=$!
	# A crash that hangs the process fails the test instead of hanging it.
	(trap 'kill $s 2>/dev/null; exit 0' TERM; sleep "${CRASH_HANG_S:-120}" & s=$!
	 wait $s && kill -KILL $pid && echo hung >"$work/hung") >/dev/null 2>&1 </dev/null &
	dog=$!
	wait $pid
	status=$?
	kill $dog 2>/dev/null
	[ ! -e "$work/hung" ] || { cat "$work/stderr"; fail "crasher $case hung: killed after ${CRASH_HANG_S:-120} s"; }
	echo "--- stderr of crasher $case (pid $pid, status $status)"; cat "$work/stderr"
	if [ "$status" -eq 77 ]; then echo "SKIP: this machine cannot produce the $case crash"; exit 77; fi
	[ "$status" -eq "$want" ] || fail "exit status $status, expected $want"

	[ "$(grep -c '^ptrec: ' "$work/stderr")" -eq 1 ] || fail "expected exactly one ptrec line on stderr"
	line=$(grep '^ptrec: ' "$work/stderr")
	if [ "$event" = 2 ]; then
		case "$line" in "ptrec: assertion failed: "*" in pid $pid thread "*) ;;
		*) fail "stderr line does not name the assertion and pid $pid: $line" ;; esac
	else
		case "$line" in "ptrec: SIG$sig in pid $pid thread "*) ;;
		*) fail "stderr line does not name SIG$sig and pid $pid: $line" ;; esac
	fi

	# shellcheck disable=SC2086
	set -- $(expected_glob "$pid" "$signo")
	[ $# -eq 1 ] && [ -f "$1" ] || fail "no dump at the expected place $(expected_glob "$pid" "$signo")"
	dump=$1
	case "$line" in *"dump $dump"*) ;; *) fail "stderr line does not name the dump $dump" ;; esac
	[ "$(stat -c %a "$dump")" = 600 ] || fail "dump mode is $(stat -c %a "$dump"), not 600"

	$NM "$crasher" >"$work/nm.txt" || fail "nm failed"
	"$checker" "$dump" "$work/nm.txt" >"$work/check.txt" || fail "malformed dump: $(cat "$work/check.txt")"
	echo "--- dump_check"; cat "$work/check.txt"
	grep -q "^event $event signo $signo " "$work/check.txt" || fail "dump does not record event $event signal $signo"
	grep -q "^event .* complete 1 " "$work/check.txt" || fail "dump has no END record"
	case $stack in
	last:*)
		grep -q "^last: ${stack#last:}\$" "$work/check.txt" || fail "the newest record is not in ${stack#last:}" ;;
	*)
		grep -q "^stack:.*$stack\$" "$work/check.txt" || fail "crashing thread's ring does not end in: $stack" ;;
	esac
	grep -q "^status backend instrumented\$" "$work/check.txt" || fail "STATUS does not name the backend"
	grep -q "^ring_size 65536\$" "$work/check.txt" || fail "STATUS does not give the ring size"
	grep -q "^memory kind 3 " "$work/check.txt" || fail "no stack bytes in the dump"
	# (qemu-user maps no [vdso] for aarch64 programs)
	grep -q "^memory kind 2 " "$work/check.txt" || under_qemu_user || fail "no vDSO in the dump"
	# (qemu-user has no process_vm_readv: the writer reads no ELF notes from memory there)
	if command -v readelf >/dev/null 2>&1 && ! under_qemu_user; then
		id=$(readelf -n "$crasher" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
		[ -z "$id" ] || grep -q "^buildid $id $crasher\$" "$work/check.txt" ||
			fail "no build-id $id for $crasher in the dump"
	fi

	fn=${stack##* > }; fn=${fn#last:}
	caller=${stack% > *}; caller=${caller##* > }; caller=${caller#last:}
	[ -f "$dump.txt" ] || fail "no report $dump.txt"
	[ "$(stat -c %a "$dump.txt")" = 600 ] || fail "report mode is not 600"
	case "$line" in *", report $dump.txt; signature: "?*) ;;
	*) fail "stderr line does not name the report and the signature" ;; esac
	# the line's signature is the report's (read back from it at crash time)
	crash_signature=${line##*; signature: }
	[ "$crash_signature" = "$(sed -n 's/^signature: //p' "$dump.txt" | head -n 1)" ] ||
		fail "the line's signature '$crash_signature' is not the report's"
	grep -q "$fn" "$dump.txt" || fail "report does not name the crashing function $fn"
	grep -q "$caller" "$dump.txt" || fail "report does not name the caller $caller"
	grep -q '^== Recorder$' "$dump.txt" || fail "report has no Recorder section"
	grep -q '^  backend [a-z_]*$' "$dump.txt" || fail "report does not say which backend recorded"
	crash_pid=$pid crash_report=$dump.txt crash_dump=$dump # for checks of the caller's own
	echo "PASS: $case"
}

first_fault() {
	grep -q "^fault si_code 1 addr $1\$" "$work/check.txt" ||
		fail "the dump does not hold ${2:-the first fault} (SEGV_MAPERR at $1)"
}
