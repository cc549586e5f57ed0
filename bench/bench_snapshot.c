/* bench_snapshot.c — what ptrec_snapshot() costs its caller, against thread count and ring
 * size (instrumented backend, every ring full), and how long after the request the dump and
 * its report are on disk.  Before the recorder thread (issue 13) the caller did all of that
 * work itself, so the last columns are also what a snapshot used to cost the caller.
 * The other threads have filled their rings and sleep, so the caller's time is the recorder's
 * work, not the scheduler's.  Fastest, median and worst of RUNS snapshots per row (on a
 * shared machine the fastest is the least disturbed measurement). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ptrec.h"
#include "workload.h"
#include "bench_util.h"

#define RUNS 9

static volatile uint64_t sink;
static pthread_barrier_t filled;
static atomic_int quit;

static void *filler(void *p)
{
	(void)p;
	sink += wl_calls_calls(22); /* ~57k calls: 2.7 MB of records, more than any ring here */
	pthread_barrier_wait(&filled);
	while (!atomic_load(&quit))
		usleep(1000);
	return NULL;
}

static unsigned written(void)
{
	struct ptrec_status st;
	st.struct_size = sizeof(st);
	ptrec_status(&st);
	return st.snapshots_written;
}

static void row(const char *dir, size_t ring, unsigned threads)
{
	struct ptrec_config cfg;
	pthread_t t[64];
	double caller[RUNS], done[RUNS];

	ptrec_config_init(&cfg);
	cfg.backend = PTREC_BACKEND_INSTRUMENTED;
	cfg.ring_size = ring;
	cfg.memory_budget = 1u << 30;
	cfg.dump_dir = dir;
	cfg.snapshot_interval_ms = 0;
	cfg.snapshot_max_files = 1000;
	cfg.report_timeout_ms = 60000;
	if (ptrec_init(&cfg) != 0) {
		fprintf(stderr, "bench_snapshot: ptrec_init failed\n");
		exit(1);
	}
	atomic_store(&quit, 0);
	pthread_barrier_init(&filled, NULL, threads);
	for (unsigned i = 1; i < threads; i++)
		pthread_create(&t[i], NULL, filler, NULL);
	sink += wl_calls_calls(22);
	pthread_barrier_wait(&filled);
	for (int i = 0; i < RUNS; i++) {
		unsigned before = written();
		double t0 = bench_now_us();
		int r = ptrec_snapshot("bench");
		double t1 = bench_now_us();
		if (r != 0) {
			fprintf(stderr, "bench_snapshot: snapshot refused: %s\n", ptrec_strerror(r));
			exit(1);
		}
		while (written() == before)
			usleep(100);
		ptrec_snapshot_flush(60000); /* its report too */
		caller[i] = t1 - t0;
		done[i] = bench_now_us() - t0;
	}
	atomic_store(&quit, 1);
	for (unsigned i = 1; i < threads; i++)
		pthread_join(t[i], NULL);
	ptrec_shutdown();
	qsort(caller, RUNS, sizeof(double), bench_cmp_double);
	qsort(done, RUNS, sizeof(double), bench_cmp_double);
	printf("%7u %7zuK %12.1f %12.1f %12.1f %14.0f %14.0f\n", threads, ring >> 10, caller[0],
	       caller[RUNS / 2], caller[RUNS - 1], done[RUNS / 2], done[RUNS - 1]);
	fflush(stdout);
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "rm -f '%s'/*", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "bench_snapshot: could not clean %s\n", dir);
}

int main(void)
{
	static const size_t rings[] = {64u << 10, 1u << 20};
	static const unsigned threads[] = {1, 4, 8};
	char dir[] = "/tmp/ptrec-bench-snap.XXXXXX";

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	if (!getenv("PTREC_TOOL"))
		setenv("PTREC_TOOL", PTREC_BENCH_TOOL, 1);
	printf("ptrec_snapshot: cost to the caller vs. request -> dump + report written (= what the\n"
	       "caller paid before the recorder thread); instrumented rings, all full; us, %d runs\n",
	       RUNS);
	printf("%7s %8s %12s %12s %12s %14s %14s\n", "threads", "ring", "caller min", "caller med",
	       "caller max", "written med", "written max");
	for (size_t r = 0; r < sizeof(rings) / sizeof(rings[0]); r++)
		for (size_t k = 0; k < sizeof(threads) / sizeof(threads[0]); k++)
			row(dir, rings[r], threads[k]);
	rmdir(dir);
	return 0;
}
