#!/bin/sh
# A chain test (chainer.c): while libptrec holds the crash signals, sigaction() and signal()
# read back exactly what the application set, as the kernel does for SIGUSR1 set the same way
# (flags, restorer, mask without SIGKILL); the kernel keeps libptrec's handler; after
# ptrec_shutdown it holds the application's.  No crash, no dump.
. "$top_srcdir/tests/common/qemu_user.sh"
skip_under_qemu_user "the sigaction the program reads back differs from what it set (qemu emulates signal delivery itself; not analysed further)"
set -u
: "${top_builddir:?}"
work=$(mktemp -d "$top_builddir/tests/chain.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT
export PTREC_DIR="$work" PTREC_BACKEND=instrumented
export ASAN_OPTIONS="handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:handle_abort=0:detect_leaks=0:allow_user_segv_handler=1"
(cd "$work" && exec "$top_builddir/tests/crash/chainer" transparency) >"$work/out" 2>&1
status=$?
cat "$work/out"
[ "$status" -eq 0 ] || { echo "FAIL: chainer transparency exited $status"; exit 1; }
grep -q '^chainer: transparent$' "$work/out" || { echo "FAIL: no verdict"; exit 1; }
[ -z "$(find "$work" -name '*.ptrec')" ] || { echo "FAIL: a dump was written without a crash"; exit 1; }
echo "PASS: transparency"
