/* bench_ring_view.c — what unwrapping a frozen ring costs at crash time.
 *
 * ptrec_ring_view_make() tells a wrapped perf overwrite ring from a first-lap one by looking
 * for non-zero bytes after the write offset.  A wrapped ring answers at the first word; a ring
 * still on its first lap is scanned to its end.  This prints both against ring size (median
 * of several runs), next to a plain memcpy of the same bytes for scale — the dump writer
 * copies every ring byte anyway. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "capture/backend.h"
#include "bench_util.h"

#define RUNS 7

int main(void)
{
	static const size_t sizes[] = {64u << 10, 1u << 20, 16u << 20, 128u << 20};
	struct ptrec_ring_view v;
	volatile size_t sink = 0;

	printf("%-10s %18s %18s %18s\n", "ring", "first lap (us)", "wrapped (us)",
	       "memcpy ring (us)");
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t size = sizes[i];
		uint8_t *ring = mmap(NULL, size, PROT_READ | PROT_WRITE,
		                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		uint8_t *copy = malloc(size);
		double t_first[RUNS], t_wrap[RUNS], t_copy[RUNS];

		if (ring == MAP_FAILED || !copy) {
			printf("%-10zu (no memory)\n", size);
			free(copy);
			continue;
		}
		memset(ring, 0, size);
		memset(ring, 0x5a, 4096);    /* first lap: 4 KiB written, the rest never */
		memset(copy, 1, size);
		for (int r = 0; r < RUNS; r++) {
			double t0 = bench_now_us();
			ptrec_ring_view_make(ring, size, 4096, &v);
			t_first[r] = bench_now_us() - t0;
			sink += v.len[0] + (size_t)v.wrapped;
		}
		memset(ring, 0x5a, size);    /* wrapped: old bytes everywhere */
		for (int r = 0; r < RUNS; r++) {
			double t0 = bench_now_us();
			ptrec_ring_view_make(ring, size, 4096, &v);
			t_wrap[r] = bench_now_us() - t0;
			sink += v.len[0] + (size_t)v.wrapped;
		}
		for (int r = 0; r < RUNS; r++) {
			double t0 = bench_now_us();
			memcpy(copy, ring, size);
			t_copy[r] = bench_now_us() - t0;
			sink += copy[size / 2];
		}
		qsort(t_first, RUNS, sizeof(double), bench_cmp_double);
		qsort(t_wrap, RUNS, sizeof(double), bench_cmp_double);
		qsort(t_copy, RUNS, sizeof(double), bench_cmp_double);
		char label[32];
		snprintf(label, sizeof(label), "%zu KiB", size >> 10);
		printf("%-10s %18.1f %18.3f %18.1f\n", label, t_first[RUNS / 2], t_wrap[RUNS / 2],
		       t_copy[RUNS / 2]);
		munmap(ring, size);
		free(copy);
	}
	return sink == 0;
}
