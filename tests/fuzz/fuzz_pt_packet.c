/* fuzz_pt_packet.c — fuzz target for the PT packet layer.
 *
 * LLVMFuzzerTestOneInput() walks an input as a PT stream the way a decoder does (block context
 * carried along, one byte skipped after an error) and checks, for every position:
 * - the result is a size in [1, 16] that fits in the bytes left, or -PTREC_ETRUNC or
 *   -PTREC_EFORMAT, and a truncation only happens when the packet runs past the end;
 * - a packet's decoding depends on its own bytes only: the same bytes followed by other bytes
 *   give the same packet, and every shorter prefix gives -PTREC_ETRUNC;
 * - name, dump formatting, last-IP update and PSB search stay in bounds and agree.
 * Any violation aborts (a crash for libFuzzer).
 *
 * Built two ways:
 * - by `make check` with a small main (below) that runs the seed corpus in
 *   $top_srcdir/tests/data/fuzz/pt/ and ~200k deterministic pseudo-random and mutated inputs;
 * - by `make fuzz` with clang -fsanitize=fuzzer,address,undefined and -DPTREC_LIBFUZZER (no
 *   main), for a real coverage-guided campaign. */
#include "config.h"

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptrec.h"
#include "decode/pt_packet.h"

#define FUZZ_ASSERT(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n", __FILE__, __LINE__, #cond); \
		abort(); \
	} } while (0)

static const uint8_t psb_bytes[16] = {2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82,
                                      2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82};

/* Checks everything about the packet decoded (or not) at p[0..avail). */
static int check_one(const uint8_t *p, size_t avail, enum ptrec_pt_packet_ctx *ctx, uint64_t *last_ip)
{
	struct ptrec_pt_packet pkt, again;
	enum ptrec_pt_packet_ctx in = *ctx, c2;
	uint8_t tail[32];
	char text[256];
	int r = ptrec_pt_packet_decode(p, avail, ctx, &pkt);

	if (r < 0) {
		FUZZ_ASSERT(r == -PTREC_ETRUNC || r == -PTREC_EFORMAT);
		if (r == -PTREC_ETRUNC)
			FUZZ_ASSERT(avail < 16); /* no packet is longer than 16 bytes */
		return r;
	}
	FUZZ_ASSERT(r >= 1 && r <= 16);
	FUZZ_ASSERT((size_t)r <= avail);
	FUZZ_ASSERT(pkt.size == r);
	FUZZ_ASSERT(pkt.type > PT_PKT_INVALID && pkt.type < PT_PKT_TYPE_COUNT_);
	FUZZ_ASSERT(pkt.type != PT_PKT_TNT || (pkt.tnt_count >= 1 && pkt.tnt_count <= 47 &&
	                                        (pkt.payload >> pkt.tnt_count) == 0));
	FUZZ_ASSERT(*ctx == PT_CTX_NONE || *ctx == PT_CTX_BLK4 || *ctx == PT_CTX_BLK8);

	/* the same packet followed by different bytes decodes identically */
	for (int fill = 0; fill < 2; fill++) {
		memset(tail, fill ? 0xff : 0x02, sizeof(tail));
		memcpy(tail, p, (size_t)r);
		c2 = in;
		FUZZ_ASSERT(ptrec_pt_packet_decode(tail, sizeof(tail), &c2, &again) == r);
		FUZZ_ASSERT(memcmp(&again, &pkt, sizeof(pkt)) == 0);
		FUZZ_ASSERT(c2 == *ctx);
	}
	/* every strict prefix is a truncation, and leaves the context alone */
	for (int k = 0; k < r; k++) {
		c2 = in;
		FUZZ_ASSERT(ptrec_pt_packet_decode(p, (size_t)k, &c2, &again) == -PTREC_ETRUNC);
		FUZZ_ASSERT(c2 == in);
	}

	FUZZ_ASSERT(strcmp(ptrec_pt_packet_name(&pkt), "?") != 0);
	{
		int n = ptrec_pt_packet_format(&pkt, text, sizeof(text));
		FUZZ_ASSERT(n >= 0 && (size_t)n < sizeof(text) && strlen(text) == (size_t)n);
		/* a short buffer truncates but stays terminated */
		char small[5];
		FUZZ_ASSERT(ptrec_pt_packet_format(&pkt, small, sizeof(small)) == n);
		FUZZ_ASSERT(strlen(small) == ((size_t)n < sizeof(small) ? (size_t)n : sizeof(small) - 1));
	}
	if (pkt.type == PT_PKT_TIP || pkt.type == PT_PKT_TIP_PGE || pkt.type == PT_PKT_TIP_PGD ||
	    pkt.type == PT_PKT_FUP) {
		uint64_t before = *last_ip, ip = 0;
		int u = ptrec_pt_last_ip_update(last_ip, &pkt, &ip);

		if (pkt.ipbytes == 0) {
			FUZZ_ASSERT(u == -PTREC_ENOMAP && *last_ip == before);
		} else {
			FUZZ_ASSERT(u == 0 && ip == *last_ip);
			if (pkt.ipbytes == 1)
				FUZZ_ASSERT((ip >> 16) == (before >> 16));
			if (pkt.ipbytes == 3)
				FUZZ_ASSERT((uint64_t)((int64_t)(ip << 16) >> 16) == ip);
		}
	}
	if (pkt.type == PT_PKT_PSB) {
		FUZZ_ASSERT(memcmp(p, psb_bytes, 16) == 0);
		FUZZ_ASSERT(*ctx == PT_CTX_NONE);
	}
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum ptrec_pt_packet_ctx ctx = PT_CTX_NONE;
	uint64_t last_ip = 0;
	size_t off = 0;
	long psb;

	/* A leading reserved header 05 or 09 (never a packet) selects a starting block context
	 * of 4- or 8-byte items, so block item paths are reached from the start. */
	if (size > 0 && (data[0] == 0x05 || data[0] == 0x09)) {
		ctx = data[0] == 0x05 ? PT_CTX_BLK4 : PT_CTX_BLK8;
		off = 1;
	}

	while (off < size) {
		int r = check_one(data + off, size - off, &ctx, &last_ip);

		if (r == -PTREC_ETRUNC)
			break;
		off += r > 0 ? (size_t)r : 1;
	}

	/* PSB search: every hit is a PSB, hits are found in order, nothing is missed */
	for (size_t from = 0;; from = (size_t)psb + 1) {
		psb = ptrec_pt_packet_find_psb(data, size, from);
		for (size_t i = from; i < (psb >= 0 ? (size_t)psb : size); i++)
			FUZZ_ASSERT(i + 16 > size || memcmp(data + i, psb_bytes, 16) != 0);
		if (psb < 0)
			break;
		FUZZ_ASSERT((size_t)psb >= from && (size_t)psb + 16 <= size);
		FUZZ_ASSERT(memcmp(data + psb, psb_bytes, 16) == 0);
	}
	FUZZ_ASSERT(psb == -PTREC_ENOSYNC);
	return 0;
}

#ifndef PTREC_LIBFUZZER
/* ---- standalone driver for `make check` ---------------------------------------------------- */

#define SEEDS_MAX 32
#define INPUT_MAX 512
#define ITERATIONS 200000

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	/* xorshift64*: deterministic, so a failure reproduces */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

struct seed {
	uint8_t data[INPUT_MAX];
	size_t size;
};

static struct seed seeds[SEEDS_MAX];
static int nseeds;

static int load_seeds(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return -1;
	while ((e = readdir(d)) && nseeds < SEEDS_MAX) {
		char path[4096 + 512];
		FILE *f;

		if (e->d_name[0] == '.' || strlen(dir) + strlen(e->d_name) + 2 > sizeof(path))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		f = fopen(path, "rb");
		if (!f)
			continue;
		seeds[nseeds].size = fread(seeds[nseeds].data, 1, INPUT_MAX, f);
		fclose(f);
		nseeds++;
	}
	closedir(d);
	return 0;
}

/* Interesting header bytes to splice in: one per packet kind, plus reserved ones. */
static const uint8_t headers[] = {0x00, 0x02, 0x04, 0x06, 0x0c, 0xfe, 0x0d, 0x2d, 0x4d, 0x6d,
                                  0x8d, 0xcd, 0xad, 0xed, 0x11, 0x01, 0x1d, 0xdd, 0xfd, 0x19,
                                  0x59, 0x99, 0xd9, 0x03, 0x07, 0xff, 0x05, 0x09, 0x15};
static const uint8_t ext_opcodes[] = {0x82, 0x23, 0xa3, 0x43, 0x03, 0xc8, 0xf3, 0x73, 0xc3,
                                      0x83, 0x62, 0xe2, 0xc2, 0x22, 0xa2, 0x63, 0x33, 0xb3,
                                      0x13, 0x53, 0x12, 0x32, 0x92, 0xb2, 0x52, 0xf2, 0x00};

static size_t mutate(uint8_t *buf, size_t size)
{
	int steps = 1 + (int)(rng() % 6);

	for (int s = 0; s < steps; s++) {
		size_t pos = size ? (size_t)(rng() % size) : 0;

		switch (rng() % 7) {
		case 0: /* flip a bit */
			if (size)
				buf[pos] ^= (uint8_t)(1u << (rng() % 8));
			break;
		case 1: /* random byte */
			if (size)
				buf[pos] = (uint8_t)rng();
			break;
		case 2: /* a packet header */
			if (size)
				buf[pos] = headers[rng() % sizeof(headers)];
			break;
		case 3: /* an extended opcode pair */
			if (pos + 1 < size) {
				buf[pos] = 0x02;
				buf[pos + 1] = ext_opcodes[rng() % sizeof(ext_opcodes)];
			}
			break;
		case 4: /* cut the end */
			size = pos;
			break;
		case 5: /* drop the start (a ring cut mid-packet) */
			if (pos) {
				memmove(buf, buf + pos, size - pos);
				size -= pos;
			}
			break;
		default: /* a PSB somewhere */
			if (pos + 16 <= size)
				memcpy(buf + pos, psb_bytes, 16);
			break;
		}
	}
	return size;
}

int main(void)
{
	const char *srcdir = getenv("top_srcdir");
	char dir[4096];
	uint8_t buf[INPUT_MAX];
	unsigned long inputs = 0;

	snprintf(dir, sizeof(dir), "%s/tests/data/fuzz/pt", srcdir ? srcdir : ".");
	if (load_seeds(dir) < 0 || nseeds == 0) {
		fprintf(stderr, "%s: no seed corpus\n", dir);
		return 1;
	}
	for (int i = 0; i < nseeds; i++, inputs++)
		LLVMFuzzerTestOneInput(seeds[i].data, seeds[i].size);

	/* every 1- and 2-byte input, in every starting context */
	for (unsigned a = 0; a < 256; a++) {
		for (unsigned b = 0; b < 256; b++, inputs++) {
			uint8_t two[3] = {(a & 1) ? 0x05 : 0x09, (uint8_t)a, (uint8_t)b};
			LLVMFuzzerTestOneInput(two + 1, 2);
			LLVMFuzzerTestOneInput(two, 3);
		}
	}

	for (unsigned long it = 0; it < ITERATIONS; it++, inputs++) {
		size_t size;

		if (it % 4 == 0) { /* pure random */
			size = (size_t)(rng() % 96);
			for (size_t i = 0; i < size; i++)
				buf[i] = (uint8_t)rng();
		} else { /* mutated seed */
			const struct seed *s = &seeds[rng() % (uint64_t)nseeds];
			memcpy(buf, s->data, s->size);
			size = mutate(buf, s->size);
		}
		LLVMFuzzerTestOneInput(buf, size);
	}
	printf("%d seeds, %lu inputs, no invariant violated\n", nseeds, inputs);
	return 0;
}
#endif
