/* bench_overhead.c — what the instrumented backend costs: the same CPU-bound workload built
 * without instrumentation, with -finstrument-functions (calls), with
 * -fsanitize-coverage=trace-pc (edges), with the recommended flags (`ptrec cflags`) for $CC,
 * and plain and recommended with Clang; each run before ptrec_init (hooks find no ring) and
 * while recording into a 64 KiB ring; then the hook cost with and without timestamps.
 * Prints the fastest of 7 runs each (the machine is shared, so the minimum is the least
 * disturbed measurement), after a warm-up; times are the thread's CPU time, so other load on
 * the machine does not count. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ptrec.h"
#include "workload.h"

#define RUNS 7
#define FIB_N 30          /* 2.7 million calls */
#define SORT_N 512
#define SORT_ROUNDS 60    /* ~4 million inner-loop iterations */
#define LEAF_N 4000000    /* calls of a function that is never inlined */
#define NBUILDS 6

static volatile uint64_t sink;

typedef uint64_t (*calls_fn)(unsigned);
typedef uint64_t (*branches_fn)(unsigned, unsigned);

struct build {
	const char *name;
	int plain;            /* index of the plain build of the same compiler */
	calls_fn fib, leaf;
	branches_fn sort;
	double t[2][3];       /* [recording][fib, sort, leaf] seconds */
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Fastest of RUNS runs of workload w (0 fib, 1 sort, 2 leaf) of build b. */
static double fastest(const struct build *b, int w)
{
	double best = 1e9;
	for (int i = 0; i < RUNS; i++) {
		double t0 = now_s();
		if (w == 0)
			sink += b->fib(FIB_N);
		else if (w == 1)
			sink += b->sort(SORT_N, SORT_ROUNDS);
		else
			sink += b->leaf(LEAF_N);
		double t = now_s() - t0;
		if (t < best)
			best = t;
	}
	return best;
}

static int start(unsigned flags)
{
	struct ptrec_config cfg;
	ptrec_config_init(&cfg);
	cfg.backend = PTREC_BACKEND_INSTRUMENTED;
	cfg.flags |= PTREC_F_NO_SIGNALS | flags;
	if (ptrec_init(&cfg) != 0) {
		fprintf(stderr, "bench_overhead: ptrec_init failed\n");
		return -1;
	}
	return 0;
}

int main(void)
{
	struct build b[NBUILDS] = {
		{"gcc plain", 0, wl_calls_plain, wl_leaf_calls_plain, wl_branches_plain, {{0}}},
		{"gcc -finstrument-functions", 0, wl_calls_calls, wl_leaf_calls_calls,
		 wl_branches_calls, {{0}}},
		{"gcc trace-pc (edges)", 0, wl_calls_edges, wl_leaf_calls_edges, wl_branches_edges,
		 {{0}}},
		{"$CC recommended (ptrec cflags)", 0, wl_calls_rec, wl_leaf_calls_rec,
		 wl_branches_rec, {{0}}},
		{BENCH_CLANG " plain", 4, wl_calls_clang_plain, wl_leaf_calls_clang_plain,
		 wl_branches_clang_plain, {{0}}},
		{BENCH_CLANG " recommended", 4, wl_calls_clang_rec, wl_leaf_calls_clang_rec,
		 wl_branches_clang_rec, {{0}}},
	};
	double timed[2];

	fastest(&b[0], 0); /* warm-up: page faults, CPU frequency */
	fastest(&b[0], 1);
	for (int v = 0; v < NBUILDS; v++)
		for (int w = 0; w < 3; w++)
			b[v].t[0][w] = fastest(&b[v], w);
	if (start(0))
		return 1;
	for (int v = 0; v < NBUILDS; v++)
		for (int w = 0; w < 3; w++)
			b[v].t[1][w] = fastest(&b[v], w);
	timed[0] = b[1].t[1][2];
	ptrec_shutdown();
	if (start(PTREC_F_SOFT_TIME))
		return 1;
	timed[1] = fastest(&b[1], 2);
	ptrec_shutdown();

	unsigned long calls = 0;
	{ unsigned long x = 1, y = 1; for (int i = 2; i <= FIB_N; i++) { unsigned long z = x + y; x = y; y = z; } calls = 2 * y - 1; }
	printf("instrumented backend overhead (fastest of %d runs; 64 KiB rings)\n", RUNS);
	printf("A: recursive fib(%d), %lu calls; B: insertion sort of %d values x %d; "
	       "C: %d calls of a function never inlined\n", FIB_N, calls, SORT_N, SORT_ROUNDS,
	       LEAF_N);
	printf("x = time / the same compiler's plain build without ring\n\n");
	printf("%-34s %9s %9s %7s %9s %9s %7s %8s %8s\n", "build", "A no ring", "A rec", "A x",
	       "B no ring", "B rec", "B x", "C ns/call", "C +ns");
	for (int v = 0; v < NBUILDS; v++) {
		const struct build *p = &b[b[v].plain];
		printf("%-34s %7.1fms %7.1fms %6.2fx %7.1fms %7.1fms %6.2fx %8.2f %8.2f\n", b[v].name,
		       b[v].t[0][0] * 1e3, b[v].t[1][0] * 1e3, b[v].t[1][0] / p->t[0][0],
		       b[v].t[0][1] * 1e3, b[v].t[1][1] * 1e3, b[v].t[1][1] / p->t[0][1],
		       b[v].t[1][2] / LEAF_N * 1e9,
		       (b[v].t[1][2] - p->t[0][2]) / LEAF_N * 1e9);
	}
	printf("\nhook cost with and without timestamps (C, -finstrument-functions: two records "
	       "per call)\n");
	printf("  untimed (default)          %6.2f ns/call\n", timed[0] / LEAF_N * 1e9);
	printf("  timed (PTREC_F_SOFT_TIME)  %6.2f ns/call  = %.2fx untimed\n",
	       timed[1] / LEAF_N * 1e9, timed[1] / timed[0]);
	return 0;
}
