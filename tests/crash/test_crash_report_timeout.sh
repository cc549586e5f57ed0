#!/bin/sh
# Decoding at crash time is bounded and may fail without losing anything: with a report tool
# that hangs (killed after PTREC_REPORT_TIMEOUT_MS) or one that fails, the process still dies of
# its signal, the dump is complete, and the one stderr line says how to decode later.
. "$top_srcdir/tests/crash/crash_common.sh"
printf '#!/bin/sh\necho $$ >"%s/hang.pid"\nexec sleep 300\n' "$work" >"$work/hang-tool"
printf '#!/bin/sh\necho "cannot decode" >&2\nexit 3\n' >"$work/fail-tool"
chmod +x "$work/hang-tool" "$work/fail-tool"
export PTREC_REPORT_TIMEOUT_MS=300
for tool in hang-tool fail-tool; do
	rm -f "$work"/core* "$PTREC_DIR"/*
	(cd "$work" && PTREC_TOOL="$work/$tool" exec timeout 120 "$crasher" segv_null) \
		>"$work/stdout" 2>"$work/stderr" &
	pid=$!
	wait $pid
	status=$?
	cat "$work/stderr"
	[ "$status" -eq 139 ] || fail "$tool: exit status $status, expected 139 (124 = hung)"
	dump=$(sed -n "s/^ptrec: SIGSEGV in pid [0-9]* thread .*: dump \(.*\); no report (decode later: ptrec report \(.*\))\$/\1/p" "$work/stderr")
	[ -n "$dump" ] || fail "$tool: stderr line does not say how to decode later"
	[ -f "$dump" ] || fail "$tool: dump $dump is missing"
	"$checker" "$dump" >"$work/check.txt" || fail "$tool: malformed dump"
	grep -q "complete 1" "$work/check.txt" || fail "$tool: dump is not complete"
	if [ "$tool" = hang-tool ]; then
		[ -s "$work/hang.pid" ] || fail "the hanging tool never ran"
		kill -0 "$(cat "$work/hang.pid")" 2>/dev/null && fail "the hanging tool was not killed"
	fi
done
echo "PASS: report timeout and failure"
