/* branch_ring.c — the bounded last-N event ring.  Async-signal-safe: no allocation, no locks,
 * no stdio. */
#include "config.h"

#include "ptrec.h"
#include "decode/branch_ring.h"

int ptrec_branch_ring_init(struct branch_ring *ring, struct ptrec_branch *storage, size_t cap)
{
	if (!ring || !storage || cap == 0)
		return -PTREC_EINVAL;
	ring->slot = storage;
	ring->cap = cap;
	ring->next = 0;
	ring->pushed = 0;
	return 0;
}

void ptrec_branch_ring_clear(struct branch_ring *ring)
{
	ring->next = 0;
	ring->pushed = 0;
}

size_t ptrec_branch_ring_count(const struct branch_ring *ring)
{
	return ring->pushed < ring->cap ? (size_t)ring->pushed : ring->cap;
}

const struct ptrec_branch *ptrec_branch_ring_get(const struct branch_ring *ring, size_t i)
{
	size_t n = ptrec_branch_ring_count(ring);
	if (i >= n)
		return NULL;
	/* The oldest held event sits at next when the ring has wrapped, else at 0. */
	size_t first = ring->pushed > ring->cap ? ring->next : (ring->next + ring->cap - n) % ring->cap;
	size_t k = first + i;
	if (k >= ring->cap)
		k -= ring->cap;
	return &ring->slot[k];
}

const struct ptrec_branch *ptrec_branch_ring_newest(const struct branch_ring *ring, size_t i)
{
	size_t n = ptrec_branch_ring_count(ring);
	if (i >= n)
		return NULL;
	return ptrec_branch_ring_get(ring, n - 1 - i);
}
