#!/bin/sh
# A thread started before ptrec_init with every signal blocked (a pool's worker, a server that
# takes its signals with sigwait) calls ptrec_thread_attach(), as doc/recorder.md tells threads
# started before it to, and then faults.  Its fault signals move to the virtual mask then (the
# kernel kills at a fault it finds blocked, SIG_DFL, past libptrec): the crash leaves its dump
# and report, and the thread still reads SIGSEGV back as blocked.  Before, it died of SIGSEGV
# with no dump and no line.
. "$top_srcdir/tests/crash/hardening_common.sh"
hrun pre_blocked_attach
[ "$status" -ne 95 ] || fail "the thread no longer reads SIGSEGV back as blocked"
[ "$status" -eq 139 ] || fail "exit status $status, expected 139"
grep -q '^ptrec: SIGSEGV ' "$work/stderr" || fail "no ptrec line: the fault killed past libptrec"
dump=$(the_dump "$PTREC_DIR") || exit 1
case "$(ptrec_line)" in *": dump $dump, report $dump.txt; signature: "?*) ;; *) fail "the line does not name the dump and report" ;; esac
grep -q crash_here "$dump.txt" || fail "the report does not name crash_here"
echo "PASS: a thread blocked before ptrec_init, attached"
