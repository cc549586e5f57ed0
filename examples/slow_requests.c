/* slow_requests.c — a small multi-threaded request server with a latency watch around each
 * request.  Four workers serve requests; about one in forty is slow, and nothing in the
 * handler says why: the user lookup goes through a cache whose miss path, for some keys,
 * compacts an on-"disk" index (compact_index), which takes ~30 ms.  Every request is watched
 * with a 10 ms budget (ptrec_watch_begin/end); a slow one leaves a watch report, written by
 * the recorder's own thread, whose branch list is cut to that request and names
 * compact_index.  Built with -finstrument-functions, so it runs on any machine. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ptrec.h"

#define WORKERS 4
#define REQUESTS 100                 /* per worker */
#define BUDGET_NS (10ull * 1000000)  /* 10 ms per request */

static volatile unsigned long sink;

static void pause_ms(long ms)
{
	struct timespec ts = {0, ms * 1000000};
	nanosleep(&ts, NULL);
}

/* The hidden cost: rewriting the index, one segment at a time. */
__attribute__((noinline)) static void rewrite_segment(int seg)
{
	sink += (unsigned long)seg;
	pause_ms(10);
}

__attribute__((noinline)) static void compact_index(void)
{
	for (int seg = 0; seg < 3; seg++)
		rewrite_segment(seg);
}

__attribute__((noinline)) static unsigned long cache_miss(unsigned key)
{
	if (key % 41 == 17) /* some keys land in a segment that needs compaction first */
		compact_index();
	return key * 2654435761u;
}

__attribute__((noinline)) static unsigned long cache_get(unsigned key)
{
	if (key % 3 == 0)
		return key; /* hit */
	return cache_miss(key);
}

__attribute__((noinline)) static unsigned long lookup_user(unsigned key)
{
	return cache_get(key) ^ 0x5bd1e995u;
}

__attribute__((noinline)) static unsigned parse_request(unsigned id)
{
	return id * 7 + 3;
}

__attribute__((noinline)) static void render_response(unsigned long user)
{
	sink += user & 0xff;
	pause_ms(1);
}

__attribute__((noinline)) static void handle_request(unsigned id)
{
	unsigned key = parse_request(id);
	unsigned long user = lookup_user(key);
	render_response(user);
}

static void *worker(void *arg)
{
	unsigned base = (unsigned)(long)arg * REQUESTS;
	for (unsigned i = 0; i < REQUESTS; i++) {
		struct ptrec_watch w;
		ptrec_watch_begin(&w, "request", BUDGET_NS);
		handle_request(base + i);
		ptrec_watch_end(&w);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[WORKERS];
	struct ptrec_status st;

	int r = ptrec_init(NULL);
	if (r != 0) {
		fprintf(stderr, "slow_requests: ptrec_init: %s\n", ptrec_strerror(r));
		return 1;
	}
	for (long i = 0; i < WORKERS; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < WORKERS; i++)
		pthread_join(t[i], NULL);
	ptrec_snapshot_flush(30000); /* let the recorder thread finish the reports */
	st.struct_size = sizeof(st);
	ptrec_status(&st);
	printf("slow_requests: %d requests served; %u slow ones snapshotted, %u more over budget "
	       "but rate limited (one report per watch name per PTREC_SNAPSHOT_INTERVAL_MS)\n",
	       WORKERS * REQUESTS, st.snapshots_written, st.snapshots_dropped);
	if (st.last_report[0])
		printf("slow_requests: last report: %s\n", st.last_report);
	ptrec_shutdown();
	return 0;
}
