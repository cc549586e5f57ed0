#!/bin/sh
# PTREC_NO_TRACE at run time (capture/patch_skip.h): with GCC's recipe (patchable function
# entries written at ptrec_init) the functions it names keep their NOPs, so they record
# nothing, in the executable and in shared libraries, also stripped ones (through .dynsym);
# the others record as before.  ptrec_status and the report's Recorder section say how many
# entries were left out and which names matched no function.  (issue 27: "init chooses which
# functions record, hot leaves off, by a list")
. "$top_srcdir/tests/common/qemu_user.sh"
. "$top_srcdir/tests/crash/recipe_common.sh"
patch_test_setup

d="$work/skip"
mkdir "$d"
# shellcheck disable=SC2086
(cd "$d" && $gcc -O2 $instr -fPIC -c "$work/lib.c" -o lib.o && $gcc -shared -o libcell.so lib.o $link_libs &&
 $gcc -O2 $instr -I"$top_srcdir/include" -c "$work/main.c" -o main.o &&
 $gcc -o prog main.o -L. -lcell -Wl,-rpath,"$d" $link_libs) >"$d/build.log" 2>&1 ||
	{ cat "$d/build.log"; fail "build failed"; }

# crash NAME [PTREC_NO_TRACE]: runs the program into its crash; the report in $d/NAME.txt.
crash() {
	rm -f "$d"/ptrec.prog.*
	(cd "$d" && exec env PTREC_DIR="$d" PTREC_REPORT_TIMEOUT_MS=0 PTREC_SYSLOG=none \
		${2+"PTREC_NO_TRACE=$2"} LD_LIBRARY_PATH="$libs" ./prog) >"$d/$1.out" 2>&1
	dump=$(ls "$d"/ptrec.prog.*.ptrec 2>/dev/null | head -1)
	[ -n "$dump" ] || { cat "$d/$1.out"; fail "$1: no dump"; }
	"$PTREC_TOOL" report "$dump" >"$d/$1.txt" 2>&1 || { cat "$d/$1.txt"; fail "$1: ptrec report failed"; }
}
# expect NAME CALLS NOTE: the report's calls and its patched_entries line.
expect() {
	got=$(report_calls "$d/$1.txt")
	echo "$1: calls: $got"
	[ "$got" = "$2" ] || { cat "$d/$1.txt"; fail "$1: the history's calls are '$got', not '$2'"; }
	line=$(grep 'patched_entries ' "$d/$1.txt")
	echo "$1: $line"
	case "$line" in *"$3") ;; *) fail "$1: the Recorder section's patched_entries does not end with '$3'" ;; esac
}

crash all
expect all "app_one app_two lib_entry lib_step lib_leaf" "call __ptrec_fentry"

crash two "app_two, lib_step"
expect two "app_one lib_entry lib_leaf" "call __ptrec_fentry (2 left out by PTREC_NO_TRACE)"

crash unknown "app_two:no_such_function"
expect unknown "app_one lib_entry lib_step lib_leaf" \
	"call __ptrec_fentry (1 left out by PTREC_NO_TRACE; no function no_such_function)"

# A stripped library keeps .dynsym, where its exported functions are.
"${STRIP:-strip}" "$d/libcell.so" || fail "${STRIP:-strip} failed"
crash stripped "lib_step"
expect stripped "app_one app_two lib_entry lib_leaf" "call __ptrec_fentry (1 left out by PTREC_NO_TRACE)"
echo PASS
