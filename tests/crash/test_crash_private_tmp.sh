#!/bin/sh
# A server under systemd with PrivateTmp= (implied by DynamicUser=), no StateDirectory=, no
# PTREC_DIR and an unwritable cwd gets its dump in /var/tmp, which in such a unit is the bind
# mount of /tmp/systemd-private-ID-UNIT-RAND/tmp that systemd removes when the unit stops: the
# line says so after the report's path.  As nobody, in a mount namespace whose /var/tmp is a
# directory named like systemd's, the dump lies in that directory and the line carries the
# note; a dump PTREC_DIR puts in a folder under that /var/tmp, and a control run with the
# host's /var/tmp, have no note.
. "$top_srcdir/tests/crash/hardening_common.sh"
as_nobody_setup "mounting a private /var/tmp"
command -v unshare >/dev/null 2>&1 || { echo "SKIP: unshare not found (for a mount namespace)"; exit 77; }
case "$(cat /proc/sys/kernel/core_pattern 2>/dev/null)" in
/*) echo "SKIP: core_pattern is an absolute path: the dump may go next to the core file"; exit 77 ;;
esac
[ -d /var/tmp ] || { echo "SKIP: no /var/tmp"; exit 77; }
mkdir -m 755 "$scratch/cwd" "$scratch/bin"
cp "$hardener" "$PTREC_TOOL" "$scratch/bin/"
priv="$scratch/systemd-private-0123abcd-test.service-XyZ/tmp"
mkdir -p "$priv"
chmod 700 "$scratch/systemd-private-0123abcd-test.service-XyZ"
chmod 1777 "$priv"
unshare -m --propagation private mount --bind "$priv" /var/tmp 2>"$work/unshare" ||
	{ echo "SKIP: cannot bind-mount in a private mount namespace: $(cat "$work/unshare")"; exit 77; }
note=" (this unit's private /var/tmp: systemd removes it when the unit stops; give the unit StateDirectory= or PTREC_DIR)"

# crash PRIVATE [DIR]: `hardener segv` as nobody from the unwritable cwd, without a home, and
# without PTREC_DIR unless DIR; with PRIVATE 1 its /var/tmp is $priv.  Sets pid and status.
crash() {
	unshare -m --propagation private sh -c '
		if [ "$1" = 1 ]; then mount --bind "$2" /var/tmp || exit 98; fi
		dir=PTREC_UNSET=1; [ -z "$6" ] || dir=PTREC_DIR=$6
		cd "$3/cwd" && exec env -u PTREC_DIR -u XDG_STATE_HOME -u STATE_DIRECTORY \
			-u LOGS_DIRECTORY HOME=/nonexistent PTREC_TOOL="$3/bin/ptrec" "$dir" \
			setpriv --reuid="$4" --regid="$5" --clear-groups "$3/bin/hardener" segv' \
		sh "$1" "$priv" "$scratch" "$uid" "$gid" "${2:-}" >"$work/stdout" 2>"$work/stderr" &
	pid=$!
	wait $pid
	status=$?
	echo "--- hardener segv, private /var/tmp $1 (pid $pid, status $status)"
	cat "$work/stderr"
	[ "$status" -ne 98 ] || fail "mount --bind failed in the namespace"
	[ "$status" -eq 139 ] || fail "exit status $status, expected 139"
	[ -z "$(ls -A "$scratch/cwd")" ] || fail "files in the unwritable cwd"
}

crash 1
dump=$(the_dump "$priv") || exit 1
[ -f "$dump.txt" ] || fail "no report beside the dump in the private directory"
name=/var/tmp/$(basename "$dump")
line=$(ptrec_line)
case "$line" in "ptrec: SIGSEGV in pid $pid thread "*": dump $name, report $name.txt$note; signature: "?*) ;;
*) fail "the line does not name the dump and report in the private /var/tmp with the note: $line" ;; esac
[ ! -e "$name" ] || fail "the dump is in the host's /var/tmp too"

mkdir -m 1777 "$priv/sub"
crash 1 /var/tmp/sub
dump=$(the_dump "$priv/sub") || exit 1
name=/var/tmp/sub/$(basename "$dump")
line=$(ptrec_line)
case "$line" in "ptrec: SIGSEGV in pid $pid thread "*": dump $name, report $name.txt; signature: "?*) ;;
*) fail "the line of a dump PTREC_DIR put under the private /var/tmp is not the plain one: $line" ;; esac

crash 0
dump=$(the_dump /var/tmp) || exit 1
rm -f "$dump" "$dump.txt"
line=$(ptrec_line)
case "$line" in "ptrec: SIGSEGV in pid $pid thread "*": dump $dump, report $dump.txt; signature: "?*) ;;
*) fail "the line of a crash with the host's /var/tmp is not the plain one: $line" ;; esac
echo "PASS: a dump in a private /var/tmp says so"
