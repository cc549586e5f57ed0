/* watch.c — latency watches (ptrec_watch_begin/end) and markers (ptrec_mark).
 *
 * A marker goes into the calling thread's own branch history, where the decoder finds it
 * among the branches: a PTWRITE on intel_pt when it is on (backend_pt.c sets ptrec_pt_ptwrite),
 * else a MARK record in the instrumented ring (ptrec_soft_mark: the value and the TSC).
 * A watch is two markers and two reads of CLOCK_MONOTONIC_COARSE; the markers carry
 * PTREC_MARK_WATCH_TAG in bits 36..47, a per-thread span number in bits 1..35 and 0 (begin) or
 * 1 (end) in bit 0, so the report can find the span of exactly this watch.  In the
 * instrumented ring a watch's marker is a BRANCH record of kind PTREC_BR_MARKER (from = the
 * caller, to = the 48-bit value): unlike ptrec_soft_mark it reads no TSC, which costs more
 * than the rest of the watch on some virtual machines.
 * On intel_pt without PTWRITE a marker has no place in the trace: a watch reads the TSC at
 * begin and end instead (rdtsc, the clock of the trace's TSC/MTC packets), and the report
 * places the span among the branches by their times.
 * Only a span over its budget costs more: a per-name rate limit (a small table under a
 * mutex), then a snapshot of the calling thread (or all threads) queued like ptrec_snapshot.
 * The untriggered path takes no lock and allocates nothing: async-signal-safe. */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "capture/backend_soft.h"
#include "capture/soft_write.h"
#include "core/branch.h"
#include "core/safe_str.h"
#include "runtime/recorder.h"

#define WATCH_NAMES 64   /* watch names whose last snapshot time is remembered */

/* The calling thread's span counter. */
static __thread uint64_t span_seq __attribute__((tls_model("initial-exec")));

/* Per-name rate limit: when each name last triggered. */
struct name_slot {
	char name[64];        /* watch name (truncated), "" if unused */
	uint64_t last_ns;     /* CLOCK_MONOTONIC_COARSE of its last snapshot */
};
static struct name_slot names[WATCH_NAMES];
static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;

static inline uint64_t coarse_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Puts a marker with value into the calling thread's history. */
static inline void mark(uint64_t value)
{
#if defined(__x86_64__)
	if (ptrec_pt_ptwrite) {
		/* ptwrite %rax (F3 REX.W 0F AE /4), spelled out for old assemblers. */
		__asm__ volatile(".byte 0xf3, 0x48, 0x0f, 0xae, 0xe0" : : "a"(value) : "memory");
		return;
	}
#endif
	ptrec_soft_mark(value);
}

/* 1 if the calling thread's watches are placed by time: intel_pt without PTWRITE. */
static inline int by_time(void)
{
	return !ptrec_pt_ptwrite && ptrec_rec.ops == &ptrec_backend_intel_pt;
}

/* A watch's marker (value < 2^48), written at site. */
static inline void watch_mark(uint64_t site, uint64_t value)
{
	if (ptrec_pt_ptwrite)
		mark(value);
	else
		ptrec_soft_append(site, value, PTREC_BR_MARKER);
}

PTREC_API void ptrec_mark(uint64_t value)
{
	if (!atomic_load_explicit(&ptrec_rec.initialized, memory_order_relaxed))
		return;
	mark(value);
}

PTREC_API void ptrec_watch_begin_flags(struct ptrec_watch *w, const char *name,
                                       uint64_t budget_ns, unsigned flags)
{
	w->name = name;
	w->budget_ns = budget_ns;
	w->flags = flags;
	w->mark = PTREC_MARK_WATCH_TAG << 36 | (++span_seq & ((1ull << 35) - 1)) << 1;
	w->start_ns = coarse_ns();
	w->begin_tsc = 0;
	if (!atomic_load_explicit(&ptrec_rec.initialized, memory_order_relaxed))
		return;
	if (by_time())
		w->begin_tsc = ptrec_soft_tsc();
	else
		watch_mark((uint64_t)(uintptr_t)__builtin_return_address(0), w->mark);
}

PTREC_API void ptrec_watch_begin(struct ptrec_watch *w, const char *name, uint64_t budget_ns)
{
	ptrec_watch_begin_flags(w, name, budget_ns, 0);
}

/* Returns 1 if name may snapshot now (and notes it), 0 if it did within the interval. */
static int name_allows(const char *name, uint64_t now)
{
	uint64_t interval = (uint64_t)ptrec_crash.cfg.snapshot_interval_ms * 1000000u;
	struct name_slot *s = NULL, *unused = NULL, *oldest = NULL;
	int ok = 1;

	pthread_mutex_lock(&names_lock);
	for (unsigned i = 0; i < WATCH_NAMES && !s; i++) {
		if (!names[i].name[0])
			unused = unused ? unused : &names[i];
		else if (strncmp(names[i].name, name, sizeof(names[i].name) - 1) == 0)
			s = &names[i];
		else if (!oldest || names[i].last_ns < oldest->last_ns)
			oldest = &names[i];
	}
	if (s && now - s->last_ns < interval) {
		ok = 0;
	} else {
		if (!s) {
			s = unused ? unused : oldest;
			ptrec_strlcpy(s->name, name, sizeof(s->name));
		}
		s->last_ns = now;
	}
	pthread_mutex_unlock(&names_lock);
	return ok;
}

/* The span on w took duration ns, over its budget: snapshot it. */
static void trigger(const struct ptrec_watch *w, uint64_t now, uint64_t duration,
                    uint64_t end_tsc, const struct ptrec_snap_site *site)
{
	const char *name = w->name ? w->name : "watch";
	struct ptrec_dump_watch dw;
	char reason[512];

	if (atomic_load(&ptrec_crash_owner))
		return;
	if (!name_allows(name, now)) {
		atomic_fetch_add(&ptrec_rec.snapshots_requested, 1);
		atomic_fetch_add(&ptrec_rec.snapshots_dropped, 1);
		return;
	}
	memset(&dw, 0, sizeof(dw));
	ptrec_strlcpy(dw.name, name, sizeof(dw.name));
	dw.budget_ns = w->budget_ns;
	dw.duration_ns = duration;
	dw.begin_mark = w->mark;
	dw.end_mark = w->mark | 1;
	dw.flags = w->flags;
	if (w->begin_tsc && end_tsc) {
		dw.begin_tsc = w->begin_tsc;
		dw.end_tsc = end_tsc;
	}
	snprintf(reason, sizeof(reason), "watch \"%s\" took %llu us, over its budget of %llu us",
	         name, (unsigned long long)(duration / 1000),
	         (unsigned long long)(w->budget_ns / 1000));
	ptrec_snap_take(PTREC_EVENT_WATCH, reason, &dw, (w->flags & PTREC_WATCH_ALL_THREADS) != 0,
	                site, NULL, 0);
}

PTREC_API uint64_t ptrec_watch_end(struct ptrec_watch *w)
{
	uint64_t end_tsc = 0;

	if (w->begin_tsc)
		end_tsc = ptrec_soft_tsc();
	uint64_t now = coarse_ns();
	uint64_t duration = now - w->start_ns;

	if (!atomic_load_explicit(&ptrec_rec.initialized, memory_order_relaxed))
		return 0;
	if (!w->begin_tsc)
		watch_mark((uint64_t)(uintptr_t)__builtin_return_address(0), w->mark | 1);
	if (__builtin_expect(duration > w->budget_ns, 0)) {
		struct ptrec_snap_site site;
		PTREC_SNAP_SITE(&site);
		trigger(w, now, duration, end_tsc, &site);
	}
	return duration;
}
