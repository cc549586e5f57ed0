/* soft_write.h — the instrumented backend's hot path: append one 16-byte record
 * (struct ptrec_soft_record, core/branch.h) to the calling thread's ring.  Shared by the hooks
 * built into libptrec and into the static hook archive (libptrec_hooks.a) that programs link
 * so that the hooks are direct calls, not calls through the PLT.
 *
 * The thread's ring pointer lives in initial-exec TLS and is never NULL: a thread without a
 * ring points at a static ring whose soft_mask is 0.  soft_mask is the only check on the hot
 * path: freezing (from any thread, also at crash time) and closing set it to 0, so "no ring",
 * "frozen" and "stop recording" are one well-predicted branch.
 * Before it, one load of the hook gate (capture/hook_gate.h): while a crash is handled the hooks
 * touch nothing else, not even the TLS pointer, which the application's handler may rewrite.
 *
 * ASYNC-SIGNAL-SAFE: no calls, no allocation; only the owning thread writes its ring. */
#ifndef PTREC_SOFT_WRITE_H
#define PTREC_SOFT_WRITE_H

#include <stdint.h>

#include "capture/backend.h"
#include "capture/hook_gate.h"
#include "core/branch.h"

#define PTREC_SOFT_HOT \
	__attribute__((no_instrument_function, no_sanitize("address", "undefined"), always_inline)) \
	static inline

/* The calling thread's ring (never NULL; see above).  Defined in backend_soft.c and exported
 * from libptrec.so for the hook archive. */
extern PTREC_API __thread struct ptrec_ring *__ptrec_soft_tls __attribute__((tls_model("initial-exec")));

/* TSC bits dropped from CALL/RET/EDGE times (when the ring is timed): x = (TSC >> 6) mod 2^28,
 * i.e. ~20 ns units that wrap after 2^34 cycles (several seconds). */
#define PTREC_SOFT_TIME_SHIFT 6

/* The time stamp: the TSC on x86-64, the generic timer's virtual count (CNTVCT_EL0, which
 * Linux lets user space read) on aarch64; backend_soft.c calibrates either against
 * CLOCK_MONOTONIC. */
PTREC_SOFT_HOT uint64_t ptrec_soft_tsc(void)
{
#if defined(__x86_64__)
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
#else
	uint64_t v;
	__asm__ volatile("isb\n\tmrs %0, cntvct_el0" : "=r"(v));
	return v;
#endif
}

/* A code address as the hooks record it.  aarch64 with pointer authentication
 * (-mbranch-protection=standard) may hand the hooks a signed return address: the signature
 * sits in the bits above the 48-bit user address space (and the tag byte), which are cleared.
 * Plain arithmetic, no XPACI: it runs on CPUs without PAC. */
PTREC_SOFT_HOT uint64_t ptrec_soft_code(uint64_t a)
{
#if defined(__aarch64__)
	return a & ((1ull << 48) - 1);
#else
	return a;
#endif
}

/* soft_mask bit 63: records carry the time (PTREC_F_SOFT_TIME).  Rings are far smaller than
 * 2^63 and so is head, so the bit never changes an offset. */
#define PTREC_SOFT_MASK_TIMED (1ull << 63)

/* Stores {w0, w1} at the head of ring r whose soft_mask is m. */
PTREC_SOFT_HOT void ptrec_soft_store(struct ptrec_ring *r, uint64_t m, uint64_t w0, uint64_t w1)
{
	uint64_t h = r->head;
	uint64_t *p = (uint64_t *)(void *)(r->data + (h & m));
	p[0] = w0;
	p[1] = w1;
	/* The compiler barrier keeps the record stores before the head store that publishes
	 * them to a reader in a signal handler on this thread. */
	__asm__ volatile("" ::: "memory");
	r->head = h + sizeof(struct ptrec_soft_record);
}

/* Notes on r that a hook ran while it was not recording (cold path; for the ring of threads
 * without one, this tells that the program carries instrumentation). */
PTREC_SOFT_HOT void ptrec_soft_no_ring(struct ptrec_ring *r)
{
	if (!r->soft_seen)
		r->soft_seen = 1;
}

/* The calling thread's ring in *rp and its mask, or 0 when nothing may be recorded: a crash
 * is being handled (touch nothing the application can rewrite), or the thread has no ring
 * (then the hooks are marked seen). */
PTREC_SOFT_HOT uint64_t ptrec_soft_ready(struct ptrec_ring **rp)
{
	if (__builtin_expect(__ptrec_hook_gate.stopped, 0))
		return 0;
	struct ptrec_ring *r = *rp = __ptrec_soft_tls;
	uint64_t m = r->soft_mask;
	if (__builtin_expect(m == 0, 0))
		ptrec_soft_no_ring(r);
	return m;
}

/* Appends {w0, w1} to the calling thread's ring, or marks the hooks seen when it has none. */
PTREC_SOFT_HOT void ptrec_soft_put(uint64_t w0, uint64_t w1)
{
	struct ptrec_ring *r;
	uint64_t m = ptrec_soft_ready(&r);
	if (__builtin_expect(m != 0, 1))
		ptrec_soft_store(r, m, w0, w1);
}

/* A record of kind with addresses a and b, and the time in x when the ring is timed. */
PTREC_SOFT_HOT void ptrec_soft_put_kind(unsigned kind, uint64_t a, uint64_t b)
{
	struct ptrec_ring *r;
	uint64_t m = ptrec_soft_ready(&r);
	if (__builtin_expect(m == 0, 0))
		return;
	uint64_t x = 0;
	if (__builtin_expect((int64_t)m < 0, 0))
		x = ptrec_soft_tsc() >> PTREC_SOFT_TIME_SHIFT;
	ptrec_soft_store(r, m, PTREC_SOFT_W0(kind, a, x), PTREC_SOFT_W1(b, x));
}

#endif
