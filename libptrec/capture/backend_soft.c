/* backend_soft.c — the instrumented backend: per-thread software rings of 16-byte records
 * (struct ptrec_soft_record, core/branch.h) filled by the compiler instrumentation hooks
 * (soft_hooks.c, through the hot path in soft_write.h), plus markers and the TSC calibration
 * that lets reports turn record times into nanoseconds.
 *
 * A record is two 8-byte stores at head & mask, then head += 16; the ring is a power of two
 * of at least 16 bytes, so records never straddle the wrap point.  No locks: only the owning
 * thread writes its ring; freezing zeroes ring->soft_mask, which the writer checks before
 * each record (at most one record in flight may land after a freeze).  The ring pointer lives
 * in initial-exec TLS and is never NULL (threads without a ring point at soft_none), so the
 * hooks never allocate and are safe inside signal handlers.
 *
 * Everything here that the hooks or the crash path call is ASYNC-SIGNAL-SAFE; libptrec itself
 * is never compiled with instrumentation. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "capture/backend_soft.h"
#include "capture/patch_entries.h"
#include "capture/soft_write.h"
#include "capture/thread_slots.h"

#define NOINSTR __attribute__((no_instrument_function, no_sanitize("address", "undefined")))

/* The ring of threads that have none: soft_mask 0, so the hooks only note that they ran. */
static struct ptrec_ring soft_none;

PTREC_API __thread struct ptrec_ring *__ptrec_soft_tls __attribute__((tls_model("initial-exec"))) =
	&soft_none;

int ptrec_soft_hooks_ran(void)
{
	return __atomic_load_n(&soft_none.soft_seen, __ATOMIC_RELAXED);
}

/* TSC and CLOCK_MONOTONIC read together when the first ring opened: the calibration base. */
static uint64_t calib_tsc;
static uint64_t calib_ns;

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

NOINSTR void ptrec_soft_append(uint64_t from, uint64_t to, unsigned kind)
{
	ptrec_soft_put(PTREC_SOFT_W0(PTREC_SOFT_BRANCH, from, kind), PTREC_SOFT_W1(to, kind));
}

NOINSTR void ptrec_soft_mark(uint64_t value)
{
	struct ptrec_ring *r = __ptrec_soft_tls;
	uint64_t m = r->soft_mask;
	if (!m)
		return;
	ptrec_soft_store(r, m, ((uint64_t)PTREC_SOFT_MARK << 60) |
	                 (ptrec_soft_tsc() & PTREC_SOFT_TSC_MASK), value);
}

void ptrec_soft_time_convert(uint64_t tsc0, uint64_t ns0, uint64_t tsc1, uint64_t ns1,
                             struct ptrec_ring *ring)
{
	ring->time_mult = 0;
	ring->time_shift = 0;
	ring->time_zero = 0;
	/* Below a millisecond of TSC ticks the rate would be too rough: leave it unknown. */
	if (tsc1 <= tsc0 || ns1 <= ns0 || tsc1 - tsc0 < 1000000)
		return;
	unsigned shift = 31;
	unsigned __int128 mult = ((unsigned __int128)(ns1 - ns0) << shift) / (tsc1 - tsc0);
	while (mult >> 32 && shift) {
		mult >>= 1;
		shift--;
	}
	if (mult >> 32 || !mult)
		return;
	uint64_t m = (uint64_t)mult;
	uint64_t conv = (tsc1 >> shift) * m + (((tsc1 & ((1ull << shift) - 1)) * m) >> shift);
	ring->time_mult = (uint32_t)m;
	ring->time_shift = shift;
	ring->time_zero = ns1 - conv; /* modulo 2^64, like the perf user page's time_zero */
}

void ptrec_soft_view_make(const uint8_t *data, size_t size, uint64_t head,
                          struct ptrec_ring_view *view)
{
	const uint64_t rec = sizeof(struct ptrec_soft_record);
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

/* Usable when instrumented code already ran, or when the program's patchable function entries
 * (GCC's `ptrec cflags`) could be patched to call the entry hook now: this backend is tried
 * last, so entries are patched only when it is the one that will record. */
static int soft_probe(const struct ptrec_config *cfg, char *reason, size_t reason_len)
{
	int patched = ptrec_patch_apply(reason, reason_len);
	if (patched > 0 || ptrec_soft_hooks_ran() || cfg->backend == PTREC_BACKEND_INSTRUMENTED)
		return 0;
	if (patched < 0)
		return patched;
	snprintf(reason, reason_len,
	         "no instrumented code ran before ptrec_init and no patchable function entries "
	         "were registered (the program was not built with `ptrec cflags` and linked with "
	         "`pkg-config --libs libptrec`)");
	return -PTREC_ENOSUPP;
}

/* The soft_mask of a recording ring: its offset mask, and the timed bit. */
static uint64_t live_mask(const struct ptrec_ring *ring)
{
	return (uint64_t)(ring->size - 1) |
	       ((ring->soft_format & PTREC_SOFT_FMT_TIMED) ? PTREC_SOFT_MASK_TIMED : 0);
}

static int soft_open(struct ptrec_ring *ring, size_t size, const struct ptrec_config *cfg,
                     char *reason, size_t reason_len)
{
	if (size < sizeof(struct ptrec_soft_record) || (size & (size - 1))) {
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
	ring->soft_format = (cfg->flags & PTREC_F_SOFT_TIME)
	                    ? PTREC_SOFT_FMT_TIMED | (PTREC_SOFT_TIME_SHIFT << 8) : 0;
	if (!__atomic_load_n(&calib_tsc, __ATOMIC_RELAXED)) {
		calib_ns = mono_ns();
		__atomic_store_n(&calib_tsc, ptrec_soft_tsc(), __ATOMIC_RELEASE);
	}
	ring->soft_mask = live_mask(ring);
	__ptrec_soft_tls = ring;
	return 0;
}

static void soft_close(struct ptrec_ring *ring)
{
	ring->soft_mask = 0;
	if (__ptrec_soft_tls == ring)
		__ptrec_soft_tls = &soft_none;
	ring->frozen = 1;
	if (ring->mmap_base)
		munmap(ring->mmap_base, ring->mmap_size);
	ring->mmap_base = NULL;
	ring->data = NULL;
}

/* ASYNC-SIGNAL-SAFE: stops the hooks, then stamps the ring with the TSC at freeze time (the
 * decoder's anchor for record times) and the TSC-to-nanoseconds conversion measured since the
 * first ring opened. */
static int soft_freeze(struct ptrec_ring *ring)
{
	__atomic_store_n(&ring->soft_mask, 0, __ATOMIC_SEQ_CST);
	ring->frozen = 1;
	uint64_t tsc0 = __atomic_load_n(&calib_tsc, __ATOMIC_ACQUIRE);
	uint64_t ns = mono_ns(), tsc = ptrec_soft_tsc();
	ring->config = ring->soft_format;
	ring->config1 = tsc;
	ptrec_soft_time_convert(tsc0, calib_ns, tsc, ns, ring);
	return 0;
}

static int soft_thaw(struct ptrec_ring *ring)
{
	ring->frozen = 0;
	__atomic_store_n(&ring->soft_mask, live_mask(ring), __ATOMIC_SEQ_CST);
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
