/* bench_libxdc.c — the peer of bench_decode's real-trace table: libxdc (nyx-fuzz/libxdc, a
 * coverage-only PT decoder) decoding the same trace over the same code.  Not part of the build:
 * bench/fetch_real_traces.sh compiles it at bench time against a libxdc built from its fetched
 * source outside the tree; nothing of libxdc is linked into libptrec or its tools.
 *
 *   bench_libxdc TRACE ADDR DUMP FROM TO PASSES
 *
 * ADDR and DUMP are a page-cache image as libxdc's experiments store it: ADDR one little-endian
 * 64-bit page address per 4 KiB page of DUMP (an address with low bits set: a page that was not
 * mapped, skipped).  FROM-TO is libxdc's one filter range (the traced code).  Prints one line:
 *   libxdc first MS fresh MS warm MS result N bitmap HASH
 * first: the first decode in this process (libxdc_init and libxdc_decode, process CPU time);
 * fresh: the best of PASSES decodes each with a new decoder (libxdc_init .. libxdc_free);
 * warm: the best of PASSES decodes again with one decoder whose caches are built (libxdc's
 * own benchmark figure); result: libxdc_decode's result of the last pass (0 success, 1 success
 * with an overflow in the trace); HASH: libxdc_bitmap_get_hash of a fresh decode. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libxdc.h>

/* The page cache: sorted addresses and their pages. */
struct pages {
	uint64_t *addr;
	uint8_t **page;
	size_t n;
};

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint8_t *read_all(const char *path, size_t *size, size_t extra)
{
	FILE *f = fopen(path, "rb");
	if (!f || fseek(f, 0, SEEK_END) != 0) {
		perror(path);
		exit(2);
	}
	long n = ftell(f);
	rewind(f);
	uint8_t *b = calloc((size_t)n + extra + 1, 1);
	if (!b || fread(b, 1, (size_t)n, f) != (size_t)n) {
		perror(path);
		exit(2);
	}
	fclose(f);
	*size = (size_t)n;
	return b;
}

/* libxdc's page callback: the page at addr, by binary search. */
static void *fetch(void *opaque, uint64_t addr, bool *ok)
{
	const struct pages *pc = opaque;
	uint64_t a = addr & ~UINT64_C(0xfff);
	size_t lo = 0, hi = pc->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (pc->addr[mid] < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	*ok = lo < pc->n && pc->addr[lo] == a;
	return *ok ? pc->page[lo] : NULL;
}

int main(int argc, char **argv)
{
	if (argc != 7) {
		fprintf(stderr, "usage: bench_libxdc TRACE ADDR DUMP FROM TO PASSES\n");
		return 2;
	}
	size_t nt, na, nd;
	/* libxdc reads past the end up to an end marker byte (0x55, PT_TRACE_END) */
	uint8_t *trace = read_all(argv[1], &nt, 16);
	memset(trace + nt, 0x55, 16);
	uint8_t *araw = read_all(argv[2], &na, 0);
	uint8_t *dump = read_all(argv[3], &nd, 0);
	struct pages pc = {calloc(na / 8 + 1, 8), calloc(na / 8 + 1, sizeof(uint8_t *)), 0};
	for (size_t i = 0; i < na / 8 && (i + 1) * 4096 <= nd; i++) {
		uint64_t a;
		memcpy(&a, araw + 8 * i, 8);
		if (a & 0xfff)
			continue;
		size_t k = pc.n++; /* insertion into the sorted array */
		while (k && pc.addr[k - 1] > a) {
			pc.addr[k] = pc.addr[k - 1];
			pc.page[k] = pc.page[k - 1];
			k--;
		}
		pc.addr[k] = a;
		pc.page[k] = dump + 4096 * i;
	}
	uint64_t filter[4][2] = {{strtoull(argv[4], NULL, 0), strtoull(argv[5], NULL, 0)}};
	int passes = atoi(argv[6]);
	void *bitmap = calloc(1, 0x10000);
	double first = 0, fresh = 1e9, warm = 1e9;
	int res = -1;
	uint64_t hash = 0;
	for (int k = 0; k < (passes > 0 ? passes : 1); k++) {
		double t0 = now();
		libxdc_t *d = libxdc_init(filter, fetch, &pc, bitmap, 0x10000);
		if (!d) {
			fprintf(stderr, "bench_libxdc: libxdc_init failed\n");
			return 1;
		}
		res = libxdc_decode(d, trace, nt);
		double t = now() - t0;
		hash = libxdc_bitmap_get_hash(d);
		if (!k)
			first = t;
		fresh = t < fresh ? t : fresh;
		for (int w = 0; w < 2; w++) { /* the same decoder again: its caches are built */
			libxdc_bitmap_reset(d);
			t0 = now();
			libxdc_decode(d, trace, nt);
			t = now() - t0;
			warm = t < warm ? t : warm;
		}
		libxdc_free(d);
	}
	printf("libxdc first %.3f fresh %.3f warm %.3f result %d bitmap %016llx\n", first * 1e3,
	       fresh * 1e3, warm * 1e3, res, (unsigned long long)hash);
	return 0;
}
