#!/bin/sh
# A process that used every descriptor still gets its whole dump and report (libptrec keeps one
# in reserve from ptrec_init); without the reserve the stderr line names the real cause.  A
# process that lowered its soft RLIMIT_NOFILE to 3 gets them too (raised while they are written).
. "$top_srcdir/tests/common/qemu_user.sh"
skip_under_qemu_user "qemu-user has no process_vm_readv: the dump has no build-ids to check"
. "$top_srcdir/tests/crash/hardening_common.sh"
hrun emfile
[ "$status" -eq 139 ] || fail "exit status $status, expected 139"
dump=$(the_dump "$PTREC_DIR") || exit 1
"$checker" "$dump" >"$work/check.txt" || fail "malformed dump"
grep -q "complete 1" "$work/check.txt" || fail "dump not complete"
case "$(ptrec_line)" in *": dump $dump"*) ;; *) fail "stderr line does not name the dump" ;; esac
# The maps and names are read before the dump's file is made (the reserve serves them first):
# the dump places the program and names the thread, the report names the crashing function.
grep -q "^buildid [0-9a-f]* $hardener\$" "$work/check.txt" || fail "the dump has no maps (no build-id of $hardener)"
grep -q "^thread $pid name hardener " "$work/check.txt" || fail "the dump does not name the crashing thread"
grep -q crash_here "$dump.txt" || fail "the report does not name crash_here"
rm -f "$PTREC_DIR"/*

hrun emfile_noreserve
[ "$status" -eq 139 ] || fail "exit status $status, expected 139"
case "$(ptrec_line)" in *": no dump written (no free file descriptor"*) ;;
*) fail "stderr line does not name the lack of descriptors: $(ptrec_line)" ;; esac
rm -f "$PTREC_DIR"/*

hrun nofile_low
[ "$status" -eq 139 ] || fail "nofile_low: exit status $status, expected 139"
dump=$(the_dump "$PTREC_DIR") || exit 1
"$checker" "$dump" >"$work/check.txt" || fail "nofile_low: malformed dump"
grep -q "complete 1" "$work/check.txt" || fail "nofile_low: dump not complete"
grep -q "^buildid [0-9a-f]* $hardener\$" "$work/check.txt" || fail "nofile_low: the dump has no maps"
case "$(ptrec_line)" in *": dump $dump, report $dump.txt; signature: "?*) ;; *) fail "nofile_low: stderr line does not name the dump and report" ;; esac
grep -q crash_here "$dump.txt" || fail "nofile_low: the report does not name crash_here"
echo "PASS: descriptors"
