/* snapshotter.c — takes ptrec_snapshot()s while three worker threads keep running
 * (instrumented backend: built with -finstrument-functions).  Exits 0 when every step behaved:
 * the first snapshot is written and names its report, an immediate second one is refused by
 * the rate limit (and counted as dropped), the workers were never stopped (they kept
 * counting), the recorder thread writes the dump and the report (ptrec_snapshot_flush waits
 * for them), and the process goes on.
 * Prints the report (or dump) path on stdout. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_setname_np */
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ptrec.h"

static atomic_int stop;
static atomic_long progress[3];
static volatile long sink;

__attribute__((noinline)) static long worker_leaf(long x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) static void worker_step(int id)
{
	sink += worker_leaf(id);
	atomic_fetch_add(&progress[id], 1);
}

static void *worker_main(void *arg)
{
	int id = (int)(long)arg;
	char name[16];
	snprintf(name, sizeof(name), "worker-%d", id);
	pthread_setname_np(pthread_self(), name);
	while (!atomic_load(&stop))
		worker_step(id);
	return NULL;
}

__attribute__((noinline)) static int slow_request(char *path, size_t len)
{
	return ptrec_snapshot_path("request took 2500 ms", path, len);
}

int main(void)
{
	pthread_t t[3];
	char path[4096] = "";
	int ok = 1;

	if (ptrec_init(NULL) != 0)
		return 97;
	for (long i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, worker_main, (void *)i);
	while (atomic_load(&progress[0]) < 1000 || atomic_load(&progress[1]) < 1000 ||
	       atomic_load(&progress[2]) < 1000)
		usleep(1000);

	int r = slow_request(path, sizeof(path));
	if (r != 0) {
		fprintf(stderr, "snapshotter: first snapshot: %s\n", ptrec_strerror(r));
		ok = 0;
	}
	printf("%s\n", path);
	r = ptrec_snapshot("again");
	if (r != -PTREC_ERATE) {
		fprintf(stderr, "snapshotter: second snapshot not rate limited: %d\n", r);
		ok = 0;
	}
	/* The workers still run after the snapshot. */
	long before[3];
	for (int i = 0; i < 3; i++)
		before[i] = atomic_load(&progress[i]);
	for (int i = 0; i < 3; i++) {
		/* Each one moves on (allow a loaded machine two seconds to schedule it). */
		for (int w = 0; w < 2000 && atomic_load(&progress[i]) == before[i]; w++)
			usleep(1000);
		if (atomic_load(&progress[i]) == before[i]) {
			fprintf(stderr, "snapshotter: worker %d stopped\n", i);
			ok = 0;
		}
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	/* The recorder thread writes the dump and runs the report; wait for both. */
	if ((r = ptrec_snapshot_flush(60000)) != 0) {
		fprintf(stderr, "snapshotter: flush: %s\n", ptrec_strerror(r));
		ok = 0;
	}
	struct ptrec_status st;
	st.struct_size = sizeof(st);
	ptrec_status(&st);
	if (st.snapshots_written != 1 || st.snapshots_requested != 2 || st.snapshots_dropped != 1) {
		fprintf(stderr, "snapshotter: %u snapshots requested, %u written, %u dropped; "
		        "expected 2, 1, 1\n", st.snapshots_requested, st.snapshots_written,
		        st.snapshots_dropped);
		ok = 0;
	}
	if (strcmp(st.last_report, path) != 0) {
		fprintf(stderr, "snapshotter: last report %s, the snapshot said %s\n",
		        st.last_report, path);
		ok = 0;
	}
	ptrec_shutdown();
	return ok ? 0 : 1;
}
