#!/bin/sh
# A chain test (chainer.c, crash_common.sh):
# Redis 7's crash handler cancels and joins its own threads before its memory test.  A
# joined thread's exit runs libptrec's thread-exit destructor while the crashing thread,
# whose crash holds every ring, waits in pthread_join: the exit must not wait for the crash,
# or the server hangs instead of dying.  One dump, of the first fault, with the joined
# worker's ring in it under its name, marked as ended while the crash was handled; the crash
# log is complete; the process dies of SIGSEGV.
CRASHER=chainer
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run kill_threads SEGV 'handle_request > crash_kill_threads > crash_redis > crash_write_wild'
grep -q '^chainer: threads killed$' "$work/stderr" || fail "the handler did not get past joining its thread"
first_fault 0x1bad0
grep -q '^chainer: crash log complete$' "$work/stderr" || fail "the application's crash log was cut short"
grep -q '^event 1 signo 11 tid [0-9]* threads 2 ' "$work/check.txt" || fail "the dump does not hold both threads"
grep -q '^thread [0-9]* name bio_worker flags 0x24 records [1-9]' "$work/check.txt" ||
	fail "the joined worker's ring is not in the dump under its name, flagged EXITED (0x20)"
grep -q '^== Thread [0-9]* (bio_worker) \[ended while the crash was handled\]$' "$PTREC_DIR"/*.ptrec.txt ||
	fail "the report does not say the worker ended while the crash was handled"
