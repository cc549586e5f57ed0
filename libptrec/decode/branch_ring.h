/* branch_ring.h — a bounded ring of the last N branch events, over caller-provided storage.
 * No allocation and no locks: usable on the crash path (async-signal-safe) when the storage was
 * prepared beforehand.  Not thread-safe: one writer. */
#ifndef PTREC_BRANCH_RING_H
#define PTREC_BRANCH_RING_H

#include <stddef.h>
#include <stdint.h>

#include "core/branch.h"

/* A ring of the most recent events. */
struct branch_ring {
	struct ptrec_branch *slot; /* storage for cap events (owned by the caller) */
	size_t cap;                /* capacity N */
	size_t next;               /* slot the next push writes */
	uint64_t pushed;           /* events pushed in total (older ones were overwritten) */
};

/* Sets up ring over storage[0..cap).  Returns 0, or -PTREC_EINVAL if storage is NULL or
 * cap == 0. */
int ptrec_branch_ring_init(struct branch_ring *ring, struct ptrec_branch *storage, size_t cap);

/* Forgets every event (the storage is kept). */
void ptrec_branch_ring_clear(struct branch_ring *ring);

/* Appends ev, overwriting the oldest event when the ring is full. */
static inline void ptrec_branch_ring_push(struct branch_ring *ring, const struct ptrec_branch *ev)
{
	ring->slot[ring->next] = *ev;
	if (++ring->next == ring->cap)
		ring->next = 0;
	ring->pushed++;
}

/* Returns the number of events held: min(pushed, cap). */
size_t ptrec_branch_ring_count(const struct branch_ring *ring);

/* Returns the i-th held event, 0 = the oldest held, count-1 = the newest; NULL if i >= count. */
const struct ptrec_branch *ptrec_branch_ring_get(const struct branch_ring *ring, size_t i);

/* Returns the i-th newest event (0 = the newest), or NULL if i >= count. */
const struct ptrec_branch *ptrec_branch_ring_newest(const struct branch_ring *ring, size_t i);

#endif
