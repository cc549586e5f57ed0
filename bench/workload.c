/* workload.c — the CPU-bound workload of the recorder benchmarks, compiled several times with
 * WL_NAME set to the build's name and different instrumentation (none, -finstrument-functions,
 * -fsanitize-coverage=trace-pc, the recommended flags for GCC and for Clang), so one benchmark
 * binary can compare them.
 *
 * Three parts: a call-heavy one (naive recursive Fibonacci: one call and one return per node),
 * a branch-heavy one (insertion sort of a pseudo-random array: loops and conditional
 * branches, few calls), and a loop calling one small function that is never inlined. */
#include <stdint.h>

#include "workload.h"

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define FN(name) CAT(name, WL_NAME)

static uint64_t FN(fib_)(unsigned n)
{
	return n < 2 ? n : FN(fib_)(n - 1) + FN(fib_)(n - 2);
}

uint64_t FN(wl_calls_)(unsigned n)
{
	return FN(fib_)(n);
}

static __attribute__((noinline)) uint64_t FN(leaf_)(uint64_t x)
{
	__asm__ volatile("" : "+r"(x));
	return x * 2654435761u + 1;
}

uint64_t FN(wl_leaf_calls_)(unsigned n)
{
	uint64_t x = 1;
	for (unsigned i = 0; i < n; i++)
		x = FN(leaf_)(x);
	return x;
}

uint64_t FN(wl_branches_)(unsigned n, unsigned rounds)
{
	uint32_t a[512];
	uint64_t sum = 0;
	uint32_t x = 12345;
	if (n > 512)
		n = 512;
	for (unsigned r = 0; r < rounds; r++) {
		for (unsigned i = 0; i < n; i++) {
			x = x * 1103515245u + 12345u;
			a[i] = x >> 8;
		}
		for (unsigned i = 1; i < n; i++) {
			uint32_t v = a[i];
			unsigned j = i;
			while (j > 0 && a[j - 1] > v) {
				a[j] = a[j - 1];
				j--;
			}
			a[j] = v;
		}
		sum += a[n / 2];
	}
	return sum;
}
