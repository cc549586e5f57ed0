/* slow_snapshot.c — a hot path that calls ptrec_snapshot() when a request is slow: the
 * snapshot shows the branches that led to the slow request while the program keeps serving.
 * The rate limit (PTREC_SNAPSHOT_INTERVAL_MS) and file cap (PTREC_SNAPSHOT_MAX) keep a burst of
 * slow requests from flooding the disk. */
#include <stdio.h>
#include <time.h>

#include "ptrec.h"

static volatile unsigned long sink;

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static unsigned long checksum(unsigned long n)
{
	unsigned long h = 1469598103934665603ul;
	for (unsigned long i = 0; i < n; i++)
		h = (h ^ i) * 1099511628211ul;
	return h;
}

/* Request 7 is the slow one: it hashes a thousand times more. */
static void serve(int id)
{
	sink += checksum(id == 7 ? 20000000ul : 20000ul);
}

int main(void)
{
	char path[4096];

	ptrec_init(NULL);
	for (int id = 0; id < 12; id++) {
		double t0 = now_ms();
		serve(id);
		double ms = now_ms() - t0;
		if (ms > 10.0) {
			char why[64];
			snprintf(why, sizeof(why), "request %d took %.1f ms", id, ms);
			int r = ptrec_snapshot_path(why, path, sizeof(path));
			if (r == 0)
				printf("slow request %d (%.1f ms): snapshot %s\n", id, ms, path);
			else
				printf("slow request %d (%.1f ms): no snapshot (%s)\n", id, ms,
				       ptrec_strerror(r));
		}
	}
	printf("served 12 requests\n");
	ptrec_shutdown();
	return 0;
}
