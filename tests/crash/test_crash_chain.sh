#!/bin/sh
# A crash test (see tests/crash/crash_common.sh): the program had its own SIGSEGV handler before
# ptrec_init.  libptrec writes its dump and report first, then calls that handler, which says
# so and exits with status 42.
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run chain SEGV 'handle_request > crash_segv_null' 1 42
grep -q '^crasher: previous handler ran$' "$work/stderr" || fail "the previous handler did not run"
