/* fuzz_mutate.h — the deterministic mutator of the fuzz smoke tests (the tests/fuzz programs
 * built without libFuzzer): a fixed-seed LCG, bit flips, random bytes and interesting 32/64-bit
 * values. */
#ifndef PTREC_TEST_FUZZ_MUTATE_H
#define PTREC_TEST_FUZZ_MUTATE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static uint64_t fuzz_rng = 0x9e3779b97f4a7c15ull;

static inline uint64_t next_rand(void)
{
	fuzz_rng = fuzz_rng * 6364136223846793005ull + 1442695040888963407ull;
	return fuzz_rng >> 17;
}

static const uint64_t fuzz_interesting[] = {0, 1, 7, 8, 0x7f, 0x80, 0xff, 0xffff, 0x7fffffff,
                                            0x80000000, 0xffffffff, 0xfffffff0, 0x100000000ull,
                                            UINT64_MAX, UINT64_MAX - 7, 24, 4096};

/* Applies one mutation to buf[lo, hi). */
static inline void mutate(uint8_t *buf, size_t lo, size_t hi)
{
	size_t span = hi - lo, at;
	if (!span)
		return;
	at = lo + next_rand() % span;
	switch (next_rand() % 4) {
	case 0:
		buf[at] ^= (uint8_t)(1u << (next_rand() % 8));
		break;
	case 1:
		buf[at] = (uint8_t)next_rand();
		break;
	default: {
		uint64_t v = fuzz_interesting[next_rand() %
		                              (sizeof(fuzz_interesting) / sizeof(fuzz_interesting[0]))];
		size_t w = next_rand() % 2 ? 4 : 8;
		if (at + w <= hi)
			memcpy(buf + at, &v, w);
		break;
	}
	}
}

#endif
