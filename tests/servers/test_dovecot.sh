#!/bin/sh
# A real mail server made of many processes: Debian's Dovecot with IMAP (a test-only peer
# configure finds; .ci/run installs dovecot-imapd) run unmodified under `ptrec run` as root in
# the foreground (-F, as its systemd unit runs it).  Its master forks and execs every service
# (log, config, anvil, auth, stats, imap-login) with a clean environment: only the variables
# import_environment names reach them, so the configuration passes libptrec's (LD_PRELOAD and
# PTREC_*), as it must under `ptrec run`.  The services' stderr is a pipe to the log process,
# which writes what they say into Dovecot's log.
# - imap-login, which serves an IMAP session (a process each), runs as dovenull in a new root
#   (chroot after libptrec's init), so it is not dumpable: killed by SIGSEGV it leaves no file,
#   its ptrec line in Dovecot's log says why, and the master logs "child N killed with signal
#   11".
#   (Dovecot makes even its root services not dumpable: "core not dumped - set
#   /proc/sys/fs/suid_dumpable to 2", it says of them without libptrec.)
# - The master, killed by SIGSEGV, dies of it (status 139, as without libptrec, which dumps
#   its core) with one 0600 dump and report of itself, with gdb's stack.
if [ -z "${DOVECOT_BIN:-}" ]; then
	echo "SKIP: configure found no dovecot (Debian package dovecot-imapd)"
	exit 77
fi
[ "$(id -u)" -eq 0 ] || { echo "SKIP: Dovecot's master runs as root"; exit 77; }
for u in dovecot dovenull; do
	id -u "$u" >/dev/null 2>&1 || { echo "SKIP: no user $u (Dovecot's package makes it)"; exit 77; }
done
[ -x "$(dirname "$DOVECOT_BIN")/../lib/dovecot/imap-login" ] ||
	{ echo "SKIP: no imap-login (Debian package dovecot-imapd)"; exit 77; }
command -v bash >/dev/null || { echo "SKIP: no bash for the IMAP request"; exit 77; }
. "$top_srcdir/tests/servers/server_common.sh"

work_in_tmp dovecot
chmod 755 "$work"
copies_for dovecot # the services' users read libptrec.so
free_port
mkdir "$work/run" "$work/state" || exit 99
cat >"$work/dovecot.conf" <<CONF
base_dir = $work/run
state_dir = $work/state
log_path = $work/dovecot.log
protocols = imap
listen = 127.0.0.1
ssl = no
passdb {
  driver = static
  args = password=unused
}
userdb {
  driver = static
  args = uid=dovenull gid=dovenull home=$work/home/%u
}
service imap-login {
  inet_listener imap {
    port = $port
  }
}
import_environment = TZ LD_PRELOAD PTREC_PRELOAD PTREC_DIR PTREC_REPORT_TIMEOUT_MS PTREC_TOOL PTREC_SYSLOG
CONF

(cd "$work" && exec "$tool" run --dir "$work/dumps" --report-timeout 30000 -- \
	"$DOVECOT_BIN" -F -c "$work/dovecot.conf") >"$work/out" 2>"$work/err" &
pid=$!

# session: an IMAP session (greeting, CAPABILITY) served by an imap-login process of its own,
# kept open until $work/bye exists; waits for the answer to CAPABILITY.
session() {
	rm -f "$work/bye" "$work/imap.out"
	bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
		head -n 1 <&3; printf "a CAPABILITY\r\n" >&3; head -n 2 <&3
		while [ -d "$2" ] && [ ! -e "$2/bye" ]; do sleep 0.1; done
		printf "b LOGOUT\r\n" >&3' session "$port" "$work" >"$work/imap.out" 2>&1 &
	client=$!
	for _ in $(seq 1 150); do
		grep -q '^a OK' "$work/imap.out" && return 0
		kill -0 "$client" 2>/dev/null || break
		sleep 0.2
	done
	cat "$work/imap.out" "$work/err" "$work/dovecot.log"
	fail "dovecot did not serve an IMAP request"
}
# bye: ends the session
bye() {
	touch "$work/bye"
	wait "$client"
}
# service NAME: the pid of the master's child running Dovecot's service NAME (its comm)
service() {
	for c in $(children); do
		[ "$(cat "/proc/$c/comm" 2>/dev/null)" = "$1" ] && echo "$c"
	done
}
# killed NAME VICTIM: waits for the master to log the service NAME's child VICTIM as killed by
# SIGSEGV
killed() {
	for _ in $(seq 1 150); do
		grep -q "service($1): child $2 killed with signal 11 (" "$work/dovecot.log" && return 0
		sleep 0.2
	done
	cat "$work/dovecot.log"
	fail "the master did not see $1's child $2 die of SIGSEGV"
}

for _ in $(seq 1 150); do
	grep -q 'starting up for imap' "$work/dovecot.log" 2>/dev/null && break
	sleep 0.2
done
session
login=$(service imap-login)
[ -n "$login" ] || fail "no imap-login process"
[ "$(stat -c %U "/proc/$login")" = dovenull ] || fail "imap-login does not run as dovenull"
[ "$(readlink "/proc/$login/root")" = "$work/run/login" ] || fail "imap-login is not in its new root"
grep -q '/libptrec\.so' "/proc/$login/maps" || fail "imap-login has no libptrec mapped"
kill -SEGV "$login"
killed imap-login "$login"
bye
line=$(grep "ptrec: SIGSEGV in pid $login " "$work/dovecot.log")
case "$line" in
*" imap-login: Error: ptrec: SIGSEGV in pid $login thread $login (imap-login): no dump written (the process is not dumpable ("*) ;;
*) cat "$work/dovecot.log"; fail "Dovecot's log does not say why imap-login left no dump: $line" ;;
esac
[ -z "$(ls "$work/dumps")" ] || fail "a file was written for a process that is not dumpable"

# the master, killed by SIGSEGV, dies of it
gdb_stack "$pid"
master=$pid
kill -SEGV "$pid"
wait_server 60 "did not die"
echo "--- dovecot (status $status), its log:"; cat "$work/dovecot.log"
echo "--- stderr:"; cat "$work/err"
[ "$status" -eq 139 ] || fail "dovecot ended with status $status, expected 139 (killed by SIGSEGV)"
one_dump "$master" "$work/err"
sent_by_us
same_as_gdb
case "$stack" in
*"io_loop_run "*"main "*) ;;
*) fail "the crashed master's stack is not Dovecot's I/O loop under main: $stack" ;;
esac
echo "PASS: dovecot under ptrec run: a chrooted login process's crash explained, the master's dumped"
