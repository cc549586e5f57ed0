#!/bin/sh
# GCC's recipe (patchable function entries, written at ptrec_init) in a process whose other
# threads already run: a thread resuming inside an entry's five one-byte NOPs after the call
# was written there would run the middle of the call.  With a thread blocked in a system call
# (read on a pipe) every entry is patched, and the thread then runs the patched functions
# unharmed; with a thread that keeps calling patchable functions, nothing is patched, the
# instrumented backend is refused saying why, and the thread and the program run on unharmed.
# A library dlopen'ed after ptrec_init has its entries patched as it loads.  (issue 27)
. "$top_srcdir/tests/common/qemu_user.sh"
. "$top_srcdir/tests/crash/recipe_common.sh"
patch_test_setup
[ -r /proc/self/task/$$/syscall ] || { echo "SKIP: /proc/PID/task/TID/syscall is not readable here"; exit 77; }

cat >"$work/threads.c" <<'C'
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <ptrec.h>
static int pipefd[2];
static volatile int stop;
volatile unsigned long spins;
__attribute__((noinline, noclone)) void spin_one(void) { spins++; }
__attribute__((noinline, noclone)) void spin_two(void) { spin_one(); spins++; }
static void *spinner(void *arg)
{
	(void)arg;
	while (!stop)
		spin_two();
	return NULL;
}
static void *reader(void *arg)
{
	char c;
	(void)arg;
	if (read(pipefd[0], &c, 1) != 1)
		return NULL;
	for (int i = 0; i < 100000; i++)
		spin_two();
	return NULL;
}
int main(int argc, char **argv)
{
	pthread_t t;
	int spin = argc > 1 && strcmp(argv[1], "spin") == 0;
	if (pipe(pipefd) != 0 || pthread_create(&t, NULL, spin ? spinner : reader, NULL) != 0)
		return 2;
	usleep(50000); /* the thread runs (spins, or is blocked in read) */
	int r = ptrec_init(NULL);
	struct ptrec_status st = {.struct_size = sizeof(st)};
	ptrec_status(&st);
	printf("init %d backend %s\npatched %s\nrefused %s\n", r,
	       st.backend == PTREC_BACKEND_INSTRUMENTED ? "instrumented" : "other",
	       st.patched_entries, st.reason[PTREC_BACKEND_INSTRUMENTED]);
	if (!spin) {
		void *h = dlopen(argv[2], RTLD_NOW);
		void (*entry)(int *) = h ? (void (*)(int *))dlsym(h, "lib_entry") : NULL;
		int x = 1;
		if (!entry)
			return 4;
		entry(&x);
		ptrec_status(&st);
		printf("after dlopen %s\n", st.patched_entries);
	}
	if (write(pipefd[1], "x", 1) != 1)
		return 3;
	usleep(20000);
	stop = 1;
	pthread_join(t, NULL);
	printf("ran %lu\n", spins);
	return 0;
}
C
d="$work/threads"
mkdir "$d"
# shellcheck disable=SC2086
(cd "$d" && $gcc -O2 $instr -fPIC -c "$work/lib.c" -o lib.o && $gcc -shared -o libcell.so lib.o $link_libs &&
 $gcc -O2 $instr -pthread -I"$top_srcdir/include" -c "$work/threads.c" -o threads.o &&
 $gcc -pthread -o prog threads.o -ldl $link_libs) >"$d/build.log" 2>&1 ||
	{ cat "$d/build.log"; fail "build failed"; }
run() { (cd "$d" && PTREC_DIR="$d" PTREC_REPORT_TIMEOUT_MS=0 PTREC_SYSLOG=none \
	LD_LIBRARY_PATH="$libs" exec ./prog "$@") >"$d/out" 2>&1; }

run blocked "$d/libcell.so" || { cat "$d/out"; fail "the program with a blocked thread failed"; }
cat "$d/out"
grep -q '^init 0 backend instrumented$' "$d/out" || fail "with a blocked thread the instrumented backend was not chosen"
grep -Eq '^patched ([0-9]+) of \1 patchable function entries in 1 module call __ptrec_fentry$' "$d/out" ||
	fail "with a blocked thread not every entry was patched"
grep -Eq '^after dlopen ([0-9]+) of \1 patchable function entries in 2 modules call __ptrec_fentry$' "$d/out" ||
	fail "the library dlopen'ed after ptrec_init was not patched"
grep -q '^ran 200000$' "$d/out" || fail "the blocked thread did not run the patched functions to the end"

run spin || { cat "$d/out"; fail "the program with a spinning thread failed"; }
cat "$d/out"
grep -q '^init 0 backend other$' "$d/out" || fail "with a spinning thread the entries were patched"
grep -q '^refused patchable function entries not patched: 1 other thread kept running code at ptrec_init' "$d/out" ||
	fail "ptrec_status does not say why nothing was patched"
grep -Eq '^patched 0 of [0-9]+ patchable function entries in 1 module call __ptrec_fentry \(1 other threads ran code at ptrec_init\)$' "$d/out" ||
	fail "patched_entries does not say that nothing was patched and why"
grep -q '^ran [1-9]' "$d/out" || fail "the spinning thread did not run"
echo PASS
