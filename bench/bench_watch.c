/* bench_watch.c — what an untriggered latency watch costs: ptrec_watch_begin + ptrec_watch_end
 * around an empty span, against the loop alone, a ptrec_mark, and two reads of the precise
 * clock (CLOCK_MONOTONIC, what a hand-made timer would pay), and two reads of the TSC: what a
 * watch on intel_pt without PTWRITE reads instead of writing its markers (no PT here to run
 * that path itself).  Instrumented backend with a 64 KiB ring (the markers go into it), and
 * before ptrec_init.  Per pair, fastest of RUNS runs of N iterations, thread CPU time (the
 * machine is shared). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ptrec.h"

#define RUNS 7
#define N 5000000

static volatile uint64_t sink;

static double cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static inline uint64_t tsc(void)
{
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

enum what { LOOP, MARK, WATCH, CLOCK2, TSC2, WHATS };

static double per_iter(enum what w)
{
	double best = 1e30;
	for (int r = 0; r < RUNS; r++) {
		double t0 = cpu_ns();
		for (int i = 0; i < N; i++) {
			struct ptrec_watch pw;
			struct timespec a, b;
			uint64_t c0;
			switch (w) {
			case LOOP:
				sink++;
				break;
			case MARK:
				ptrec_mark((uint64_t)i);
				sink++;
				break;
			case WATCH:
				ptrec_watch_begin(&pw, "bench", 1000000000ull);
				sink++;
				sink += ptrec_watch_end(&pw);
				break;
			case TSC2:
				c0 = tsc();
				sink++;
				sink += tsc() - c0;
				break;
			case CLOCK2:
				clock_gettime(CLOCK_MONOTONIC, &a);
				sink++;
				clock_gettime(CLOCK_MONOTONIC, &b);
				sink += (uint64_t)(b.tv_nsec - a.tv_nsec);
				break;
			case WHATS:
				break;
			}
		}
		double t = (cpu_ns() - t0) / N;
		if (t < best)
			best = t;
	}
	return best;
}

int main(void)
{
	static const char *const names[] = {"empty loop", "ptrec_mark", "watch begin+end",
	                                    "2x CLOCK_MONOTONIC", "2x rdtsc"};
	double before[WHATS], after[WHATS];
	struct ptrec_config cfg;

	for (int w = 0; w < WHATS; w++)
		before[w] = per_iter((enum what)w);
	ptrec_config_init(&cfg);
	cfg.backend = PTREC_BACKEND_INSTRUMENTED;
	cfg.ring_size = 64u << 10;
	if (ptrec_init(&cfg) != 0) {
		fprintf(stderr, "bench_watch: ptrec_init failed\n");
		return 1;
	}
	for (int w = 0; w < WHATS; w++)
		after[w] = per_iter((enum what)w);
	struct ptrec_status st;
	st.struct_size = sizeof(st);
	ptrec_status(&st);
	ptrec_shutdown();
	printf("untriggered watch: ns per iteration (fastest of %d x %d, thread CPU time)\n", RUNS,
	       N);
	printf("%-20s %16s %22s\n", "", "before ptrec_init", "recording (64K ring)");
	for (int w = 0; w < WHATS; w++)
		printf("%-20s %16.1f %22.1f\n", names[w], before[w], after[w]);
	printf("watch begin+end minus the loop: %.1f ns (goal <= 50); snapshots taken: %u\n",
	       after[WATCH] - after[LOOP], st.snapshots_requested);
	return 0;
}
