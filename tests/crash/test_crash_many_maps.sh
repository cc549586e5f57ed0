#!/bin/sh
# A server with tens of thousands of mappings (60 000 here: about 4 MiB of /proc/self/maps)
# crashes.  The dump keeps 1 MiB of maps text: the data mappings without a file go first, so
# the libraries, the stack and the vDSO at the top of the address space stay, the report
# unwinds the stack into libc, and its Recorder section says how many mappings were left out.
# Before, the text was cut at 1 MiB: no libc, no stack bytes, no vDSO, and no warning.
. "$top_srcdir/tests/common/qemu_user.sh"
skip_under_qemu_user "the dump's maps lose libc among many mappings (qemu-user makes up /proc/self/maps itself; not analysed further)"
. "$top_srcdir/tests/crash/hardening_common.sh"
hrun many_maps
[ "$status" -ne 77 ] || { echo "SKIP: the kernel refused 60 000 mappings (vm.max_map_count)"; exit 77; }
[ "$status" -eq 139 ] || fail "exit status $status, expected 139"
dump=$(the_dump "$PTREC_DIR") || exit 1
case "$(ptrec_line)" in *": dump $dump, report $dump.txt; signature: "?*) ;; *) fail "the line does not name the dump and report" ;; esac
"$checker" "$dump" >"$work/check.txt" || fail "malformed dump: $(cat "$work/check.txt")"
grep -q "^buildid [0-9a-f]* .*/libc\.so\.6\$" "$work/check.txt" || fail "the dump's maps lost libc"
grep -q "^memory kind 3 " "$work/check.txt" || fail "no stack bytes in the dump"
grep -q "^memory kind 2 " "$work/check.txt" || fail "no vDSO in the dump"
sed -n '/^stack (unwound/,/(stops/p' "$dump.txt" >"$work/unwound.txt"
grep -q "main+" "$work/unwound.txt" || fail "the report's stack does not unwind to main: $(cat "$work/unwound.txt")"
grep -q "__libc_start" "$work/unwound.txt" || fail "the report's stack does not reach libc"
grep -q "^  maps_left_out [0-9][0-9]* data mappings without a file" "$dump.txt" ||
	fail "the report does not say that mappings were left out"
echo "PASS: many maps"
