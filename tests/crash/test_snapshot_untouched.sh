#!/bin/sh
# A snapshot's report runs in processes that share the application's memory and never copy it
# (tests/crash/reaper.c untouched): after the report, writing 4096 pages the application wrote
# before costs it no copy-on-write faults.  The report itself is written.
. "$top_srcdir/tests/common/qemu_user.sh"
skip_under_qemu_user "qemu-user emulates CLONE_VM only for threads: the report runner is a child the application sees"
. "$top_srcdir/tests/crash/snapshot_common.sh"
: "${PTREC_TOOL:?}"
prog="$top_builddir/tests/crash/reaper"
snapshot_setup untouched
"$prog" untouched >"$work/stdout" 2>"$work/stderr"
st=$?
cat "$work/stderr" "$work/stdout"
[ $st -eq 0 ] || fail "reaper exited with $st"
report=$(sed -n 's/^report \(.*\): [0-9]* page faults.*/\1/p' "$work/stdout")
[ -s "$report" ] || fail "no report at '$report'"
grep -q "untouched" "$report" || fail "$report does not say why it was taken"
echo "PASS: snapshot report leaves the application's memory untouched"
