/* bench_unwind.c — the cost of unwinding one thread's stack in the report: this program
 * recurses 64 deep (-O2, no frame pointers needed: CFI), takes its registers with getcontext
 * and copies 64 KiB of its stack into a dump built in memory with its own MAPS, then times
 * ptrec_unwind on that dump (first call: CFI tables of the modules loaded; then warm), against
 * glibc's backtrace() (libgcc's unwinder on the live stack) from the same point.  Goal: under
 * 1 ms per thread for 64 frames. */
#include "config.h"

#include <execinfo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>

#include "dump/dump_read.h"
#include "ptrec.h"
#include "dump_writer.h"
#include "report/unwind.h"
#include "bench_util.h"

#define DEPTH 62
#define STACK_BYTES (64u << 10)
#define RUNS 2000

static ucontext_t uc;
static uint8_t stack_copy[STACK_BYTES];
static uint64_t stack_at, stack_end;
static size_t stack_len;
static double live_us;
static int live_frames;
volatile int sink;

/* The bottom of the recursion: registers, stack bytes, and the peer's timing. */
__attribute__((noinline)) static int capture(void)
{
	void *pcs[128];
	double t0;
	getcontext(&uc);
	stack_at = (uint64_t)uc.uc_mcontext.gregs[REG_RSP];
	stack_len = stack_end - stack_at < STACK_BYTES ? stack_end - stack_at : STACK_BYTES;
	memcpy(stack_copy, (const void *)(uintptr_t)stack_at, stack_len);
	t0 = bench_now_us();
	for (int i = 0; i < RUNS; i++)
		live_frames = backtrace(pcs, 128);
	live_us = (bench_now_us() - t0) / RUNS;
	return 1;
}

__attribute__((noinline)) static int deep(int n)
{
	if (n == 0)
		return capture();
	sink = n;
	return deep(n - 1) + sink;
}

static char *read_maps(size_t *len)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char *buf = malloc(1 << 20);
	*len = f && buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
	if (f)
		fclose(f);
	return buf;
}

int main(void)
{
	struct tbuf b = {0}, regs = {0};
	struct ptrec_dump d;
	struct ptrec_dump_error err;
	struct ptrec_symbolizer s;
	struct ptrec_warnings w;
	struct ptrec_unwind_frame f[256];
	const char *stop;
	size_t maps_len, n = 0;
	char *maps;
	double t0, cold, warm, load;

	maps = read_maps(&maps_len);
	for (char *l = maps; l && l < maps + maps_len; l = strchr(l, '\n') + 1) {
		unsigned long long a, e;
		if (strstr(l, "[stack]") && strstr(l, "[stack]") < strchr(l, '\n') &&
		    sscanf(l, "%llx-%llx", &a, &e) == 2)
			stack_end = e;
		if (!strchr(l, '\n'))
			break;
	}
	if (!stack_end) {
		fprintf(stderr, "bench_unwind: no [stack] in /proc/self/maps\n");
		return 1;
	}
	deep(DEPTH);
	tw_header(&b);
	tw_process(&b, 1, 1, PTREC_EVENT_SNAPSHOT, 0, 0, 0, PTREC_BACKEND_NONE, 0, "bench", "", "");
	tb_u32(&regs, 1);
	tb_u32(&regs, PTREC_REG_COUNT);
	for (int i = 0; i < PTREC_REG_COUNT; i++)
		tb_u64(&regs, (uint64_t)uc.uc_mcontext.gregs[i]);
	tw_record(&b, PTREC_REC_REGS, regs.p, regs.n);
	tw_record(&b, PTREC_REC_MAPS, maps, maps_len);
	tw_memory(&b, stack_at, PTREC_MEM_STACK, 1, stack_copy, stack_len);
	tw_end(&b);
	if (ptrec_dump_parse(b.p, b.n, &d, &err)) {
		fprintf(stderr, "bench_unwind: the dump does not parse: %s\n", err.cause);
		return 1;
	}
	memset(&w, 0, sizeof(w));
	ptrec_symbolizer_init(&s, &d, NULL, &w);
	/* Loading the modules (symbols, debug info) is the report's cost anyway: done first. */
	t0 = bench_now_us();
	for (uint64_t pc = (uint64_t)(uintptr_t)deep; pc; pc = 0) {
		struct ptrec_symbol sym;
		ptrec_symbolize(&s, pc, 0, &sym);
		ptrec_symbolize(&s, (uint64_t)(uintptr_t)backtrace, 0, &sym);
	}
	load = bench_now_us() - t0;
	t0 = bench_now_us();
	n = ptrec_unwind(&s, &d, d.regs.gregs, f, 256, &stop);
	cold = bench_now_us() - t0;
	t0 = bench_now_us();
	for (int i = 0; i < RUNS; i++)
		n = ptrec_unwind(&s, &d, d.regs.gregs, f, 256, &stop);
	warm = (bench_now_us() - t0) / RUNS;
	printf("unwinding one thread, %d-deep recursion at -O2 (CFI), %zu bytes of stack\n", DEPTH,
	       stack_len);
	printf("%-46s %8s %14s\n", "method", "frames", "us per thread");
	printf("%-46s %8s %14.0f\n", "(loading the modules: symbols, debug info)", "", load);
	printf("%-46s %8zu %14.1f\n", "ptrec_unwind, first (CFI sections opened)", n, cold);
	printf("%-46s %8zu %14.2f\n", "ptrec_unwind, warm", n, warm);
	printf("%-46s %8d %14.2f\n", "glibc backtrace() on the live stack (peer)", live_frames,
	       live_us);
	printf("stops: %s\ngoal: < 1000 us for 64 frames: %s\n", stop,
	       cold < 1000 && warm < 1000 ? "met" : "NOT met");
	ptrec_symbolizer_free(&s);
	ptrec_warnings_free(&w);
	ptrec_dump_free(&d);
	free(b.p);
	free(regs.p);
	free(maps);
	return 0;
}
