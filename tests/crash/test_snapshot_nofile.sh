#!/bin/sh
# A process whose soft RLIMIT_NOFILE leaves no descriptor free (a sandboxed worker that lowered
# it to 3) still gets its snapshot: the dump and its report are opened by a child sharing the
# descriptor table with a limit of its own raised, while the application's limit stays as it
# set it (the crash path may raise it, the process is dying; a snapshot's process goes on) and
# no descriptor of libptrec's is left behind.
. "$top_srcdir/tests/common/qemu_user.sh"
skip_under_qemu_user "ptrec_snapshot_path fails under the lowered RLIMIT_NOFILE (qemu-user holds descriptors of its own; not analysed further)"
. "$top_srcdir/tests/crash/hardening_common.sh"
hrun snapshot_nofile
cat "$work/stdout"
[ "$status" -eq 0 ] || fail "exit status $status, expected 0"
# shellcheck disable=SC2046
set -- $(sed -n 's/^snapshot //p' "$work/stdout")
[ "${1:-}" = 0 ] || fail "ptrec_snapshot_path returned ${1:-nothing}, expected 0"
report=$2
[ -f "${report%.txt}" ] || fail "no dump ${report%.txt}"
[ -f "$report" ] || fail "no report $report"
grep -q snapshot_nofile "$report" || fail "the report does not name snapshot_nofile"
grep -q '^soft 3$' "$work/stdout" || fail "the application's soft RLIMIT_NOFILE changed"
# shellcheck disable=SC2046
set -- $(sed -n 's/^fds //p' "$work/stdout")
[ "$1" = "$2" ] || fail "descriptors open before the snapshot: $1, after: $2"
echo "PASS: snapshot with no descriptor free"
