#!/bin/sh
# A chain test (chainer.c, crash_common.sh):
# Redis's crash handler with its memory test: it rewrites (and restores)
# every anonymous writable mapping and puts 1 MiB on its stack.  The hooks must not fault on
# rewritten state, the handler must not run on libptrec's small signal stack, and the dump
# still holds the first fault.
CRASHER=chainer
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run memtest SEGV 'handle_request > crash_redis > crash_write_wild'
first_fault 0x1bad0
grep -q '^chainer: memtest passed over [1-9][0-9]* words$' "$work/stderr" || fail "the memory test did not finish"
grep -q '^chainer: crash log complete$' "$work/stderr" || fail "the application's crash log was cut short"
