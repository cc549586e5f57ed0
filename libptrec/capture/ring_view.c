/* ring_view.c — a frozen ring's bytes as at most two pieces, oldest first.
 * ASYNC-SIGNAL-SAFE island: pure arithmetic and reads of the ring; no libc calls, no
 * allocation, no locks.
 *
 * Two writers feed rings, with two meanings of `head`:
 * - software rings count every byte ever written, so head >= size means the ring wrapped;
 * - perf AUX rings in overwrite mode publish aux_head as the write offset inside the buffer
 *   (the kernel's intel_pt/intel_bts snapshot mode), so the counter alone cannot tell.
 * Both start zero-filled and never write zeros over the whole tail, so the second case is
 * settled by the bytes: anything non-zero at or after the write offset was written on an
 * earlier lap, i.e. the ring wrapped.  (Zero bytes there, even if written, are PT PAD packets
 * or unused records: leaving them out loses nothing.) */
#include "config.h"

#include "capture/backend.h"

/* A 64-bit load allowed to alias the ring's bytes. */
typedef uint64_t __attribute__((may_alias)) ring_word;

/* 1 if any byte of p[0..n) is non-zero. */
static int any_nonzero(const uint8_t *p, size_t n)
{
	size_t i = 0;

	while (i < n && ((uintptr_t)(p + i) & 7))
		if (p[i++])
			return 1;
	for (; i + 8 <= n; i += 8)
		if (*(const ring_word *)(const void *)(p + i))
			return 1;
	for (; i < n; i++)
		if (p[i])
			return 1;
	return 0;
}

void ptrec_ring_view_make(const uint8_t *data, size_t size, uint64_t head,
                          struct ptrec_ring_view *view)
{
	view->part[0] = NULL;
	view->part[1] = NULL;
	view->len[0] = 0;
	view->len[1] = 0;
	view->head = head;
	view->wrapped = 0;
	if (!data || size == 0 || (size & (size - 1)))
		return;

	size_t off = (size_t)(head & (uint64_t)(size - 1));

	if (head == size) {
		/* A byte counter that just filled the ring: all of it, in order. */
		view->part[0] = data;
		view->len[0] = size;
		return;
	}
	if (head < size && !any_nonzero(data + off, size - off)) {
		/* First lap: the bytes before the write position. */
		view->part[0] = off ? data : NULL;
		view->len[0] = off;
		return;
	}
	/* Wrapped: the oldest bytes start at the write position. */
	view->wrapped = 1;
	view->part[0] = data + off;
	view->len[0] = size - off;
	if (off) {
		view->part[1] = data;
		view->len[1] = off;
	}
}
