/* unwind_crash.c — crashes for the unwinding oracle (test_unwind_gdb.sh): each scenario,
 * named by argv[1], dies in a different kind of stack.  Built at -O0, -O2 and
 * -O2 -fomit-frame-pointer, as C and as C++ (unwind_crash_cxx.cc includes this file); for
 * aarch64 too (test_unwind_a64.sh: cross-built, run under qemu-user). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr */
#endif
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <ptrec.h>

#define NOINLINE __attribute__((noinline))

int unwind_lib_walk(int depth, int (*cb)(int));   /* unwind_lib.c */
int unwind_lib_crash(int depth);
int unwind_lib_alias(int x);   /* an ELF alias of unwind_lib_alias_impl, which tail-calls */

volatile int *volatile nowhere;
volatile int sink;

NOINLINE int crash_here(int x) { sink = *nowhere + x; return sink; }
NOINLINE int middle(int x) { int r = crash_here(x + 1); sink = r; return r + 2; }
NOINLINE int outer(int x) { int r = middle(x * 3); sink = r; return r - 1; }

static int compare(const void *a, const void *b)
{
	if (*(const int *)a == 7)
		crash_here(*(const int *)b);
	return *(const int *)a - *(const int *)b;
}
NOINLINE int sort_some(int x)
{
	int v[6] = {5, 7, 1, 9, 3, x};
	qsort(v, 6, sizeof(v[0]), compare);
	return v[0];
}

NOINLINE int recurse(int n) { if (n == 0) return crash_here(n); int r = recurse(n - 1); sink = r; return r + 1; }

static void on_usr1(int sig) { sink = middle(sig); }
NOINLINE int in_handler(int x)
{
	signal(SIGUSR1, on_usr1);
	syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), SIGUSR1);
	return x;
}

/* Tail calls: at -O2 tail_a jumps to tail_b, which jumps to crash_here. */
NOINLINE int tail_b(int x) { return crash_here(x ^ 5); }
NOINLINE int tail_a(int x) { return tail_b(x + 1); }

/* A function in two ranges: at -O2 its unlikely branch goes to a .cold part (DW_AT_ranges), and
 * cold_tail jumps to it. */
NOINLINE int cold_crash(int x)
{
	if (x == 12345)
		abort();
	sink = *nowhere + x;
	return sink + 1;
}
NOINLINE int cold_tail(int x) { return cold_crash(x ^ 9); }
NOINLINE int cold_call(int x) { int r = cold_tail(x); sink = r; return r; }
/* A tail call from a .cold part: the call of a cold function is unlikely, so at -O2 it lies in
 * cold_jump.cold, a jump to cold_target.  gdb (13) shows no tail-call frame for it: only the
 * tail calls of the range that holds a function's entry count. */
NOINLINE __attribute__((cold)) int cold_target(int x) { sink = *nowhere + x; return sink + 1; }
NOINLINE int cold_jump(int x) { if (x == 8) return cold_target(x); sink = x; return x * 3; }
NOINLINE int cold_jump_call(int x) { int r = cold_jump(x); sink = r; return r; }

typedef int (*fnp)(int);
NOINLINE int wild_call(int x) { fnp f = (fnp)(unsigned long)(0x1230 + (x & 1)); int r = f(x); sink = r; return r; }
/* A call through a null function pointer (an unset callback): the pc is 0. */
NOINLINE int null_call(int x) { fnp f = (fnp)(unsigned long)(x & 1); int r = f(x); sink = r; return r; }

NOINLINE int alias_call(int x) { int r = unwind_lib_alias(x); sink = r; return r; }

/* A function whose frame is 0 bytes where it faults: its return address is in a register (not
 * the link register on aarch64) and its CFA is the stack pointer, as in _Unwind_Resume at its
 * jump to a landing pad. */
int ra_in_reg(int x);
#if defined(__aarch64__)
__asm__(".text\n"
	".globl ra_in_reg\n"
	".type ra_in_reg, %function\n"
	"ra_in_reg:\n"
	"\t.cfi_startproc\n"
	"\tmov x9, x30\n"
	"\t.cfi_register x30, x9\n"
	"\tmov x0, #0\n"
	"\tldr w0, [x0]\n"
	"\tbr x9\n"
	"\t.cfi_endproc\n"
	".size ra_in_reg, .-ra_in_reg\n");
#else
__asm__(".text\n"
	".globl ra_in_reg\n"
	".type ra_in_reg, @function\n"
	"ra_in_reg:\n"
	"\t.cfi_startproc\n"
	"\tpopq %rcx\n"
	"\t.cfi_def_cfa_offset 0\n"
	"\t.cfi_register %rip, %rcx\n"
	"\txorl %eax, %eax\n"
	"\tmovl (%rax), %eax\n"
	"\tjmp *%rcx\n"
	"\t.cfi_endproc\n"
	".size ra_in_reg, .-ra_in_reg\n");
#endif
NOINLINE int ra_call(int x) { int r = ra_in_reg(x); sink = r; return r; }

/* The shared library's file mapped whole for reading, below the loaded copy (as ruby had its
 * own library mapped when killed), then a crash inside the library. */
NOINLINE int mapped_twice(int x)
{
	Dl_info info;
	struct stat st;
	int fd;
	if (!dladdr((void *)unwind_lib_crash, &info) || (fd = open(info.dli_fname, O_RDONLY)) < 0 ||
	    fstat(fd, &st) || mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED)
		return 1;
	close(fd);
	return unwind_lib_crash(x);
}

static int cb(int x) { return crash_here(x); }
static void *thread_main(void *arg) { sink = outer((int)(long)arg); return NULL; }

NOINLINE int run(const char *what)
{
	if (!strcmp(what, "chain")) return outer(1);
	if (!strcmp(what, "libc")) return sort_some(2);
	if (!strcmp(what, "deep")) return recurse(200);
	if (!strcmp(what, "handler")) return in_handler(3);
	if (!strcmp(what, "tail")) return tail_a(4);
	if (!strcmp(what, "wild")) return wild_call(0);
	if (!strcmp(what, "null")) return null_call(0);
	if (!strcmp(what, "shlib")) return unwind_lib_walk(3, cb);
	if (!strcmp(what, "inlib")) return unwind_lib_crash(4);
	if (!strcmp(what, "alias")) return alias_call(6);
	if (!strcmp(what, "cold")) return cold_call(7);
	if (!strcmp(what, "coldtail")) return cold_jump_call(8);
	if (!strcmp(what, "mapped")) return mapped_twice(3);
	if (!strcmp(what, "rareg")) return ra_call(4);
	if (!strcmp(what, "abort")) { abort(); }
	if (!strcmp(what, "thread")) {
		pthread_t t;
		pthread_create(&t, NULL, thread_main, (void *)5L);
		pthread_join(t, NULL);
		return 0;
	}
	fprintf(stderr, "unknown scenario %s\n", what);
	return 2;
}

int main(int argc, char **argv)
{
	ptrec_init(NULL);
	return argc > 1 ? run(argv[1]) : 2;
}
