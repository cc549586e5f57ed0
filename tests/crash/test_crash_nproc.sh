#!/bin/sh
# A service that lowered its soft RLIMIT_NPROC to 1 (a sandbox that forbids forking) still gets
# the report of its crash: the limit is raised to the hard one while the report's processes
# start.  The limit counts only for an ordinary user: run as nobody.
. "$top_srcdir/tests/crash/hardening_common.sh"
as_nobody_setup "running as an ordinary user"
chown "$uid:$gid" "$scratch"
export PTREC_DIR="$scratch"
nobody_run() {
	as_nobody "$scratch" "$hardener" "$1"
	[ "$status" -eq 139 ] || fail "$1: exit status $status, expected 139"
}
nobody_run segv
case "$(ptrec_line)" in *", report $scratch/"*) ;;
*) echo "SKIP: nobody gets no report here at all (the tool is not reachable for nobody?)"; exit 77 ;;
esac
rm -f "$scratch"/*
nobody_run nproc_low
dump=$(the_dump "$scratch") || exit 1
case "$(ptrec_line)" in *": dump $dump, report $dump.txt; signature: "?*) ;;
*) fail "nproc_low: the stderr line does not name the dump and its report" ;; esac
grep -q crash_here "$dump.txt" || fail "nproc_low: the report does not name crash_here"
echo "PASS: nproc"
