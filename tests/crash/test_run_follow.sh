#!/bin/sh
# Children: by default a program started by the recorded one (fork + exec) is recorded too;
# with --no-follow only CMD is, and CMD's environment no longer carries libptrec (other
# LD_PRELOAD entries stay).
. "$top_srcdir/tests/common/qemu_user.sh"
skip_on_aarch64 "the program is not instrumented: the caller comes from the unwinder, which is x86-64 only so far"
. "$top_srcdir/tests/crash/run_common.sh"

# follow (the default): the child's crash and then the parent's are both dumped
ptrec_run --dir "$work/dumps" -- "$plain" spawn_crash "$plain" segv
[ "$status" -eq 139 ] || fail "exit status $status, expected 139"
grep -q '^child: signal 11$' "$work/out" || fail "the child did not die of SIGSEGV"
[ "$(grep -c '^ptrec: SIGSEGV in pid ' "$work/err")" -eq 2 ] || fail "expected two ptrec lines (child, parent)"
for pid in $(sed -n 's/^ptrec: SIGSEGV in pid \([0-9]*\) .*/\1/p' "$work/err"); do
	dump=$(dumps_of "$pid")
	[ -n "$dump" ] || fail "no dump of pid $pid"
	grep -q parse_header "$dump.txt" || fail "report of pid $pid does not name parse_header"
done
rm -f "$work/dumps"/*

# --no-follow: the child crashes without a dump, the parent is still recorded
ptrec_run --no-follow --dir "$work/dumps" -- "$plain" spawn_crash "$plain" segv
[ "$status" -eq 139 ] || fail "exit status $status, expected 139"
grep -q '^child: signal 11$' "$work/out" || fail "the child did not die of SIGSEGV"
[ "$(ptrec_lines)" -eq 1 ] || fail "expected one ptrec line (the parent's)"
[ "$(ls "$work/dumps"/*.ptrec | wc -l)" -eq 1 ] || fail "expected one dump, the parent's"

# what a child of a --no-follow program gets: no libptrec in LD_PRELOAD, no PTREC_PRELOAD
ptrec_run --no-follow -- "$plain" spawn "$plain" env
[ "$status" -eq 0 ] || fail "exit status $status"
grep -q "^LD_PRELOAD=${san_preload:-unset}\$" "$work/out" ||
	fail "LD_PRELOAD in the child is not what it was before ptrec run (${san_preload:-unset})"
grep -q '^PTREC_PRELOAD=unset$' "$work/out" || fail "PTREC_PRELOAD left for the child"
# and with follow it keeps both
ptrec_run -- "$plain" spawn "$plain" env
grep -q "^LD_PRELOAD=.*$(basename "$PTREC_PRELOAD_LIB")\$" "$work/out" || fail "follow: no libptrec in the child's LD_PRELOAD"
grep -q '^PTREC_PRELOAD=follow$' "$work/out" || fail "follow: PTREC_PRELOAD is not follow"

# from its build tree, with neither --lib nor PTREC_PRELOAD_LIB, ptrec run preloads the library
# built beside it (a build-tree ptrec would otherwise look for an installed one)
built=$(readlink -f "$PTREC_PRELOAD_LIB") # the file behind the soname, as the maps show it
# shellcheck disable=SC2016
PTREC_PRELOAD_LIB= ptrec_run -- /bin/sh -c 'grep -o "/[^ ]*/libptrec\.so[^ ]*" /proc/$$/maps | sort -u'
[ "$status" -eq 0 ] || fail "without --lib or PTREC_PRELOAD_LIB: exit status $status"
[ "$(cat "$work/out")" = "$built" ] ||
	fail "without --lib or PTREC_PRELOAD_LIB: mapped '$(cat "$work/out")', not $built"
echo "PASS: children follow unless --no-follow; the build tree's library by default"
