#!/bin/sh
# A chain test (chainer.c, crash_common.sh):
# a guard-page handler (as JIT runtimes have) maps the page and resumes,
# 1000 times: no dump for those, and recording goes on after each.  Then a real crash, which
# the handler hands to SIG_DFL: exactly one dump, of that crash.
CRASHER=chainer
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run guard_page SEGV 'handle_request > crash_guard_page > crash_after_guards'
first_fault 0x2bad0 'the real crash'
grep -q '^chainer: 1000 guard faults handled$' "$work/stderr" || fail "the guard faults were not all handled"
grep -q '^chainer: rseq \(on -> on\|off -> off\)$' "$work/stderr" || fail "the thread's rseq registration did not come back after the handled faults"
