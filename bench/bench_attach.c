/* bench_attach.c — what attaching a thread costs: ptrec_thread_attach/detach timed inside a
 * thread (ring mapping, signal stack, registry slot), and pthread_create+join of an empty
 * thread with and without automatic attachment, for several ring sizes.  Rings are mapped, not
 * touched: their pages fault in as the thread records.  Median of 200 threads each.
 * attach/detach are the thread's CPU time (user + kernel); create+join is wall time, so it
 * also shows how busy the machine is. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ptrec.h"
#include "bench_util.h"

#define N 200

static double clock_us(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static double median(double *v)
{
	qsort(v, N, sizeof(double), bench_cmp_double);
	return v[N / 2];
}

struct timing { double attach, detach; };

static void *attach_detach(void *p)
{
	struct timing *t = p;
	double t0 = clock_us(CLOCK_THREAD_CPUTIME_ID);
	ptrec_thread_attach();
	double t1 = clock_us(CLOCK_THREAD_CPUTIME_ID);
	ptrec_thread_detach();
	t->attach = t1 - t0;
	t->detach = clock_us(CLOCK_THREAD_CPUTIME_ID) - t1;
	return NULL;
}

static void *empty(void *p)
{
	return p;
}

static double create_join(void)
{
	double v[N];
	for (int i = 0; i < N; i++) {
		pthread_t t;
		double t0 = clock_us(CLOCK_MONOTONIC);
		pthread_create(&t, NULL, empty, NULL);
		pthread_join(t, NULL);
		v[i] = clock_us(CLOCK_MONOTONIC) - t0;
	}
	return median(v);
}

static int start(size_t ring, unsigned flags)
{
	struct ptrec_config cfg;
	ptrec_config_init(&cfg);
	cfg.backend = PTREC_BACKEND_INSTRUMENTED;
	cfg.ring_size = ring;
	cfg.memory_budget = 1u << 30;
	cfg.flags = flags | PTREC_F_NO_SIGNALS;
	return ptrec_init(&cfg);
}

int main(void)
{
	static const size_t rings[] = {4u << 10, 64u << 10, 1u << 20, 8u << 20};

	printf("per-thread attach cost (instrumented backend, median of %d threads;\n"
	       "attach/detach: thread CPU time; create+join: wall time)\n\n", N);
	printf("baseline: pthread_create+join of an empty thread, no recorder: %.1f us\n\n",
	       create_join());
	printf("%10s %12s %12s %22s\n", "ring", "attach us", "detach us", "create+join+auto us");
	for (size_t r = 0; r < sizeof(rings) / sizeof(rings[0]); r++) {
		double a[N], d[N];
		if (start(rings[r], PTREC_F_NO_THREADS) != 0)
			return 1;
		for (int i = 0; i < N; i++) {
			struct timing t;
			pthread_t th;
			pthread_create(&th, NULL, attach_detach, &t);
			pthread_join(th, NULL);
			a[i] = t.attach;
			d[i] = t.detach;
		}
		ptrec_shutdown();
		if (start(rings[r], 0) != 0)
			return 1;
		double cj = create_join();
		ptrec_shutdown();
		printf("%8zuKiB %12.1f %12.1f %22.1f\n", rings[r] >> 10, median(a), median(d), cj);
	}
	return 0;
}
