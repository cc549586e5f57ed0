#!/bin/sh
# A server that calls chroot after ptrec_init (vsftpd, postfix, bind, OpenSSH's privilege
# separation) and then crashes.  Its new root holds no /proc, no report tool and no ELF files,
# and libptrec keeps no way out of it.  Still: the dump places its code (the maps kept open
# before the chroot), PTREC_DIR named by its host path is found inside the new root, and the
# one line names the dump as the host sees it and says why there is no report and how to get
# one; that command then decodes it on the host.
. "$top_srcdir/tests/common/qemu_user.sh"
skip_under_qemu_user "the process holds descriptors out of its new root (qemu-user keeps its own; not analysed further)"
. "$top_srcdir/tests/crash/hardening_common.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: chroot needs root"; exit 77; }
jail=$(cd "$work" && mkdir jail && cd jail && pwd -P) || exit 99
mkdir "$jail/crash"
export PTREC_DIR="$jail/crash"
hrun chroot HARDENER_ROOT="$jail"
[ "$status" -eq 139 ] || fail "exit status $status, expected 139"
# No descriptor is kept that leads out of the new root: from a directory outside it (the old
# root, /proc, /proc/self/task) ".." reaches the host's files, as the user the server becomes.
grep -qx 'ways_out 0' "$work/stdout" ||
	fail "after chroot the process holds a way out of its new root: $(cat "$work/stdout")"
line=$(ptrec_line)
dump=$(the_dump "$jail/crash") || exit 1
case "$line" in
*": dump $dump; no report (the report tool $PTREC_TOOL is not inside the process's new root $jail (chroot after ptrec_init); decode on the host: ptrec report $dump)") ;;
*) fail "the line does not name the dump by its host path and say why there is no report: $line" ;;
esac
$NM "$hardener" >"$work/nm.txt" || fail "nm failed"
"$checker" "$dump" "$work/nm.txt" >"$work/check.txt" || fail "malformed dump: $(cat "$work/check.txt")"
grep -q "^stack:.*crash_here\$" "$work/check.txt" || fail "the ring does not end in crash_here"
grep -q "^buildid [0-9a-f]* $hardener\$" "$work/check.txt" ||
	fail "the dump does not place the program (no maps: /proc is not in the new root)"
"$PTREC_TOOL" report "$dump" >"$work/report.txt" || fail "ptrec report failed on the host"
grep -q "^symbol: *crash_here+" "$work/report.txt" || fail "the report on the host does not place the fault in crash_here"
grep -q "^program: *$hardener " "$work/report.txt" || fail "the report does not name the program"
echo "PASS: chroot"
