#!/bin/sh
# `ptrec run -- iso_crasher CASE`: a program built as strict ISO C, where <signal.h> turns
# signal() into glibc's __sysv_signal (zstd is built so, with a SIGSEGV handler that prints a
# backtrace and raises again), and the other libc functions that set a crash signal's action or
# mask (ssignal, sighold, sigignore, siginterrupt), which glibc implements without calling the
# interposed sigaction or sigprocmask.  Each must go through libptrec: the crash leaves one dump
# and the program sees what it set, as without ptrec run.
. "$top_srcdir/tests/crash/run_common.sh"
iso="$top_builddir/tests/crash/iso_crasher"

# crashed CASE: the fault killed the program with SIGSEGV and left one dump.
crashed() {
	[ "$status" -eq 139 ] || fail "$1: exit status $status, expected 139 (SIGSEGV)"
	[ "$(grep -c '^ptrec: SIGSEGV in pid ' "$work/err")" -eq 1 ] ||
		fail "$1: expected one ptrec line on stderr (libptrec did not see the crash)"
	pid=$(sed -n 's/^ptrec: SIGSEGV in pid \([0-9]*\) .*/\1/p' "$work/err")
	[ -n "$(dumps_of "$pid")" ] || fail "$1: no dump of pid $pid"
	grep -q 'fault' "$(dumps_of "$pid").txt" || fail "$1: the report does not name the fault"
}

for how in signal ssignal; do
	ptrec_run --dir "$work/dumps" -- "$iso" $how
	crashed $how
	grep -q '^iso_crasher: handler ran$' "$work/err" || fail "$how: the program's handler did not run"
done

ptrec_run --dir "$work/dumps" -- "$iso" sighold
crashed sighold
grep -qx 'held' "$work/out" || fail "sighold: the mask read back does not hold SIGSEGV"

ptrec_run --dir "$work/dumps" -- "$iso" sigignore
crashed sigignore
grep -qx 'ignored' "$work/out" || fail "sigignore: the action read back is not SIG_IGN"

ptrec_run --dir "$work/dumps" -- "$iso" siginterrupt
[ "$status" -eq 0 ] || fail "siginterrupt: exit status $status"
[ "$(cat "$work/out")" = "restart off
restart on" ] || fail "siginterrupt: SA_RESTART read back is not what siginterrupt set"
[ "$(ptrec_lines)" -eq 0 ] || fail "siginterrupt: ptrec reported something"
echo "PASS: strict ISO C's signal() and glibc's other signal setters keep libptrec first"
