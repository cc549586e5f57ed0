#!/bin/sh
# The report child started at crash time (the tool that writes DUMP.txt) does not inherit
# libptrec: no libptrec entry in its LD_PRELOAD (other entries stay) and no PTREC_PRELOAD,
# so the tool never records itself.  PTREC_TOOL is a wrapper that saves its environment.
# Nor the dynamic loader's debugging variables of the application's environment: with
# LD_SHOW_AUXV=1 and LD_DEBUG=statistics the report and the minidump (PTREC_MINIDUMP=1) start
# as they should ("ptrec report", "MDMP"), not with the loader's output.
. "$top_srcdir/tests/common/qemu_user.sh"
skip_on_aarch64 "the program is not instrumented: the caller comes from the unwinder, which is x86-64 only so far"
. "$top_srcdir/tests/crash/run_common.sh"

real_tool=$PTREC_TOOL
cat >"$work/tool.sh" <<SH
#!/bin/sh
env >"$work/report.env"
exec "$real_tool" "\$@"
SH
chmod +x "$work/tool.sh"
export PTREC_TOOL="$work/tool.sh"

LD_SHOW_AUXV=1 LD_DEBUG=statistics PTREC_MINIDUMP=1 ptrec_run --dir "$work/dumps" -- "$plain" segv
[ "$status" -eq 139 ] || fail "exit status $status, expected 139"
[ -f "$work/report.env" ] || fail "the report child did not run"
grep -q '^PTREC_PRELOAD=' "$work/report.env" && fail "the report child has PTREC_PRELOAD"
grep -q '^LD_PRELOAD=.*libptrec' "$work/report.env" && fail "the report child preloads libptrec"
if [ -n "$san_preload" ]; then
	grep -q "^LD_PRELOAD=$san_preload\$" "$work/report.env" || fail "other LD_PRELOAD entries were dropped"
fi
grep -q "^PTREC_DIR=$work/dumps\$" "$work/report.env" || fail "the rest of the environment was not kept"
# exactly one dump and one ptrec line: the report tool recorded nothing of its own
[ "$(ptrec_lines)" -eq 1 ] || fail "expected one ptrec line"
[ "$(ls "$work/dumps"/*.ptrec | wc -l)" -eq 1 ] || fail "expected exactly one dump"
grep -q parse_header "$work/dumps"/*.ptrec.txt || fail "the report does not name parse_header"
grep -q '^LD_SHOW_AUXV=\|^LD_DEBUG=' "$work/report.env" && fail "the report child has the loader's debugging variables"
head -n 1 "$work/dumps"/*.ptrec.txt | grep -q '^ptrec report ' ||
	fail "the report starts with: $(head -n 1 "$work/dumps"/*.ptrec.txt)"
[ "$(head -c 4 "$work/dumps"/*.ptrec.dmp)" = MDMP ] ||
	fail "the minidump starts with: $(head -c 40 "$work/dumps"/*.ptrec.dmp)"
echo "PASS: the report child runs without libptrec"
