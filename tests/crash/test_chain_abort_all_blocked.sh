#!/bin/sh
# A chain test (chainer.c, crash_common.sh):
# the SIGSEGV handler blocks every signal while it runs (sa_mask full, as HotSpot's and many
# servers' do) and calls abort(), which unblocks SIGABRT before raising it: the process dies
# of SIGABRT (134), and the dump names the first fault, SIGSEGV.
CRASHER=chainer
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run abort_all_blocked SEGV 'handle_request > crash_with_all_blocked > crash_write_wild' 1 134
first_fault 0x1bad0
grep -q '^chainer: fatal error, aborting$' "$work/stderr" || fail "the handler did not run"
