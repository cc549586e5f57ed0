#!/bin/sh
# A server whose stderr is a pipe with no reader left (its supervisor's logger died, `| head`):
# the crash still ends it with the crash signal, not with the SIGPIPE of libptrec's stderr
# line, and leaves its dump and report.
. "$top_srcdir/tests/crash/hardening_common.sh"
mkfifo "$work/pipe" || fail "mkfifo failed"
(exec 3<"$work/pipe") & # a reader that opens the pipe and is gone at once
exec 4>"$work/pipe"
wait
# exec: no shell is left that would write "Segmentation fault" to that pipe itself
(exec "$hardener" segv 2>&4)
status=$?
exec 4>&-
echo "--- hardener segv, stderr a pipe without reader (status $status)"
[ "$status" -eq 139 ] || fail "exit status $status, expected 139 (SIGSEGV)"
set -- "$PTREC_DIR"/ptrec.hardener.*.ptrec
[ $# -eq 1 ] && [ -f "$1" ] || fail "no single dump in $PTREC_DIR"
grep -q crash_here "$1.txt" || fail "the report does not name crash_here"
echo "PASS: stderr pipe"
