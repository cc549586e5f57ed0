#!/bin/sh
# Issue 27, "never silently nothing": a program that links libptrec but records no branch
# history says so once at ptrec_init, on stderr and to the system log, with why and the fix,
# and ptrec_status().not_recording holds the same text.  PTREC_BACKEND=none (you meant it)
# silences it, and a build that records (-finstrument-functions) says nothing.
. "$top_srcdir/tests/crash/hardening_common.sh"
plain="$top_builddir/tests/crash/not_recording"
inst="$top_builddir/tests/crash/not_recording_inst"
unset PTREC_BACKEND

# run PROGRAM [ENV=VALUE...]: stdout and stderr in $work/stdout, $work/stderr; sets status.
run() {
	local p=$1
	shift
	env "$@" "$p" >"$work/stdout" 2>"$work/stderr"
	status=$?
	echo "--- $(basename "$p") $* (status $status)"
	cat "$work/stdout" "$work/stderr"
	[ "$status" -eq 0 ] || fail "exit status $status"
}
field() { sed -n "s/^$1 //p" "$work/stdout"; }

# 1. Not instrumented, backend chosen by ptrec_init.
sock="$work/syslog.sock"
"$hardener" syslog-sink "$sock" "$work/logged" 20 &
sinkpid=$!
for i in 1 2 3 4 5 6 7 8 9 10; do [ -S "$sock" ] && break; sleep 0.2; done
[ -S "$sock" ] || fail "the test syslog socket did not appear"
run "$plain" PTREC_SYSLOG="$sock"
backend=$(field backend)
status_text=$(field not_recording)
case "$backend" in
intel_pt | intel_bts)
	# a machine with PT or BTS records without instrumentation: nothing to say
	[ ! -s "$work/stderr" ] || fail "a recording process wrote on stderr"
	[ -z "$status_text" ] || fail "ptrec_status says not recording while $backend records"
	kill $sinkpid 2>/dev/null
	echo "note: $backend records here; the not-recording line is checked on machines without it"
	;;
none)
	[ "$(wc -l <"$work/stderr")" -eq 1 ] || fail "expected exactly one stderr line"
	line=$(cat "$work/stderr")
	case "$line" in "ptrec: no branch history will be recorded: "*) ;;
	*) fail "the line does not start with 'ptrec: no branch history will be recorded: '" ;; esac
	case "$line" in *"instrumented: no instrumented code ran before ptrec_init"*) ;;
	*) fail "the line does not say why the instrumented backend refused" ;; esac
	case "$line" in *"intel_pt: "*) ;; *) fail "the line does not say why intel_pt refused" ;; esac
	case "$line" in *'`ptrec cflags` on the compile line'*'pkg-config --libs libptrec'*) ;;
	*) fail "the line does not give the fix (rebuild with ptrec cflags)" ;; esac
	case "$line" in *"PTREC_BACKEND=none"*) ;; *) fail "the line does not say how to silence it" ;; esac
	[ "ptrec: $status_text" = "$line" ] || fail "ptrec_status().not_recording differs from the line"
	wait $sinkpid || fail "no syslog datagram arrived"
	logged=$(cat "$work/logged")
	pid=$(echo "$logged" | sed -n 's/^<12>ptrec\[\([0-9]*\)\]: .*/\1/p')
	[ -n "$pid" ] || fail "syslog datagram is not '<12>ptrec[PID]: ...' (user.warning): $logged"
	[ "$logged" = "<12>ptrec[$pid]: $status_text" ] || fail "the syslog line differs from the stderr line"
	;;
*) fail "unexpected backend '$backend'" ;;
esac

# 2. PTREC_BACKEND=none: the operator meant it; not a word.
run "$plain" PTREC_BACKEND=none PTREC_SYSLOG=none
[ "$(field backend)" = none ] || fail "PTREC_BACKEND=none chose a backend"
[ ! -s "$work/stderr" ] || fail "PTREC_BACKEND=none still wrote on stderr"
[ -z "$(field not_recording)" ] || fail "PTREC_BACKEND=none: ptrec_status().not_recording is set"

# 3. An instrumented build records: not a word either.
run "$inst" PTREC_SYSLOG=none
case "$(field backend)" in intel_pt | intel_bts | instrumented) ;;
*) fail "the instrumented build chose backend '$(field backend)'" ;; esac
[ ! -s "$work/stderr" ] || fail "a recording instrumented build wrote on stderr"
[ -z "$(field not_recording)" ] || fail "ptrec_status() says an instrumented build does not record"
echo "PASS: nothing recorded is said once at init, with why and the fix; silent when recording or asked for none"
