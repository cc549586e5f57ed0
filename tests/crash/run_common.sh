# run_common.sh — shared steps of the `ptrec run` tests (sourced by tests/crash/test_run_*.sh).
# plain_crasher is an unmodified program: no instrumentation, no libptrec, and (in the copy the
# tests run) no debug information.  `ptrec run` preloads the libptrec.so of the build tree (PTREC_PRELOAD_LIB); with
# no PT on these machines the report has registers, stack and backtrace, no branch history.
set -u

fail() { echo "FAIL: $*"; exit 1; }

: "${top_builddir:?}" "${PTREC_TOOL:?}"
plain="$top_builddir/tests/crash/plain_crasher"
soname=$(sed -n 's/^#define PTREC_SONAME "\(.*\)"$/\1/p' "$top_builddir/config.h")
PTREC_PRELOAD_LIB="$top_builddir/libptrec/.libs/$soname"
export PTREC_PRELOAD_LIB
[ -f "$PTREC_PRELOAD_LIB" ] || fail "no $PTREC_PRELOAD_LIB: the shared library was not built"

work=$(mktemp -d "$top_builddir/tests/run.XXXXXX") || exit 99
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
mkdir "$work/dumps" "$work/bin"
# without debug information (configure's CFLAGS add -g): names come from the symbol table
"${OBJCOPY:-objcopy}" --strip-debug "$plain" "$work/bin/plain_crasher" ||
	fail "cannot strip the debug information of plain_crasher (objcopy)"
plain="$work/bin/plain_crasher"
export PTREC_REPORT_TIMEOUT_MS=20000
unset STATE_DIRECTORY LOGS_DIRECTORY PTREC_DIR PTREC_BACKEND PTREC_FLAGS PTREC_RING_SIZE \
	PTREC_PRELOAD LD_PRELOAD
export PTREC_SYSLOG=none
# The sanitizer build's libptrec.so needs the ASan runtime first in the initial library list,
# which an unsanitized program only gets from LD_PRELOAD (ptrec run keeps existing entries
# first); its own handlers stay out of the way as in crash_common.sh.
if [ -n "${SAN_LDFLAGS:-}" ]; then
	LD_PRELOAD=$(${CC:-cc} -print-file-name=libasan.so)
	[ -f "$LD_PRELOAD" ] || fail "sanitizer build but no libasan.so from ${CC:-cc}"
	export LD_PRELOAD
	export ASAN_OPTIONS="handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:handle_abort=0:detect_leaks=0:allow_user_segv_handler=1"
fi
san_preload=${LD_PRELOAD:-}

# ptrec_run ARGS...: `ptrec run ARGS` in $work, stdout and stderr in $work/out and
# $work/err; the exit status in $status.
ptrec_run() {
	(cd "$work" && exec "$PTREC_TOOL" run "$@") >"$work/out" 2>"$work/err"
	status=$?
	echo "--- ptrec run $* (status $status)"; cat "$work/out" "$work/err"
}

# ptrec_lines [FILE]: how many lines libptrec wrote in FILE ($work/err), less `ptrec run`'s
# own note that nothing records here (test_run_not_recording.sh).
ptrec_lines() {
	grep '^ptrec: ' "${1:-$work/err}" | grep -vc '^ptrec: no branch history will be recorded in '
}

# dumps_of PID: the dumps of process PID in $work/dumps.
dumps_of() {
	ls "$work/dumps"/ptrec.*."$1".*.ptrec 2>/dev/null
}
