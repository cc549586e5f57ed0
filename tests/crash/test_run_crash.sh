#!/bin/sh
# `ptrec run -- plain_crasher segv`: an unmodified, uninstrumented program that does not link
# libptrec crashes; it dies of SIGSEGV as it would have, and the dump and report name the
# faulting function and its caller from the program's symbol table.  No PT here: the
# recorder falls back (no branch history, never faked) and the report says so.
. "$top_srcdir/tests/common/qemu_user.sh"
skip_on_aarch64 "the program is not instrumented: the caller comes from the unwinder, which is x86-64 only so far"
. "$top_srcdir/tests/crash/run_common.sh"

"${NM:-nm}" "$plain" | grep -q ' ptrec_init$' && fail "plain_crasher must not contain libptrec"
readelf -d "$plain" 2>/dev/null | grep -q 'libptrec' && fail "plain_crasher must not link libptrec"
"${NM:-nm}" "$plain" | grep -q '__cyg_profile_func_enter' && fail "plain_crasher must not be instrumented"
"${OBJDUMP:-objdump}" -h "$plain" | grep -q '\.debug_info' && fail "plain_crasher must have no debug information"

ptrec_run --dir "$work/dumps" -- "$plain" segv
[ "$status" -eq 139 ] || fail "exit status $status, expected 139 (SIGSEGV, as without ptrec run)"
[ "$(grep -c '^ptrec: SIGSEGV in pid ' "$work/err")" -eq 1 ] || fail "expected one ptrec line on stderr"
pid=$(sed -n 's/^ptrec: SIGSEGV in pid \([0-9]*\) .*/\1/p' "$work/err")
dump=$(dumps_of "$pid")
[ -n "$dump" ] && [ -f "$dump" ] || fail "no dump of pid $pid in --dir $work/dumps"
grep -q "dump $dump, report $dump.txt" "$work/err" || fail "the line does not name dump and report"
[ -f "$dump.txt" ] || fail "no report $dump.txt"
echo "--- $dump.txt"; cat "$dump.txt"
grep -q 'parse_header' "$dump.txt" || fail "report does not name the faulting function parse_header"
grep -q 'handle_request' "$dump.txt" || fail "report does not name the caller handle_request"
grep -q '^symbol: *parse_header' "$dump.txt" || fail "the faulting instruction is not in parse_header"
grep -q '^  backend none$' "$dump.txt" ||
	grep -q '^  backend intel_pt$' "$dump.txt" || fail "report does not say backend none (no PT here)"
# the same dump decodes again later, with the same tool
"$PTREC_TOOL" report "$dump" >"$work/again.txt" 2>&1 || [ $? -eq 1 ] || fail "ptrec report failed"
grep -q 'parse_header' "$work/again.txt" || fail "decoding again does not name parse_header"
echo "PASS: an unmodified program's crash is reported"
