#!/bin/sh
# gdb's backtrace from inside the application's own crash handler reaches the fault, as without
# libptrec.  chainer's `signal` case: its SIGFPE handler resets to SIG_DFL and raise()s, as
# zstd's and Redis's do, and the kernel's core is written at that second signal, so gdb's
# backtrace of the core (here: of the process, stopped at that signal) is taken from inside the
# handler.  libptrec runs the handler on the thread's own stack, which lies above libptrec's
# signal stack: gdb took the frame that switched stacks for a corrupt one and stopped there
# ("previous frame inner to this frame"), short of the signal frame and the faulting function.
. "$top_srcdir/tests/common/qemu_user.sh"
skip_under_qemu_user "gdb cannot ptrace a program qemu-user runs"
set -u
fail() { echo "FAIL: $*"; exit 1; }
: "${top_builddir:?}"
[ -n "${GDB:-}" ] || { echo "SKIP: gdb not found (test oracle)"; exit 77; }
work=$(mktemp -d "$top_builddir/tests/crash.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT
export PTREC_DIR="$work" PTREC_BACKEND=instrumented PTREC_SYSLOG=none
export ASAN_OPTIONS="handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:handle_abort=0:detect_leaks=0:allow_user_segv_handler=1"
unset PTREC_FLAGS PTREC_RING_SIZE

# stops at the division's SIGFPE, passes it on (libptrec, then the handler), stops at the
# handler's raise(SIGFPE): the backtrace there
(cd "$work" && timeout 120 "$GDB" -batch -nx -ex 'set pagination off' -ex run -ex continue \
	-ex bt --args "$top_builddir/tests/crash/chainer" signal) >"$work/gdb.txt" 2>&1 </dev/null
grep -E '^#|Backtrace|signal SIG' "$work/gdb.txt"
[ "$(grep -c 'received signal SIGFPE' "$work/gdb.txt")" -eq 2 ] ||
	fail "gdb did not stop at the fault and at the handler's raise"
grep -q '^#[0-9]* .* fpe_handler ' "$work/gdb.txt" || fail "the backtrace is not taken inside the handler"
grep -q 'Backtrace stopped' "$work/gdb.txt" && fail "gdb's backtrace stopped short of the fault"
sed -n '/<signal handler called>/,$p' "$work/gdb.txt" | grep -q ' crash_divide ' ||
	fail "gdb's backtrace does not reach the signal frame and the faulting crash_divide"
sed -n '/<signal handler called>/,$p' "$work/gdb.txt" | grep -q ' main ' ||
	fail "gdb's backtrace does not reach main"
echo "PASS: gdb's backtrace from the application's handler goes through libptrec to the fault"
