#!/bin/sh
# A chain test (chainer.c, crash_common.sh): a recovering server whose SIGSEGV handler (SIGSEGV
# blocked while it runs) leaves with siglongjmp, 1000 times, survives every one of them, as it
# does without libptrec: no dump for those.  Then a real crash under SIG_DFL: exactly one dump,
# of that crash, and the process dies of it.  (The history after the last handled fault is not
# recorded: the hooks resume only at the next crash signal, doc/recorder.md.)
CRASHER=chainer
. "$top_srcdir/tests/crash/crash_common.sh"
(cd "$work" && exec "$crasher" longjmp) >"$work/stdout" 2>"$work/stderr"
status=$?
cat "$work/stderr"
[ "$status" -eq 139 ] || fail "exit status $status, expected 139 (SIGSEGV)"
grep -q '^chainer: recovered 1000 times$' "$work/stderr" || fail "the server did not survive its handled faults"
[ "$(grep -c '^ptrec: SIGSEGV in pid ' "$work/stderr")" -eq 1 ] || fail "expected exactly one ptrec line"
set -- "$PTREC_DIR"/ptrec.chainer.*.ptrec
[ $# -eq 1 ] && [ -f "$1" ] || fail "expected exactly one dump in $PTREC_DIR"
"$checker" "$1" >"$work/check.txt" || fail "malformed dump"
grep -q '^fault si_code 1 addr 0x2bad0$' "$work/check.txt" || fail "the dump does not hold the real crash"
grep -q 'crash_after_guards' "$1.txt" || fail "the report does not name the crashing function"
echo "PASS: longjmp"
