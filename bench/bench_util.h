/* bench_util.h — what the benchmarks share: a wall clock in microseconds and the comparison
 * qsort needs to take medians and maxima of timings. */
#ifndef PTREC_BENCH_UTIL_H
#define PTREC_BENCH_UTIL_H

#include <time.h>

/* CLOCK_MONOTONIC in microseconds. */
static inline double bench_now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* qsort comparison of doubles, ascending. */
static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

#endif
