/* watcher.c — latency watches in a live process (instrumented backend: built with
 * -finstrument-functions).  The main thread runs a span "slow_op" over its 1 ms budget (a
 * 30 ms sleep in step_c) with an under-budget watch "quick_inner" nested inside, then the same
 * name again at once (refused by the per-name rate limit), then "fast_op" under its budget; a
 * worker thread runs its own "worker_op" over budget at the same time.  Prints nothing; exits
 * 0 when the counters say: 3 snapshots requested, 2 written, 1 dropped.  The reports are
 * checked by test_watch.sh. */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#include "ptrec.h"

#define MS 1000000ull

static volatile long sink;

__attribute__((noinline)) static void step_a(void)
{
	sink++;
}

__attribute__((noinline)) static void step_c(void)
{
	struct timespec ts = {0, 30 * MS};
	nanosleep(&ts, NULL);
}

__attribute__((noinline)) static void step_b(void)
{
	step_c();
}

__attribute__((noinline)) static void span_work(void)
{
	step_a();
	step_b();
}

__attribute__((noinline)) static void quick_work(void)
{
	step_a();
}

__attribute__((noinline)) static void before_span(void)
{
	step_a();
}

__attribute__((noinline)) static void worker_span(void)
{
	step_c();
}

static void *worker_main(void *arg)
{
	struct ptrec_watch w;
	(void)arg;
	step_a();
	ptrec_watch_begin(&w, "worker_op", 1 * MS);
	worker_span();
	ptrec_watch_end(&w);
	step_a();
	return NULL;
}

int main(void)
{
	struct ptrec_watch outer, inner, again, fast;
	pthread_t t;

	if (ptrec_init(NULL) != 0)
		return 97;
	pthread_create(&t, NULL, worker_main, NULL);
	before_span();
	ptrec_watch_begin(&outer, "slow_op", 1 * MS);
	ptrec_watch_begin(&inner, "quick_inner", 10000 * MS);
	quick_work();
	ptrec_watch_end(&inner);
	span_work();
	uint64_t took = ptrec_watch_end(&outer);
	before_span();

	ptrec_watch_begin(&again, "slow_op", 1 * MS);
	span_work();
	ptrec_watch_end(&again);

	ptrec_watch_begin(&fast, "fast_op", 10000 * MS);
	span_work();
	ptrec_watch_end(&fast);
	pthread_join(t, NULL);

	int ok = 1;
	if (took < 20 * MS) {
		fprintf(stderr, "watcher: slow_op took %llu ns, expected >= 20 ms\n",
		        (unsigned long long)took);
		ok = 0;
	}
	int r = ptrec_snapshot_flush(60000);
	struct ptrec_status st;
	st.struct_size = sizeof(st);
	ptrec_status(&st);
	if (r != 0 || st.snapshots_requested != 3 || st.snapshots_written != 2 ||
	    st.snapshots_dropped != 1) {
		fprintf(stderr, "watcher: flush %d; %u requested, %u written, %u dropped; "
		        "expected 3, 2, 1\n", r, st.snapshots_requested, st.snapshots_written,
		        st.snapshots_dropped);
		ok = 0;
	}
	ptrec_shutdown();
	return ok ? 0 : 1;
}
