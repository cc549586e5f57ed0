#!/bin/sh
# GCC's recipe (patchable function entries, written at ptrec_init) under a policy that forbids
# writable code: with PR_SET_MDWE (the kernel's MemoryDenyWriteExecute) set before ptrec_init,
# making a text page writable is refused.  The program must run on unharmed (no text left
# without execute permission), the instrumented backend must be refused with the reason, in
# ptrec_status and in the crash dump's STATUS record, and nothing may be patched.  Without the
# policy the same program's entries are all patched.  (issue 27)
. "$top_srcdir/tests/common/qemu_user.sh"
. "$top_srcdir/tests/crash/recipe_common.sh"
patch_test_setup

cat >"$work/refuse.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <ptrec.h>
void app_one(int *p);
int main(int argc, char **argv)
{
	/* PR_SET_MDWE (65), PR_MDWE_REFUSE_EXEC_GAIN (1): Linux 6.3 */
	if (argc > 1 && strcmp(argv[1], "policy") == 0 && prctl(65, 1L, 0L, 0L, 0L) != 0) {
		perror("prctl(PR_SET_MDWE)");
		return 77;
	}
	int r = ptrec_init(NULL), x = 1;
	struct ptrec_status st = {.struct_size = sizeof(st)};
	ptrec_status(&st);
	printf("init %d backend %s\npatched %s\nrefused %s\n", r,
	       st.backend == PTREC_BACKEND_INSTRUMENTED ? "instrumented" : "other",
	       st.patched_entries, st.reason[PTREC_BACKEND_INSTRUMENTED]);
	fflush(stdout);
	app_one(argc > 2 ? NULL : &x);
	printf("ran\n");
	return 0;
}
C
cat >"$work/app.c" <<'C'
void lib_entry(int *p);
volatile int app_sink;
__attribute__((noinline)) void app_one(int *p) { lib_entry(p); app_sink++; }
C
d="$work/refuse"
mkdir "$d"
# shellcheck disable=SC2086
(cd "$d" && $gcc -O2 $instr -fPIC -c "$work/lib.c" -o lib.o && $gcc -shared -o libcell.so lib.o $link_libs &&
 $gcc -O2 $instr -I"$top_srcdir/include" -c "$work/refuse.c" -o refuse.o &&
 $gcc -O2 $instr -c "$work/app.c" -o app.o &&
 $gcc -o prog refuse.o app.o -L. -lcell -Wl,-rpath,"$d" $link_libs) >"$d/build.log" 2>&1 ||
	{ cat "$d/build.log"; fail "build failed"; }
run() { (cd "$d" && PTREC_DIR="$d" PTREC_REPORT_TIMEOUT_MS=0 PTREC_SYSLOG=none \
	LD_LIBRARY_PATH="$libs" exec ./prog "$@") >"$d/out" 2>&1; }

run plain || { cat "$d/out"; fail "the program failed without the policy"; }
cat "$d/out"
grep -q '^init 0 backend instrumented$' "$d/out" ||
	fail "without the policy the instrumented backend was not chosen"
grep -Eq '^patched ([0-9]+) of \1 patchable function entries in 2 modules call __ptrec_fentry$' "$d/out" ||
	fail "without the policy not every entry of the two modules was patched"

run policy; st=$?
[ "$st" -ne 77 ] || { cat "$d/out"; echo "SKIP: the kernel has no PR_SET_MDWE (Linux 6.3)"; exit 77; }
cat "$d/out"
[ "$st" -eq 0 ] && grep -q '^ran$' "$d/out" || fail "under the policy the program did not run on (status $st)"
grep -q 'backend other' "$d/out" || fail "under the policy the instrumented backend was chosen"
grep -q "^refused patchable function entries not patched: making code writable was refused (.*): allow it, or rebuild with -finstrument-functions$" "$d/out" ||
	fail "ptrec_status does not say why the instrumented backend was refused"
grep -Eq '^patched 0 of [0-9]+ patchable function entries .*\(making text writable was refused: ' "$d/out" ||
	fail "ptrec_status does not say that nothing was patched and why"

# The crash dump's STATUS record says the same.
( run policy crash ) 2>/dev/null
dump=$(ls "$d"/ptrec.prog.*.ptrec 2>/dev/null | head -1)
[ -n "$dump" ] || { cat "$d/out"; fail "no dump of the crash under the policy"; }
"$PTREC_TOOL" report "$dump" >"$d/report.txt" 2>&1 || { cat "$d/report.txt"; fail "ptrec report failed"; }
grep -q "refused instrumented: patchable function entries not patched: making code writable was refused" "$d/report.txt" ||
	{ cat "$d/report.txt"; fail "the report's Recorder section does not say why instrumented was refused"; }
grep -q "patched_entries 0 of " "$d/report.txt" ||
	{ cat "$d/report.txt"; fail "the report's Recorder section has no patched_entries line"; }
[ -z "$(find "$work" -name gmon.out)" ] || fail "a gmon.out appeared"
echo PASS
