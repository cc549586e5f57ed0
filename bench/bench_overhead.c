/* bench_overhead.c — what the instrumented backend costs: the same CPU-bound workload built
 * without instrumentation, with -finstrument-functions (calls) and with
 * -fsanitize-coverage=trace-pc (edges), each run before ptrec_init (hooks find no ring) and
 * while recording into a 64 KiB ring.  Prints one table: the fastest of 7 runs each (the
 * machine is shared, so the minimum is the least disturbed measurement), after a warm-up;
 * times are the thread's CPU time, so other load on the machine does not count. */
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

static volatile uint64_t sink;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

typedef uint64_t (*calls_fn)(unsigned);
typedef uint64_t (*branches_fn)(unsigned, unsigned);

static double fastest_calls(calls_fn f)
{
	double t[RUNS];
	for (int i = 0; i < RUNS; i++) {
		double t0 = now_s();
		sink += f(FIB_N);
		t[i] = now_s() - t0;
	}
	qsort(t, RUNS, sizeof(double), cmp_double);
	return t[0];
}

static double fastest_branches(branches_fn f)
{
	double t[RUNS];
	for (int i = 0; i < RUNS; i++) {
		double t0 = now_s();
		sink += f(SORT_N, SORT_ROUNDS);
		t[i] = now_s() - t0;
	}
	qsort(t, RUNS, sizeof(double), cmp_double);
	return t[0];
}

int main(void)
{
	static const char *const names[3] = {"plain", "calls (-finstrument-functions)",
	                                     "edges (trace-pc)"};
	calls_fn cf[3] = {wl_calls_plain, wl_calls_calls, wl_calls_edges};
	branches_fn bf[3] = {wl_branches_plain, wl_branches_calls, wl_branches_edges};
	double c_off[3], b_off[3], c_on[3], b_on[3];
	struct ptrec_config cfg;
	struct ptrec_status st;

	fastest_calls(cf[0]); /* warm-up: page faults, CPU frequency */
	fastest_branches(bf[0]);
	for (int v = 0; v < 3; v++) {
		c_off[v] = fastest_calls(cf[v]);
		b_off[v] = fastest_branches(bf[v]);
	}
	ptrec_config_init(&cfg);
	cfg.backend = PTREC_BACKEND_INSTRUMENTED;
	cfg.flags |= PTREC_F_NO_SIGNALS;
	if (ptrec_init(&cfg) != 0) {
		fprintf(stderr, "bench_overhead: ptrec_init failed\n");
		return 1;
	}
	st.struct_size = sizeof(st);
	ptrec_status(&st);
	for (int v = 0; v < 3; v++) {
		c_on[v] = fastest_calls(cf[v]);
		b_on[v] = fastest_branches(bf[v]);
	}
	ptrec_shutdown();

	unsigned long calls = 0;
	{ unsigned long a = 1, b = 1; for (int i = 2; i <= FIB_N; i++) { unsigned long c = a + b; a = b; b = c; } calls = 2 * b - 1; }
	printf("instrumented backend overhead (fastest of %d runs; %s ring of %zu bytes)\n", RUNS,
	       ptrec_backend_name(st.backend), st.ring_size);
	printf("workload A: recursive fib(%d), %lu calls; workload B: insertion sort of %d values x %d\n\n",
	       FIB_N, calls, SORT_N, SORT_ROUNDS);
	printf("%-32s %12s %12s %9s %12s %12s %9s\n", "build", "A no ring", "A recording", "A x",
	       "B no ring", "B recording", "B x");
	for (int v = 0; v < 3; v++)
		printf("%-32s %10.1fms %10.1fms %8.2fx %10.1fms %10.1fms %8.2fx\n", names[v],
		       c_off[v] * 1e3, c_on[v] * 1e3, c_on[v] / c_off[0], b_off[v] * 1e3,
		       b_on[v] * 1e3, b_on[v] / b_off[0]);
	printf("\nper call (A, recording, calls build): %.2f ns vs %.2f ns plain = +%.2f ns "
	       "(two records: entry and exit)\n",
	       c_on[1] / calls * 1e9, c_off[0] / calls * 1e9, (c_on[1] - c_off[0]) / calls * 1e9);
	printf("x = time / plain build without ring\n");
	return 0;
}
