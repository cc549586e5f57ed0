/* snapshot.c — ptrec_snapshot: the crash report of a live process.
 *
 * Each thread's ring is frozen, copied and re-enabled at once, one thread at a time, so a
 * thread loses at most the branches of its own copy (a memcpy of one ring) and never waits;
 * only the snapshot's caller writes the dump and runs the report.  A rate limit
 * (snapshot_interval_ms) and a cap on files per process (snapshot_max_files) bound the cost.
 * Not async-signal-safe (it takes the recorder lock and maps copy buffers), but the dump
 * writer and the report runner it uses are. */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "core/safe_str.h"
#include "runtime/recorder.h"

static struct ptrec_thread *snap_list[PTREC_MAX_THREADS];
static char snap_dump[PTREC_PATH_MAX];

static long long ms_between(const struct timespec *a, const struct timespec *b)
{
	return (long long)(b->tv_sec - a->tv_sec) * 1000 + (b->tv_nsec - a->tv_nsec) / 1000000;
}

/* Freezes t's ring, copies its bytes (oldest first) into a fresh buffer, thaws it. */
static void copy_ring(struct ptrec_thread *t)
{
	struct ptrec_ring_view v;

	memset(&t->snap, 0, sizeof(t->snap));
	if (!t->ops)
		return;
	void *buf = mmap(NULL, t->ring.size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
	                 -1, 0);
	if (buf == MAP_FAILED)
		return;
	t->ops->freeze(&t->ring);
	if (t->ops->view(&t->ring, &v) == 0) {
		size_t n0 = v.len[0], n1 = v.len[1];
		if (n0 + n1 > t->ring.size)
			n0 = n1 = 0;
		if (n0)
			memcpy(buf, v.part[0], n0);
		if (n1)
			memcpy((uint8_t *)buf + n0, v.part[1], n1);
		t->snap.part[0] = buf;
		t->snap.len[0] = n0 + n1;
		t->snap.head = v.head;
		t->snap.wrapped = v.wrapped;
	}
	t->ops->thaw(&t->ring);
	t->snap_buf = buf;
	t->snap_len = t->ring.size;
}

static void release_copies(unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct ptrec_thread *t = snap_list[i];
		if (t->snap_buf)
			munmap(t->snap_buf, t->snap_len);
		t->snap_buf = NULL;
		t->snap_len = 0;
		memset(&t->snap, 0, sizeof(t->snap));
		ptrec_slot_unpin(t);
	}
}

PTREC_API int ptrec_snapshot_path(const char *reason, char *path, size_t pathlen)
{
	struct timespec now;
	ucontext_t uc;
	unsigned n = 0;
	int r = 0;

	if (!atomic_load(&ptrec_rec.initialized))
		return -PTREC_ESTATE;
	if (atomic_load(&ptrec_crash_owner))
		return -PTREC_EBUSY;
	if (pthread_mutex_trylock(&ptrec_rec.lock) != 0)
		return -PTREC_ERATE; /* another snapshot is being written right now */
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (atomic_load(&ptrec_rec.snapshots_written) >= ptrec_crash.cfg.snapshot_max_files ||
	    ((ptrec_rec.last_snapshot.tv_sec || ptrec_rec.last_snapshot.tv_nsec) &&
	     ms_between(&ptrec_rec.last_snapshot, &now) < ptrec_crash.cfg.snapshot_interval_ms)) {
		pthread_mutex_unlock(&ptrec_rec.lock);
		return -PTREC_ERATE;
	}
	ptrec_rec.last_snapshot = now;

	/* The caller first, then the others. */
	struct ptrec_thread *me = ptrec_slot_self();
	if (me && ptrec_slot_pin(me)) {
		copy_ring(me);
		snap_list[n++] = me;
	}
	for (unsigned i = 0; i < PTREC_MAX_THREADS; i++) {
		struct ptrec_thread *t = ptrec_slot_at(i);
		if (t == me || atomic_load(&t->state) != PTREC_SLOT_ACTIVE || !ptrec_slot_pin(t))
			continue;
		copy_ring(t);
		snap_list[n++] = t;
	}

	getcontext(&uc);
	struct ptrec_dump_request req = {
		.fd = -1, .event = PTREC_EVENT_SNAPSHOT, .signo = 0, .info = NULL,
		.ucontext = &uc, .tid = ptrec_gettid(), .reason = reason ? reason : "snapshot",
		.source = PTREC_DUMP_COPIES, .threads = snap_list, .nthreads = n,
	};
	r = ptrec_dump_save(&req, 1, "snapshot", snap_dump, sizeof(snap_dump));
	release_copies(n);
	if (snap_dump[0]) {
		atomic_fetch_add(&ptrec_rec.snapshots_written, 1);
		int report_ok = 0;
		if (!(ptrec_crash.cfg.flags & PTREC_F_NO_REPORT))
			report_ok = ptrec_report_run(snap_dump, ptrec_crash.cfg.report_timeout_ms) == 0;
		struct ptrec_sbuf b;
		ptrec_sbuf_init(&b, ptrec_crash.last_report, sizeof(ptrec_crash.last_report));
		ptrec_sbuf_str(&b, snap_dump);
		if (report_ok)
			ptrec_sbuf_str(&b, ".txt");
		if (path && pathlen)
			ptrec_strlcpy(path, ptrec_crash.last_report, pathlen);
	}
	/* The interval runs from the end of this snapshot: a slow report does not use it up. */
	clock_gettime(CLOCK_MONOTONIC, &ptrec_rec.last_snapshot);
	pthread_mutex_unlock(&ptrec_rec.lock);
	return r;
}

PTREC_API int ptrec_snapshot(const char *reason)
{
	return ptrec_snapshot_path(reason, NULL, 0);
}
