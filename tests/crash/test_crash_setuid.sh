#!/bin/sh
# A setuid-root program run by an ordinary user (nobody):
# - as the kernel leaves it (not dumpable unless fs.suid_dumpable is 1), it leaves no file;
# - once it makes itself dumpable again, its dump never lands where nobody could not create
#   files (its cwd, root's 0755 directory): the first place nobody may write is /var/tmp, under
#   a name with an unpredictable suffix.
. "$top_srcdir/tests/common/qemu_user.sh"
skip_under_qemu_user "binfmt_misc without the C flag runs set-user-ID programs as their caller"
. "$top_srcdir/tests/crash/hardening_common.sh"
as_nobody_setup "making a setuid-root copy"
mkdir -m 755 "$scratch/cwd"
cp "$hardener" "$scratch/hardener"
chmod 4755 "$scratch/hardener"
[ "$(head -c 4 "$scratch/hardener" | od -An -c | tr -d ' ')" = '177ELF' ] ||
	{ echo "SKIP: $hardener is not an ELF program (a libtool wrapper?)"; exit 77; }

suid_run() {
	as_nobody "$scratch/cwd" "$scratch/hardener" "$1"
	grep -q 'hardener: ptrec_init' "$work/stderr" && { echo "SKIP: ptrec_init failed in the setuid program"; exit 77; }
	[ "$status" -eq 139 ] || fail "exit status $status, expected 139"
	[ -z "$(ls -A "$scratch/cwd")" ] || fail "files in the user's unwritable cwd: $(ls "$scratch/cwd")"
}

mode=$(cat /proc/sys/fs/suid_dumpable)
if [ "$mode" != 1 ]; then
	suid_run segv
	line=$(ptrec_line)
	case "$line" in *": no dump written (the process "*) ;;
	*) fail "setuid program (fs.suid_dumpable $mode): stderr line does not say why no dump: $line" ;;
	esac
	for d in /var/tmp /tmp; do
		ls "$d" | grep -q "ptrec\.hardener\.$pid\." && fail "a dump of pid $pid in $d"
	done
fi

suid_run redumpable
line=$(ptrec_line)
set -- /var/tmp/ptrec.hardener.$pid.*.ptrec
[ $# -eq 1 ] && [ -f "$1" ] || fail "no dump in /var/tmp: $line"
dump=$1
rm -f "$dump" "$dump.txt"
case "$dump" in
/var/tmp/ptrec.hardener.$pid.[0-9]*.[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f].ptrec) ;;
*) fail "the name in /var/tmp has no random suffix: $dump" ;;
esac
case "$line" in *"dump $dump"*) ;; *) fail "stderr line does not name $dump: $line" ;; esac
echo "PASS: setuid programs write only where the real user may"
