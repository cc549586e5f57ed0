/* snapshot.c — ptrec_snapshot: the caller's part of a snapshot of a live process.
 *
 * The caller claims a queue slot (snapshot_writer.c), then each ring is frozen, copied into
 * the slot's arena and thawed at once, one thread at a time (the caller's first), so a thread
 * loses at most the branches of its own copy (one memcpy of its ring) and never waits.  The
 * caller's registers and the top of its stack are copied too, because the dump is written
 * later, by the recorder thread.  A rate limit (snapshot_interval_ms, ptrec_snapshot only,
 * counted from the end of the last snapshot: its call, and again once its report is done, so
 * a slow report does not use it up) and a cap on files per process (snapshot_max_files) bound
 * the cost; a full queue refuses.
 * Not async-signal-safe (a mutex serializes the copies, and the arena may be mapped). */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "core/arch.h"
#include "core/safe_str.h"
#include "runtime/recorder.h"

/* Copies are taken one snapshot at a time: two copiers freezing and thawing the same ring
 * would let it run while the other copies. */
static pthread_mutex_t copy_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t rate_lock = PTHREAD_MUTEX_INITIALIZER;

static long long ms_between(const struct timespec *a, const struct timespec *b)
{
	return (long long)(b->tv_sec - a->tv_sec) * 1000 + (b->tv_nsec - a->tv_nsec) / 1000000;
}

/* Freezes t's ring, copies its bytes (oldest first) to dst, thaws it, and fills the copy c
 * of the slot (its snap view points at dst).  Returns the bytes used at dst. */
static size_t copy_ring(struct ptrec_thread *t, struct ptrec_thread *c, uint8_t *dst,
                        size_t room)
{
	struct ptrec_ring_view v;
	size_t used = 0;

	if (!t->ops) {
		*c = *t;
		c->name[0] = '\0';
		return 0;
	}
	t->ops->freeze(&t->ring);
	*c = *t; /* after the freeze: it notes what decoders need (soft rings: the TSC then) */
	c->name[0] = '\0';
	c->snap_buf = NULL;
	c->snap_len = 0;
	memset(&c->snap, 0, sizeof(c->snap));
	if (t->ops->view(&t->ring, &v) == 0) {
		size_t n0 = v.len[0], n1 = v.len[1];
		if (n0 + n1 > room)
			n0 = n1 = 0;
		if (n0)
			memcpy(dst, v.part[0], n0);
		if (n1)
			memcpy(dst + n0, v.part[1], n1);
		used = n0 + n1;
		c->snap.part[0] = dst;
		c->snap.len[0] = used;
		c->snap.head = v.head;
		c->snap.wrapped = v.wrapped;
	}
	t->ops->thaw(&t->ring);
	c->ring.data = NULL; /* the copy never touches the live ring */
	return used;
}

/* Copies the caller's and (with all) every other active thread's ring into job. */
static int copy_rings(struct ptrec_snap_job *job, int all)
{
	struct ptrec_thread *me = ptrec_slot_self();
	unsigned want = 1;
	size_t off = 0;

	if (all)
		for (unsigned i = 0; i < PTREC_MAX_THREADS; i++)
			want += ptrec_slot_at(i) != me &&
			        atomic_load(&ptrec_slot_at(i)->state) == PTREC_SLOT_ACTIVE;
	int r = ptrec_snap_job_reserve(job, want, ptrec_crash.cfg.ring_size);
	if (r)
		return r;
	pthread_mutex_lock(&copy_lock);
	if (me && ptrec_slot_pin(me)) {
		off += copy_ring(me, &job->th[job->nth++], job->arena, job->arena_len);
		ptrec_slot_unpin(me);
	}
	for (unsigned i = 0; all && i < PTREC_MAX_THREADS && job->nth < want; i++) {
		struct ptrec_thread *t = ptrec_slot_at(i);
		if (t == me || atomic_load(&t->state) != PTREC_SLOT_ACTIVE || !ptrec_slot_pin(t))
			continue;
		off += copy_ring(t, &job->th[job->nth++], job->arena + off, job->arena_len - off);
		ptrec_slot_unpin(t);
	}
	pthread_mutex_unlock(&copy_lock);
	return 0;
}

/* Notes the caller's registers, the top of its stack and its name (it may have exited by the
 * time the dump is written). */
static void copy_context(struct ptrec_snap_job *job, const struct ptrec_snap_site *site)
{
	/* One syscall, no descriptor: the name is at most 16 bytes with its NUL (TASK_COMM_LEN). */
	_Static_assert(sizeof(job->th[0].name) >= 16, "PR_GET_NAME writes up to 16 bytes");
	if (job->nth && job->th[0].tid == job->tid && prctl(PR_GET_NAME, job->th[0].name, 0, 0, 0))
		job->th[0].name[0] = '\0';
	getcontext(&job->uc);
	ptrec_uc_set(&job->uc, site->pc, site->sp, site->fp);
	job->stack_addr = site->sp;
	job->stack_len = ptrec_safe_copy(job->stack, job->stack_addr, sizeof(job->stack));
	if (!job->stack_len) /* the stack's end is nearer than PTREC_SNAP_STACK: try less */
		job->stack_len = ptrec_safe_copy(job->stack, job->stack_addr, 4096 -
		                                 (job->stack_addr & 4095));
}

static int refuse(int r)
{
	atomic_fetch_add(&ptrec_rec.snapshots_dropped, 1);
	return r;
}

int ptrec_snap_take(enum ptrec_dump_event event, const char *reason,
                    const struct ptrec_dump_watch *watch, int all_threads,
                    const struct ptrec_snap_site *site, char *path, size_t pathlen)
{
	int r;

	atomic_fetch_add(&ptrec_rec.snapshots_requested, 1);
	if (atomic_load(&ptrec_rec.snapshots_accepted) >= ptrec_crash.cfg.snapshot_max_files)
		return refuse(-PTREC_ERATE);
	struct ptrec_snap_job *job = ptrec_snap_job_claim();
	if (!job)
		return refuse(-PTREC_ERATE);
	job->event = event;
	job->tid = ptrec_gettid();
	ptrec_strlcpy(job->reason, reason, sizeof(job->reason));
	if (watch) {
		job->watch = *watch;
		job->has_watch = 1;
	}
	if ((r = copy_rings(job, all_threads)) != 0) {
		ptrec_snap_job_abandon(job);
		return refuse(r);
	}
	copy_context(job, site);
	atomic_fetch_add(&ptrec_rec.snapshots_accepted, 1);
	if (!path || !pathlen) {
		ptrec_snap_job_submit(job, NULL);
		return 0;
	}
	/* The place and name are chosen when the dump is written (ptrec_dump_save): wait. */
	struct ptrec_snap_wait wait = {.done = 0, .rc = 0, .path = path, .pathlen = pathlen};
	ptrec_snap_job_submit(job, &wait);
	return wait.rc;
}

void ptrec_snap_finished(enum ptrec_dump_event event)
{
	if (event != PTREC_EVENT_SNAPSHOT)
		return;
	pthread_mutex_lock(&rate_lock);
	clock_gettime(CLOCK_MONOTONIC, &ptrec_rec.last_snapshot);
	pthread_mutex_unlock(&rate_lock);
}

/* The calls the application makes: their caller is where the snapshot's registers point. */
static int snapshot_at(const struct ptrec_snap_site *site, const char *reason, char *path,
                       size_t pathlen)
{
	struct timespec now;

	if (!atomic_load(&ptrec_rec.initialized))
		return -PTREC_ESTATE;
	if (atomic_load(&ptrec_crash_owner))
		return -PTREC_EBUSY;
	clock_gettime(CLOCK_MONOTONIC, &now);
	pthread_mutex_lock(&rate_lock);
	int limited = (ptrec_rec.last_snapshot.tv_sec || ptrec_rec.last_snapshot.tv_nsec) &&
	              ms_between(&ptrec_rec.last_snapshot, &now) <
	                      (long long)ptrec_crash.cfg.snapshot_interval_ms;
	if (!limited)
		ptrec_rec.last_snapshot = now;
	pthread_mutex_unlock(&rate_lock);
	if (limited) {
		atomic_fetch_add(&ptrec_rec.snapshots_requested, 1);
		return refuse(-PTREC_ERATE);
	}
	return ptrec_snap_take(PTREC_EVENT_SNAPSHOT, reason ? reason : "snapshot", NULL, 1, site,
	                       path, pathlen);
}

PTREC_API int ptrec_snapshot_path(const char *reason, char *path, size_t pathlen)
{
	struct ptrec_snap_site site;
	PTREC_SNAP_SITE(&site);
	return snapshot_at(&site, reason, path, pathlen);
}

PTREC_API int ptrec_snapshot(const char *reason)
{
	struct ptrec_snap_site site;
	PTREC_SNAP_SITE(&site);
	return snapshot_at(&site, reason, NULL, 0);
}
