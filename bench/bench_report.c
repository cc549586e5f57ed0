/* bench_report.c — a full report of 64 threads with 1 MiB instrumented rings each (43690
 * records per ring: calls and returns among functions of this program and libc), from dump
 * bytes in memory to text, JSON and trace output; also 64 KiB rings for comparison.  Prints
 * the time of each phase. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dump/dump_read.h"
#include "ptrec.h"
#include "dump_writer.h"
#include "report/report.h"

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static uint64_t rng = 0x2545f4914f6cdd1dull;
static uint64_t xrand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Real code addresses of this process: functions of libptrec and libc. */
static uint64_t funcs[16];

static void pick_funcs(void)
{
	void *f[] = {(void *)ptrec_dump_parse, (void *)ptrec_report_build, (void *)ptrec_symbolize,
	             (void *)ptrec_report_text, (void *)ptrec_bts_decode,
	             (void *)ptrec_callstack_rebuild, (void *)ptrec_elf_lookup,
	             (void *)ptrec_dwarf_lookup_line, (void *)malloc, (void *)free,
	             (void *)memcpy, (void *)strlen, (void *)qsort, (void *)printf,
	             (void *)snprintf, (void *)clock_gettime};
	for (size_t i = 0; i < 16; i++)
		funcs[i] = (uint64_t)(uintptr_t)f[i];
}

/* One ring: a random walk of calls (depth up to 12) and returns, 24-byte soft records. */
static void make_ring(struct tbuf *r, size_t bytes)
{
	uint64_t stack[16];
	size_t depth = 0;
	while (r->n + 24 <= bytes) {
		if (depth < 12 && (depth == 0 || xrand() % 2)) {
			uint64_t site = (depth ? stack[depth - 1] : funcs[0]) + 5 + xrand() % 64;
			uint64_t fn = funcs[xrand() % 16];
			tw_soft(r, site, fn, PTREC_BR_CALL);
			stack[depth++] = fn;
			(void)site;
		} else {
			uint64_t fn = stack[--depth];
			tw_soft(r, fn, (depth ? stack[depth - 1] : funcs[0]) + 7, PTREC_BR_RET);
		}
	}
}

static char *self_maps(size_t *len)
{
	FILE *f = fopen("/proc/self/maps", "r");
	struct tbuf b = {0};
	char buf[4096];
	size_t n;
	while (f && (n = fread(buf, 1, sizeof(buf), f)) > 0)
		tb_put(&b, buf, n);
	if (f)
		fclose(f);
	*len = b.n;
	return (char *)b.p;
}

static void run(unsigned nthreads, size_t ring)
{
	struct tbuf dump = {0}, r = {0};
	struct ptrec_dump d;
	struct ptrec_dump_error err;
	struct ptrec_report rep;
	struct ptrec_report_options opt;
	size_t mlen;
	char *maps = self_maps(&mlen);
	double t0, t_parse, t_build, t_text, t_json, t_trace;
	FILE *null = fopen("/dev/null", "w");

	tw_header(&dump);
	tw_process(&dump, 1, 100, PTREC_EVENT_CRASH, 11, 1, 0, PTREC_BACKEND_INSTRUMENTED, nthreads,
	           "bench", "/proc/self/exe", "");
	tw_regs(&dump, 100, funcs[0] + 3, 0, 0);
	tw_record(&dump, PTREC_REC_MAPS, maps, mlen);
	for (unsigned i = 0; i < nthreads; i++) {
		r.n = 0;
		make_ring(&r, ring);
		tw_thread(&dump, 100 + i, PTREC_BACKEND_INSTRUMENTED,
		          i == 0 ? PTREC_THREAD_CRASHED : 0, "worker", ring, r.n * 3, r.p, r.n);
	}
	tw_end(&dump);

	t0 = now_ms();
	if (ptrec_dump_parse(dump.p, dump.n, &d, &err)) {
		printf("parse failed: %s\n", err.cause);
		exit(1);
	}
	t_parse = now_ms() - t0;
	ptrec_report_options_init(&opt);
	t0 = now_ms();
	ptrec_report_build(&rep, &d, &opt);
	t_build = now_ms() - t0;
	t0 = now_ms();
	ptrec_report_text(&rep, null);
	t_text = now_ms() - t0;
	t0 = now_ms();
	ptrec_report_json(&rep, null);
	t_json = now_ms() - t0;
	t0 = now_ms();
	ptrec_report_trace(&rep, null);
	t_trace = now_ms() - t0;
	printf("%7u %9zu %9.1f %10.1f %10.1f %12.1f %10.1f %10.1f %10.1f\n", nthreads, ring / 1024,
	       dump.n / 1048576.0, t_parse, t_build, t_text, t_json, t_trace,
	       t_parse + t_build + t_text);
	ptrec_report_free(&rep);
	ptrec_dump_free(&d);
	fclose(null);
	free(dump.p);
	free(r.p);
	free(maps);
}

int main(void)
{
	pick_funcs();
	printf("full report from an in-memory dump (instrumented records, real code addresses)\n");
	printf("phases in ms; 'text total' = parse + build (decode, stacks) + text report\n\n");
	printf("%7s %9s %9s %10s %10s %12s %10s %10s %10s\n", "threads", "ring KiB", "dump MiB",
	       "parse", "build", "text report", "json", "trace", "text total");
	run(64, 64 * 1024);
	run(64, 1024 * 1024);
	run(1, 1024 * 1024);
	return 0;
}
