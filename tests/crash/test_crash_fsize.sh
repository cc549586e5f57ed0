#!/bin/sh
# A hardening test (hardener.c): a crash under a small RLIMIT_FSIZE.  Writing past it would send
# SIGXFSZ and end the process with it; instead the process dies of its SIGSEGV with one line:
# - soft limit 1 KiB, hard unlimited: the whole dump and its report are written;
# - hard limit 1 KiB: no dump fits anywhere, and the line says so (EFBIG).
. "$top_srcdir/tests/crash/hardening_common.sh"
hrun_limited() { (ulimit ${1:-} -f 1 && hrun segv); status=$(cat "$work/status"); }
hrun() { (cd "$work" && exec "$hardener" "$1") >"$work/stdout" 2>"$work/stderr"; echo $? >"$work/status"; cat "$work/stderr"; }

hrun_limited -S
[ "$status" -eq 139 ] || fail "soft limit: exit status $status, expected 139 (SIGSEGV)"
case "$(ptrec_line)" in *": dump $PTREC_DIR/"*", report "*) ;; *) fail "soft limit: no dump and report named" ;; esac
dump=$(ls "$PTREC_DIR"/ptrec.*.ptrec) || fail "soft limit: no dump"
"$checker" "$dump" >"$work/check.txt" || fail "soft limit: malformed dump"
grep -q "complete 1" "$work/check.txt" || fail "soft limit: dump not complete"
grep -q crash_here "$dump.txt" || fail "soft limit: the report does not name crash_here"
rm -f "$PTREC_DIR"/*

hrun_limited
[ "$status" -eq 139 ] || fail "hard limit: exit status $status, expected 139 (SIGSEGV)"
case "$(ptrec_line)" in *"no dump written"*EFBIG*) ;; *) fail "hard limit: the line does not say EFBIG" ;; esac
echo "PASS: fsize"
