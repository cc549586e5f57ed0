/* test_ring_view.c — unwrapping frozen rings: both meanings of head (a byte counter for
 * software rings, a write offset for perf AUX overwrite rings), wrap detection from
 * never-written zero bytes, and the two pieces oldest first, on synthetic buffers. */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "capture/backend.h"
#include "check.h"

#define SIZE 64

/* Writes n bytes with values first, first+1, ... (never 0) into a ring, as a writer would,
 * starting at byte counter `at`; returns the new counter. */
static uint64_t ring_write(uint8_t *ring, uint64_t at, unsigned n, unsigned first)
{
	for (unsigned i = 0; i < n; i++, at++)
		ring[at % SIZE] = (uint8_t)(1 + (first + i) % 255);
	return at;
}

/* Concatenates a view's pieces. */
static size_t flatten(const struct ptrec_ring_view *v, uint8_t *out)
{
	size_t n = 0;

	for (int i = 0; i < 2; i++)
		if (v->part[i]) {
			memcpy(out + n, v->part[i], v->len[i]);
			n += v->len[i];
		}
	return n;
}

static void test_empty(void)
{
	uint8_t ring[SIZE] = {0};
	struct ptrec_ring_view v;

	ptrec_ring_view_make(ring, SIZE, 0, &v);
	CHECK_EQ_U64(v.wrapped, 0);
	CHECK(v.part[0] == NULL && v.part[1] == NULL);
	CHECK_EQ_U64(v.len[0] + v.len[1], 0);
}

static void test_first_lap(void)
{
	uint8_t ring[SIZE] = {0}, flat[SIZE];
	struct ptrec_ring_view v;
	uint64_t head = ring_write(ring, 0, 20, 0);

	ptrec_ring_view_make(ring, SIZE, head, &v);
	CHECK_EQ_U64(v.wrapped, 0);
	CHECK(v.part[0] == ring);
	CHECK_EQ_U64(v.len[0], 20);
	CHECK(v.part[1] == NULL);
	CHECK_EQ_U64(v.len[1], 0);
	CHECK_EQ_U64(v.head, 20);
	CHECK_EQ_U64(flatten(&v, flat), 20);
	CHECK_EQ_U64(flat[0], 1);
	CHECK_EQ_U64(flat[19], 20);

	/* Exactly full, counted: all of it, not wrapped. */
	head = ring_write(ring, head, SIZE - 20, 20);
	ptrec_ring_view_make(ring, SIZE, head, &v);
	CHECK_EQ_U64(v.wrapped, 0);
	CHECK(v.part[0] == ring);
	CHECK_EQ_U64(v.len[0], SIZE);
	CHECK(v.part[1] == NULL);
}

/* A software ring: head counts bytes; 100 written into 64 -> the last 64, oldest at 100%64. */
static void test_counter_wrapped(void)
{
	uint8_t ring[SIZE] = {0}, flat[SIZE];
	struct ptrec_ring_view v;
	uint64_t head = ring_write(ring, 0, 100, 0);

	ptrec_ring_view_make(ring, SIZE, head, &v);
	CHECK_EQ_U64(v.wrapped, 1);
	CHECK(v.part[0] == ring + 36);
	CHECK_EQ_U64(v.len[0], 28);
	CHECK(v.part[1] == ring);
	CHECK_EQ_U64(v.len[1], 36);
	CHECK_EQ_U64(flatten(&v, flat), SIZE);
	/* oldest kept byte is number 36 (value 37), newest is number 99 (value 100) */
	CHECK_EQ_U64(flat[0], 37);
	CHECK_EQ_U64(flat[SIZE - 1], 100);
	for (int i = 1; i < SIZE; i++)
		CHECK_EQ_U64(flat[i], flat[i - 1] + 1);

	/* A whole number of laps: one piece starting at 0, still wrapped. */
	head = ring_write(ring, head, 28, 100);
	CHECK_EQ_U64(head, 128);
	ptrec_ring_view_make(ring, SIZE, head, &v);
	CHECK_EQ_U64(v.wrapped, 1);
	CHECK(v.part[0] == ring);
	CHECK_EQ_U64(v.len[0], SIZE);
	CHECK(v.part[1] == NULL);
	CHECK_EQ_U64(v.head, 128);
}

/* A perf overwrite ring: aux_head is the write offset; wrap shows as old non-zero bytes
 * after it. */
static void test_offset_wrapped(void)
{
	uint8_t ring[SIZE] = {0}, flat[SIZE];
	struct ptrec_ring_view v;

	ring_write(ring, 0, 100, 0);
	ptrec_ring_view_make(ring, SIZE, 100 % SIZE, &v);
	CHECK_EQ_U64(v.wrapped, 1);
	CHECK(v.part[0] == ring + 36);
	CHECK_EQ_U64(v.len[0], 28);
	CHECK(v.part[1] == ring);
	CHECK_EQ_U64(v.len[1], 36);
	CHECK_EQ_U64(v.head, 36);
	CHECK_EQ_U64(flatten(&v, flat), SIZE);
	CHECK_EQ_U64(flat[0], 37);
	CHECK_EQ_U64(flat[SIZE - 1], 100);

	/* Offset 0 after whole laps: the full ring from 0. */
	ring_write(ring, 100, 28, 100);
	ptrec_ring_view_make(ring, SIZE, 0, &v);
	CHECK_EQ_U64(v.wrapped, 1);
	CHECK(v.part[0] == ring);
	CHECK_EQ_U64(v.len[0], SIZE);

	/* A single old non-zero byte at the very end is enough to see the wrap. */
	uint8_t r2[SIZE] = {0};
	ring_write(r2, 0, 10, 0);
	r2[SIZE - 1] = 0x55;
	ptrec_ring_view_make(r2, SIZE, 10, &v);
	CHECK_EQ_U64(v.wrapped, 1);
	CHECK_EQ_U64(v.len[0], SIZE - 10);
	CHECK_EQ_U64(v.len[1], 10);

	/* ...and zeros after the offset mean a first lap. */
	r2[SIZE - 1] = 0;
	ptrec_ring_view_make(r2, SIZE, 10, &v);
	CHECK_EQ_U64(v.wrapped, 0);
	CHECK_EQ_U64(v.len[0], 10);
}

/* A large ring with the wrap evidence in an unaligned spot (the word-wise scan). */
static void test_large_unaligned(void)
{
	static uint8_t big[1 << 16];
	struct ptrec_ring_view v;

	memset(big, 0, sizeof(big));
	memset(big, 0xaa, 4000);
	ptrec_ring_view_make(big + 0, sizeof(big), 4000, &v);
	CHECK_EQ_U64(v.wrapped, 0);
	CHECK_EQ_U64(v.len[0], 4000);
	for (size_t at = sizeof(big) - 9; at < sizeof(big); at++) {
		big[at] = 1;
		ptrec_ring_view_make(big, sizeof(big), 4000, &v);
		CHECK_EQ_U64(v.wrapped, 1);
		big[at] = 0;
	}
	big[4001] = 1;
	ptrec_ring_view_make(big, sizeof(big), 4000, &v);
	CHECK_EQ_U64(v.wrapped, 1);
	CHECK(v.part[0] == big + 4000);
}

static void test_bad_rings(void)
{
	uint8_t ring[SIZE] = {1};
	struct ptrec_ring_view v;

	ptrec_ring_view_make(ring, 48, 10, &v);   /* not a power of two */
	CHECK(v.part[0] == NULL && v.len[0] == 0 && v.part[1] == NULL);
	ptrec_ring_view_make(ring, 0, 10, &v);
	CHECK(v.part[0] == NULL && v.len[0] == 0);
	ptrec_ring_view_make(NULL, SIZE, 10, &v);
	CHECK(v.part[0] == NULL && v.len[0] == 0);
	/* A huge counter still maps into the ring. */
	ptrec_ring_view_make(ring, SIZE, (1ull << 40) + 3, &v);
	CHECK_EQ_U64(v.wrapped, 1);
	CHECK(v.part[0] == ring + 3);
	CHECK_EQ_U64(v.len[0] + v.len[1], SIZE);
}

int main(void)
{
	test_empty();
	test_first_lap();
	test_counter_wrapped();
	test_offset_wrapped();
	test_large_unaligned();
	test_bad_rings();
	return check_done();
}
