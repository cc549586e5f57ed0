#!/bin/sh
# Decoding at crash time is bounded and may fail without losing anything: with a report tool
# that hangs (killed after PTREC_REPORT_TIMEOUT_MS), one that hangs after writing part of a
# report, or one that fails, the process still dies of its signal and the dump is complete.
# An empty report is removed; a partial one is kept and ends with a line saying it is
# incomplete; the one stderr line says which, and how to decode later.
. "$top_srcdir/tests/crash/crash_common.sh"
printf '#!/bin/sh\necho $$ >"%s/hang.pid"\nexec sleep 300\n' "$work" >"$work/hang-tool"
printf '#!/bin/sh\necho "== Process (partial)"\nexec sleep 300\n' >"$work/partial-tool"
printf '#!/bin/sh\necho "cannot decode" >&2\nexit 3\n' >"$work/fail-tool"
chmod +x "$work/hang-tool" "$work/partial-tool" "$work/fail-tool"
export PTREC_REPORT_TIMEOUT_MS=300
for tool in hang-tool partial-tool fail-tool; do
	rm -f "$work"/core* "$PTREC_DIR"/*
	(cd "$work" && PTREC_TOOL="$work/$tool" exec timeout 120 "$crasher" segv_null) \
		>"$work/stdout" 2>"$work/stderr" &
	pid=$!
	wait $pid
	status=$?
	cat "$work/stderr"
	[ "$status" -eq 139 ] || fail "$tool: exit status $status, expected 139 (124 = hung)"
	dump=$(sed -n "s/^ptrec: SIGSEGV in pid [0-9]* thread .*: dump \([^;]*\); .*(.*decode later: ptrec report \(.*\))\$/\1/p" "$work/stderr")
	[ -n "$dump" ] || fail "$tool: stderr line does not say how to decode later"
	[ -f "$dump" ] || fail "$tool: dump $dump is missing"
	"$checker" "$dump" >"$work/check.txt" || fail "$tool: malformed dump"
	grep -q "complete 1" "$work/check.txt" || fail "$tool: dump is not complete"
	case $tool in
	hang-tool)
		[ -s "$work/hang.pid" ] || fail "the hanging tool never ran"
		kill -0 "$(cat "$work/hang.pid")" 2>/dev/null && fail "the hanging tool was not killed"
		[ -e "$dump.txt" ] && fail "an empty report was left behind"
		grep -q "; no report (timed out; decode later: ptrec report $dump)\$" "$work/stderr" ||
			fail "stderr line does not say the report timed out" ;;
	partial-tool)
		grep -q '^== Process (partial)$' "$dump.txt" || fail "the partial report was not kept"
		tail -n 1 "$dump.txt" | grep -q "^\[ptrec: THIS REPORT IS INCOMPLETE: the report tool was killed after 300 ms" ||
			fail "the partial report does not end with the incomplete line"
		grep -q "; partial report $dump.txt (timed out; decode later: ptrec report $dump)\$" "$work/stderr" ||
			fail "stderr line does not name the partial report" ;;
	fail-tool)
		tail -n 1 "$dump.txt" | grep -q "^\[ptrec: THIS REPORT IS INCOMPLETE: the report tool failed with exit status 3" ||
			fail "the failed tool's output is not marked"
		grep -q "; partial report $dump.txt (report tool failed; decode later: ptrec report $dump)\$" "$work/stderr" ||
			fail "stderr line does not say the report tool failed" ;;
	esac
done
echo "PASS: report timeout and failure"
