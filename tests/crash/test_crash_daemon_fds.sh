#!/bin/sh
# A daemon closes every descriptor it did not open after libptrec's init (a preloaded init ran
# before its main) and its own TCP connection takes the numbers libptrec used: the crash still
# writes its dump, the one line still reaches the system log (a test syslog socket, opened
# anew), and not one byte of libptrec's goes into the application's connection.
. "$top_srcdir/tests/crash/hardening_common.sh"
sock="$work/syslog.sock"
"$hardener" syslog-sink "$sock" "$work/logged" 60 &
sinkpid=$!
for i in 1 2 3 4 5 6 7 8 9 10; do [ -S "$sock" ] && break; sleep 0.2; done
[ -S "$sock" ] || fail "the test syslog socket did not appear"

hrun daemon_fds PTREC_SYSLOG="$sock"
[ "$status" -eq 139 ] || fail "exit status $status, expected 139"
dump=$(the_dump "$PTREC_DIR") || exit 1
case "$(ptrec_line)" in *": dump $dump"*) ;; *) fail "stderr line does not name the dump" ;; esac
for i in $(seq 1 50); do grep -q '^peer_bytes ' "$work/stdout" && break; sleep 0.2; done
cat "$work/stdout"
grep -q '^peer_bytes 0$' "$work/stdout" || fail "bytes reached the application's connection"
wait $sinkpid || fail "no syslog datagram arrived"
logged=$(cat "$work/logged")
echo "syslog: $logged"
case "$logged" in "<10>ptrec[$pid]: SIGSEGV in pid $pid"*) ;; *) fail "syslog line: $logged" ;; esac
echo "PASS: a daemon's reused descriptors are left alone"
