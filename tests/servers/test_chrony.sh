#!/bin/sh
# A real NTP server under a seccomp filter: Debian's chronyd (a test-only peer configure finds;
# .ci/run installs chrony) run unmodified under `ptrec run` as root with -F 1, Debian's default
# (its DAEMON_OPTS): once it has dropped to its user it loads a libseccomp filter that kills
# the process at any system call off its list (seccomp_load), as it serves NTP.  Killed by
# SIGSEGV it dies of SIGSEGV (139), as without libptrec, not of a SIGSYS the filter raised at
# libptrec's crash path (159): libptrec shut down in it before the filter went on (it is not
# dumpable: no dump would be written).  The privileged helper it forked first runs on.
if [ -z "${CHRONYD_BIN:-}" ]; then
	echo "SKIP: configure found no chronyd (Debian package chrony)"
	exit 77
fi
[ "$(id -u)" -eq 0 ] || { echo "SKIP: chronyd starts as root and drops to its user"; exit 77; }
id -u _chrony >/dev/null 2>&1 || { echo "SKIP: no user _chrony (chrony's package makes it)"; exit 77; }
command -v bash >/dev/null || { echo "SKIP: no bash for the NTP request"; exit 77; }
. "$top_srcdir/tests/servers/server_common.sh"

work_in_tmp chrony
chmod 755 "$work"
copies_for _chrony
chown _chrony "$work" "$work/dumps"
free_port
cat >"$work/chrony.conf" <<CONF
pidfile $work/chronyd.pid
driftfile $work/drift
port $port
bindaddress 127.0.0.1
allow 127.0.0.1
cmdport 0
local stratum 10
CONF

(cd "$work" && exec "$tool" run --dir "$work/dumps" --report-timeout 30000 -- \
	"$CHRONYD_BIN" -d -f "$work/chrony.conf" -F 1 -x) >"$work/out" 2>"$work/err" &
pid=$!
wait_log "$work/err" 'Loaded seccomp filter (level 1)' "chronyd did not load its filter"
grep -q '^Seccomp:[[:space:]]*2$' "/proc/$pid/status" || fail "chronyd is not under a seccomp filter"
[ "$(stat -c %U "/proc/$pid")" = _chrony ] || fail "chronyd does not run as _chrony"

# an NTP client request (version 4, mode 3: one 48-byte datagram); the answer is a server's
# (mode 4) of stratum 10
zeros=$(printf '\\0%.0s' $(seq 1 47))
ntp=
for _ in $(seq 1 25); do
	ntp=$(bash -c 'exec 3<>"/dev/udp/127.0.0.1/$1" || exit 1
		printf "\043$2" >&3
		timeout 2 head -c 2 <&3' ntp "$port" "$zeros" | od -An -tu1 | tr -s ' \n' ' ')
	set -- $ntp
	[ $# -eq 2 ] && [ $(($1 & 7)) -eq 4 ] && [ "$2" -eq 10 ] && break
	ntp=
done
[ -n "$ntp" ] || fail "chronyd did not answer an NTP request as a stratum 10 server"

kill -SEGV "$pid"
wait_server 60 "did not die"
echo "--- chronyd (status $status), stderr:"; cat "$work/err"
[ "$status" -eq 139 ] ||
	fail "chronyd ended with status $status, expected 139 (SIGSEGV; 159 is the filter's SIGSYS)"
nothing_for "a process whose seccomp filter went on after libptrec's init"
echo "PASS: chronyd -F 1 under ptrec run: its SIGSEGV under its seccomp filter kills it as without libptrec"
