/* bench_server.c — throughput of a real-world-shaped CPU-bound workload (a key-value server's
 * request path: event loop, parser, hash table, replies; bench/server_workload.c, built with
 * LTO) built plain, instrumented, and with the recommended flags for $CC and for Clang; each
 * instrumented build runs without a ring (hooks only) and recording.  Prints requests per
 * second, fastest of 7 runs each (thread CPU time), and the ratio to the same compiler's plain
 * build. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ptrec.h"
#include "server_workload.h"

#define RUNS 7
#define EVENTS 40
#define NREQ 20000

typedef uint64_t (*run_fn)(const char *, size_t, unsigned);

static volatile uint64_t sink;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double fastest(run_fn f, const char *batch, size_t len)
{
	double best = 1e9;
	for (int i = 0; i < RUNS; i++) {
		double t0 = now_s();
		sink += f(batch, len, EVENTS);
		double t = now_s() - t0;
		if (t < best)
			best = t;
	}
	return best;
}

/* NREQ pipelined requests: a third SET, a third GET, INCR and DEL for the rest, over 2000
 * keys. */
static char *make_batch(size_t *len)
{
	char *b = malloc((size_t)NREQ * 40);
	size_t n = 0;
	uint32_t x = 1;
	if (!b)
		exit(1);
	for (int i = 0; i < NREQ; i++) {
		x = x * 1103515245u + 12345u;
		unsigned key = (x >> 8) % 2000, op = (x >> 20) % 6;
		if (op < 2)
			n += (size_t)sprintf(b + n, "SET key:%u %u\r\n", key, x % 100000);
		else if (op < 4)
			n += (size_t)sprintf(b + n, "GET key:%u\r\n", key);
		else if (op < 5)
			n += (size_t)sprintf(b + n, "INCR counter:%u\r\n", key % 50);
		else
			n += (size_t)sprintf(b + n, "DEL key:%u\r\n", key);
	}
	*len = n;
	return b;
}

int main(void)
{
	static const struct {
		const char *name;
		run_fn f;
		int plain; /* index of the same compiler's plain build */
	} b[] = {
		{"gcc plain (LTO)", sv_run_plain, 0},
		{"gcc -finstrument-functions (LTO)", sv_run_calls, 0},
		{"$CC recommended (ptrec cflags, LTO)", sv_run_rec, 0},
		{BENCH_CLANG " plain (LTO)", sv_run_clang_plain, 3},
		{BENCH_CLANG " recommended (LTO)", sv_run_clang_rec, 3},
	};
	enum { N = sizeof(b) / sizeof(b[0]) };
	double t[2][N];
	size_t len;
	char *batch = make_batch(&len);
	struct ptrec_config cfg;

	fastest(b[0].f, batch, len); /* warm-up */
	for (int i = 0; i < N; i++)
		t[0][i] = fastest(b[i].f, batch, len);
	ptrec_config_init(&cfg);
	cfg.backend = PTREC_BACKEND_INSTRUMENTED;
	cfg.flags |= PTREC_F_NO_SIGNALS;
	if (ptrec_init(&cfg) != 0) {
		fprintf(stderr, "bench_server: ptrec_init failed\n");
		return 1;
	}
	for (int i = 0; i < N; i++)
		t[1][i] = fastest(b[i].f, batch, len);
	ptrec_shutdown();

	double reqs = (double)NREQ * EVENTS;
	printf("key-value server request path (event loop + parser + hash table), %d requests, "
	       "fastest of %d runs; 64 KiB rings\n", NREQ * EVENTS, RUNS);
	printf("x = throughput / the same compiler's plain build\n\n");
	printf("%-38s %14s %7s %14s %7s\n", "build", "no ring req/s", "x", "recording req/s", "x");
	for (int i = 0; i < N; i++) {
		double p = t[0][b[i].plain];
		printf("%-38s %12.2fM %6.2fx %14.2fM %6.2fx\n", b[i].name, reqs / t[0][i] / 1e6,
		       p / t[0][i], reqs / t[1][i] / 1e6, p / t[1][i]);
	}
	free(batch);
	return 0;
}
