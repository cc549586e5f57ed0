#!/bin/sh
# Files are never overwritten: without PTREC_DIR the dump goes next to the core file
# ("<core>.ptrec"); when that name is already taken, it goes to the next place (the cwd) as
# ptrec.crasher.PID.TIME.ptrec, and the existing file is left as it was.
. "$top_srcdir/tests/crash/crash_common.sh"
unset PTREC_DIR
core=$(expected_glob 0 11)
case "$core" in
*'*'*|"$work"/ptrec.*) echo "SKIP: core_pattern ($(cat /proc/sys/kernel/core_pattern)) does not name one fixed file"; exit 77 ;;
esac
# First the core file's place.
(cd "$work" && exec "$crasher" segv_null) >"$work/stdout" 2>"$work/stderr" &
pid=$!
wait $pid
cat "$work/stderr"
[ -f "$core" ] || fail "no dump next to the core file: $core"
grep -q "^ptrec: SIGSEGV in pid $pid thread .*: dump $core" "$work/stderr" || fail "stderr line does not name $core"
rm -f "$core" "$core.txt"
# Then with that name taken.
echo "do not touch" >"$core"
(cd "$work" && exec "$crasher" segv_null) >"$work/stdout" 2>"$work/stderr" &
pid=$!
wait $pid
status=$?
cat "$work/stderr"
[ "$status" -eq 139 ] || fail "exit status $status, expected 139"
[ "$(cat "$core")" = "do not touch" ] || fail "the existing $core was changed"
set -- "$work"/ptrec.crasher.$pid.*.ptrec
[ $# -eq 1 ] && [ -f "$1" ] || fail "no dump in the cwd"
[ "$(stat -c %a "$1")" = 600 ] || fail "dump mode is not 600"
grep -q "^ptrec: SIGSEGV in pid $pid thread .*: dump $1" "$work/stderr" || fail "stderr line does not name $1"
"$checker" "$1" >/dev/null || fail "malformed dump"
echo "PASS: fallback"
