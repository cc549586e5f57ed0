#!/bin/sh
# A chain test (chainer.c): the application's SIGALRM handler works 3 ms on a 1 ms interval
# timer, so there is always another SIGALRM waiting; then the program faults.  Without libptrec
# the fault kills at once (the kernel's default action).  With it, the crash still ends, as a
# dump and a death by SIGSEGV: libptrec's handler runs with the other signals blocked.  Before,
# the timer handler ran on top of libptrec's handler again and again, and the process never
# died (found killing such a program at random moments: 1 in about 60 kills hung).
set -u
fail() { echo "FAIL: $*"; exit 1; }
: "${top_builddir:?}"
work=$(mktemp -d "$top_builddir/tests/crash.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT
export PTREC_DIR="$work" PTREC_BACKEND=instrumented PTREC_SYSLOG=none PTREC_REPORT_TIMEOUT_MS=20000
export ASAN_OPTIONS="handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:handle_abort=0:detect_leaks=0:allow_user_segv_handler=1"
unset PTREC_FLAGS PTREC_RING_SIZE STATE_DIRECTORY LOGS_DIRECTORY

# (timeout: the failure this guards against is a process that never ends)
timeout -s KILL 60 "$top_builddir/tests/crash/chainer" alarm_storm >"$work/out" 2>"$work/err"
status=$?
cat "$work/err"
[ "$status" -ne 137 ] || fail "the crash did not end in 60 s (killed by the test's timeout)"
[ "$status" -eq 139 ] || fail "exit status $status, expected 139 (SIGSEGV)"
[ "$(grep -c '^ptrec: SIGSEGV in pid ' "$work/err")" -eq 1 ] || fail "expected one ptrec line"
ls "$work"/*.ptrec >/dev/null 2>&1 || fail "no dump in $work"
echo "PASS: a crash under a SIGALRM storm ends with its dump and death"
