#!/bin/sh
# A real privilege-separated server: Debian's OpenSSH sshd (a test-only peer configure finds;
# .ci/run installs openssh-server) run unmodified under `ptrec run` as root in the foreground
# (-D, as its systemd unit runs it; -e: its log on stderr).  Each connection is a child that
# re-executes sshd ([accepted], the privileged monitor), which forks the unprivileged [net]
# child: chroot to the privilege-separation folder, setuid sshd, and a seccomp filter that
# kills the process at any system call not on a short list.
# - [net] killed by SIGSEGV dies of SIGSEGV, as without libptrec (read from its wait status
#   while the monitor is stopped and cannot reap it), not of a SIGSYS the filter raised at
#   libptrec's crash path; it writes nothing.
# - The monitor of another connection, killed by SIGSEGV, leaves one 0600 dump and report of
#   itself with gdb's stack; the listener serves a new connection after both.
# sshd then ends on SIGTERM with status 0 ("Received signal 15; terminating."), as without
# libptrec.
if [ -z "${SSHD_BIN:-}" ]; then
	echo "SKIP: configure found no sshd (Debian package openssh-server)"
	exit 77
fi
[ "$(id -u)" -eq 0 ] || { echo "SKIP: sshd's privilege separation needs root"; exit 77; }
id -u sshd >/dev/null 2>&1 || { echo "SKIP: no user sshd (openssh-server makes it)"; exit 77; }
command -v ssh-keygen >/dev/null || { echo "SKIP: no ssh-keygen for a host key"; exit 77; }
command -v bash >/dev/null || { echo "SKIP: no bash for the connections"; exit 77; }
. "$top_srcdir/tests/servers/server_common.sh"

work_in_tmp sshd
free_port
# the privilege-separation folder Debian's sshd is built with (its unit makes it:
# RuntimeDirectory=sshd)
privsep=/run/sshd
made=
if [ ! -d "$privsep" ]; then
	mkdir -m 755 "$privsep" || { echo "SKIP: cannot make $privsep"; exit 77; }
	made=yes
fi
trap 'cleanup; [ -z "$made" ] || rmdir "$privsep"' EXIT
ssh-keygen -q -t ed25519 -N '' -f "$work/host_key" || fail "ssh-keygen failed"
cat >"$work/sshd_config" <<CONF
Port $port
ListenAddress 127.0.0.1
HostKey $work/host_key
PidFile $work/sshd.pid
UsePAM no
LogLevel DEBUG1
CONF

(cd "$work" && exec "$PTREC_TOOL" run --dir "$work/dumps" --report-timeout 30000 -- \
	"$SSHD_BIN" -D -e -f "$work/sshd_config") >"$work/out" 2>"$work/err" &
pid=$!
wait_log "$work/err" "^Server listening on 127.0.0.1 port $port" "sshd did not start"

# kids_of PARENT: the children of PARENT
kids_of() {
	for st in /proc/[0-9]*/stat; do
		read -r p _ _ pp _ 2>/dev/null <"$st" && [ "$pp" = "$1" ] && echo "$p"
	done
}
# connect N: the connection N (sends its identification, reads sshd's, stays open until
# $work/byeN exists) whose [net] child is under its seccomp filter; sets monitor and net
connect() {
	bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
		printf "SSH-2.0-ptrec_test\r\n" >&3; head -n 1 <&3
		while [ -d "$2" ] && [ ! -e "$2/bye$3" ]; do sleep 0.1; done' connect "$port" "$work" "$1" \
		>"$work/conn$1" 2>&1 &
	client=$!
	monitor= net=
	for _ in $(seq 1 150); do
		monitor=$(kids_of "$pid" | head -n 1)
		[ -n "$monitor" ] && net=$(kids_of "$monitor" | head -n 1)
		[ -n "$net" ] && grep -q '^Seccomp:[[:space:]]*2$' "/proc/$net/status" 2>/dev/null && break
		sleep 0.2
	done
	grep -q '^SSH-2.0-' "$work/conn$1" || { cat "$work/conn$1" "$work/err"; fail "sshd did not answer"; }
	[ -n "$net" ] && grep -q '^Seccomp:[[:space:]]*2$' "/proc/$net/status" ||
		{ cat "$work/err"; fail "no [net] child under its seccomp filter"; }
}
# bye N: ends the connection N (its client closes it) and waits for its client
bye() {
	touch "$work/bye$1"
	wait "$client"
}
# gone PID: waits until PID no longer exists
gone() {
	for _ in $(seq 1 150); do
		[ -e "/proc/$1" ] || return 0
		sleep 0.2
	done
	fail "process $1 did not end"
}

connect 1
[ "$(stat -c %U "/proc/$net")" = sshd ] || fail "[net] does not run as sshd"
kill -STOP "$monitor"
kill -SEGV "$net"
code=
for _ in $(seq 1 150); do
	set -- $(sed 's/^.*) //' "/proc/$net/stat" 2>/dev/null)
	[ "${1:-}" = Z ] && { code=$(eval echo "\${$(( 52 - 2 ))}"); break; }
	sleep 0.2
done
kill -CONT "$monitor"
[ -n "$code" ] || fail "[net] did not die"
[ $((code & 127)) -eq 11 ] ||
	fail "[net] died of signal $((code & 127)), expected 11 (31: the seccomp filter's SIGSYS)"
bye 1
gone "$monitor"
! grep -q "^ptrec: .* in pid $net " "$work/err" || fail "a ptrec line for the [net] child"
[ -z "$(ls "$work/dumps")" ] || fail "a file for the [net] child"

connect 2
victim=$monitor
gdb_stack "$victim"
kill -SEGV "$victim"
gone "$victim"
bye 2
gone "$net"
connect 3
bye 3
gone "$monitor"
kill -TERM "$pid"
wait_server 60 "did not stop on SIGTERM"
echo "--- sshd (status $status), its log:"; cat "$work/err"
grep -q '^Received signal 15; terminating\.' "$work/err" || fail "sshd did not log its SIGTERM"
[ "$status" -eq 0 ] || fail "sshd ended with status $status after SIGTERM, expected 0"
one_dump "$victim" "$work/err"
sent_by_us
same_as_gdb
case "$stack" in
*"poll "*"__libc_start_call_main "*) ;;
*) fail "the crashed monitor's stack is not its poll under main: $stack" ;;
esac
echo "PASS: sshd under ptrec run: the sandboxed [net] child dies of its SIGSEGV, a monitor's crash dumped"
