/* backend_soft.c — the instrumented backend: a per-thread software ring of BTS-format records
 * filled by compiler instrumentation hooks.
 *
 * - `-finstrument-functions` calls __cyg_profile_func_enter(fn, call_site) at every function
 *   entry and __cyg_profile_func_exit(fn, call_site) at every exit: we record a CALL
 *   (from = call site, to = fn) and a RET (from = fn, to = call site).
 * - `-fsanitize-coverage=trace-pc` calls __sanitizer_cov_trace_pc() at every edge: we record an
 *   EDGE (from = the instrumented site, to = 0).
 *
 * A record is three 8-byte stores at head & mask, then head += 24; the ring is a power of two,
 * so a record may straddle the wrap point and readers drop the partly overwritten oldest one
 * (ptrec_soft_view_make).  No locks: only the owning thread writes its ring; freezing sets
 * ring->frozen, which the writer checks before each record (at most one record in flight may
 * land after a freeze).  The ring pointer lives in initial-exec TLS, so the hooks never
 * allocate and are safe inside signal handlers.
 *
 * The hooks are ASYNC-SIGNAL-SAFE and marked no_instrument_function; libptrec itself is never
 * compiled with instrumentation. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "core/branch.h"
#include "capture/backend_soft.h"
#include "capture/thread_slots.h"

#define NOINSTR __attribute__((no_instrument_function, no_sanitize("address", "undefined")))

/* The calling thread's soft ring, or NULL while it has none. */
static __thread struct ptrec_ring *soft_ring __attribute__((tls_model("initial-exec")));

volatile int ptrec_soft_hooks_seen;

NOINSTR static inline void soft_store(uint64_t from, uint64_t to, uint64_t flags)
{
	struct ptrec_ring *r = soft_ring;
	if (__builtin_expect(r == NULL, 0)) {
		if (!ptrec_soft_hooks_seen)
			ptrec_soft_hooks_seen = 1;
		return;
	}
	if (__builtin_expect(r->frozen, 0))
		return;
	uint64_t h = r->head;
	uint64_t mask = r->size - 1;
	uint8_t *d = r->data;
	*(uint64_t *)(void *)(d + (h & mask)) = from;
	*(uint64_t *)(void *)(d + ((h + 8) & mask)) = to;
	*(uint64_t *)(void *)(d + ((h + 16) & mask)) = flags;
	/* The compiler barrier keeps the record stores before the head store that publishes
	 * them to a reader in a signal handler on this thread. */
	__asm__ volatile("" ::: "memory");
	r->head = h + sizeof(struct ptrec_bts_record);
}

NOINSTR void ptrec_soft_append(uint64_t from, uint64_t to, unsigned kind)
{
	soft_store(from, to, PTREC_BTS_SOFT | (kind & 0xffu));
}

PTREC_API NOINSTR void __cyg_profile_func_enter(void *fn, void *call_site);
PTREC_API NOINSTR void __cyg_profile_func_exit(void *fn, void *call_site);
PTREC_API NOINSTR void __sanitizer_cov_trace_pc(void);

PTREC_API NOINSTR void __cyg_profile_func_enter(void *fn, void *call_site)
{
	soft_store((uint64_t)(uintptr_t)call_site, (uint64_t)(uintptr_t)fn,
	           PTREC_BTS_SOFT | PTREC_BR_CALL);
}

PTREC_API NOINSTR void __cyg_profile_func_exit(void *fn, void *call_site)
{
	soft_store((uint64_t)(uintptr_t)fn, (uint64_t)(uintptr_t)call_site,
	           PTREC_BTS_SOFT | PTREC_BR_RET);
}

PTREC_API NOINSTR void __sanitizer_cov_trace_pc(void)
{
	soft_store((uint64_t)(uintptr_t)__builtin_return_address(0), 0,
	           PTREC_BTS_SOFT | PTREC_BR_EDGE);
}

void ptrec_soft_view_make(const uint8_t *data, size_t size, uint64_t head,
                          struct ptrec_ring_view *view)
{
	const uint64_t rec = sizeof(struct ptrec_bts_record);
	uint64_t start = 0;

	memset(view, 0, sizeof(*view));
	view->head = head;
	if (!data || !size)
		return;
	if (head > size) {
		start = head - size;
		start = (start + rec - 1) / rec * rec; /* first whole record still in the ring */
		view->wrapped = 1;
	}
	uint64_t len = head - start;
	size_t off = (size_t)(start & (size - 1));
	size_t first = size - off;
	if (first >= len) {
		view->part[0] = data + off;
		view->len[0] = (size_t)len;
	} else {
		view->part[0] = data + off;
		view->len[0] = first;
		view->part[1] = data;
		view->len[1] = (size_t)(len - first);
	}
}

static int soft_probe(const struct ptrec_config *cfg, char *reason, size_t reason_len)
{
	if (ptrec_soft_hooks_seen || cfg->backend == PTREC_BACKEND_INSTRUMENTED)
		return 0;
	snprintf(reason, reason_len,
	         "no instrumented code ran before ptrec_init (build with -finstrument-functions "
	         "or -fsanitize-coverage=trace-pc)");
	return -PTREC_ENOSUPP;
}

static int soft_open(struct ptrec_ring *ring, size_t size, const struct ptrec_config *cfg,
                     char *reason, size_t reason_len)
{
	(void)cfg;
	if (!size || (size & (size - 1)) || size % 8) {
		snprintf(reason, reason_len, "ring size %zu is not a power of two", size);
		return -PTREC_EINVAL;
	}
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		snprintf(reason, reason_len, "mmap of a %zu-byte ring: %s", size, strerror(errno));
		return -PTREC_ENOMEM;
	}
	memset(ring, 0, sizeof(*ring));
	ring->fd = -1;
	ring->data = p;
	ring->size = size;
	ring->mmap_base = p;
	ring->mmap_size = size;
	soft_ring = ring;
	return 0;
}

static void soft_close(struct ptrec_ring *ring)
{
	if (soft_ring == ring)
		soft_ring = NULL;
	ring->frozen = 1;
	if (ring->mmap_base)
		munmap(ring->mmap_base, ring->mmap_size);
	ring->mmap_base = NULL;
	ring->data = NULL;
}

static int soft_freeze(struct ptrec_ring *ring)
{
	ring->frozen = 1;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return 0;
}

static int soft_thaw(struct ptrec_ring *ring)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	ring->frozen = 0;
	return 0;
}

static int soft_view(const struct ptrec_ring *ring, struct ptrec_ring_view *view)
{
	ptrec_soft_view_make(ring->data, ring->size, ring->head, view);
	return 0;
}

const struct ptrec_backend_ops ptrec_backend_instrumented = {
	.id = PTREC_BACKEND_INSTRUMENTED,
	.probe = soft_probe,
	.open = soft_open,
	.close = soft_close,
	.freeze = soft_freeze,
	.thaw = soft_thaw,
	.view = soft_view,
};
