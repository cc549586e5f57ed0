#!/bin/sh
# Patched entries out of the hook's reach go through the module's own stub (patch_module.c:
# x86-64 `jmp *__ptrec_fentry@GOTPCREL`, aarch64 `adrp x16; ldr x16; br x16`).  A non-PIE
# program that carries the hook archive and exports __ptrec_fentry (--export-dynamic), so
# that the shared library's GOT binds the hook to the program's copy, mapped low, while the
# library is mapped high: further than a rel32 call (2 GiB) or a bl (128 MiB) reaches.  Every
# entry must still be patched, the library's calls must be in the crash report's history, and
# the program must run to its normal end too.
. "$top_srcdir/tests/common/qemu_user.sh"
. "$top_srcdir/tests/crash/recipe_common.sh"
patch_test_setup

# The recipe's main.c, as recipe_main, after a main that says where the hook the library's GOT
# binds (the program's) and the library are.
cat >"$work/far.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
int recipe_main(int argc, char **argv);
int main(int argc, char **argv)
{
	printf("hook %ju lib %ju\n", (uintmax_t)(uintptr_t)dlsym(RTLD_DEFAULT, "__ptrec_fentry"),
	       (uintmax_t)(uintptr_t)dlsym(RTLD_DEFAULT, "lib_entry"));
	fflush(stdout);
	return recipe_main(argc, argv);
}
C
d="$work/stub"
mkdir "$d"
# shellcheck disable=SC2086
(cd "$d" && $gcc -O2 $instr -fPIC -c "$work/lib.c" -o lib.o && $gcc -shared -o libcell.so lib.o $link_libs &&
 $gcc -O2 -fno-pie $instr -I"$top_srcdir/include" -Dmain=recipe_main -c "$work/main.c" -o main.o &&
 $gcc -O2 -fno-pie -c "$work/far.c" -o far.o &&
 $gcc -no-pie -o prog far.o main.o -Wl,--export-dynamic -Wl,-u,__ptrec_fentry $link_libs -L. -lcell \
	-Wl,-rpath,"$d" -ldl) >"$d/build.log" 2>&1 ||
	{ cat "$d/build.log"; fail "build failed"; }

run() { (cd "$d" && exec env PTREC_DIR="$d" PTREC_REPORT_TIMEOUT_MS=0 PTREC_SYSLOG=none \
	LD_LIBRARY_PATH="$libs" ./prog "$@") >"$d/out" 2>&1; }

run ok || { cat "$d/out"; fail "the program did not run to its end"; }
set -- $(sed -n 's/^hook \([0-9]*\) lib \([0-9]*\)$/\1 \2/p' "$d/out")
[ $# -eq 2 ] && [ "$1" -ne 0 ] && [ "$2" -ne 0 ] || { cat "$d/out"; fail "no hook or library address"; }
# the precondition: the library's entries cannot call the program's hook directly
reach=2147483648
[ "${PTREC_HOST_CPU:-}" = aarch64 ] && reach=134217728
dist=$(($2 > $1 ? $2 - $1 : $1 - $2))
echo "hook at $1, lib_entry at $2: $dist bytes apart (a direct call reaches $reach)"
[ "$dist" -ge "$reach" ] || { echo "SKIP: the loader put the library within the call's reach of the program"; exit 77; }
rm -f "$d"/ptrec.prog.*
run
dump=$(ls "$d"/ptrec.prog.*.ptrec 2>/dev/null | head -1)
[ -n "$dump" ] || { cat "$d/out"; fail "no dump"; }
"$PTREC_TOOL" report "$dump" >"$d/report.txt" 2>&1 || { cat "$d/report.txt"; fail "ptrec report failed"; }
grep -Eq '^  patched_entries ([0-9]+) of \1 patchable function entries in 2 modules call __ptrec_fentry$' "$d/report.txt" ||
	{ cat "$d/report.txt"; fail "not every entry was patched"; }
got=$(report_calls "$d/report.txt")
echo "calls: $got"
[ "$got" = "$want" ] || { cat "$d/report.txt"; fail "the history's calls are '$got', not '$want'"; }
echo PASS
