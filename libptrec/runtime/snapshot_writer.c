/* snapshot_writer.c — the snapshot queue and the recorder thread that empties it.
 *
 * A snapshot's caller (snapshot.c) claims one of PTREC_SNAPSHOT_QUEUE slots, fills it with
 * frozen ring copies and submits it; the recorder thread, started at the first submission
 * with every signal blocked and no ring of its own, writes each dump in submission order with
 * the crash island's ptrec_dump_save (slot 1, the snapshot buffers: the places, names and
 * fallbacks of a crash dump, DUMP.txt reserved with it) and then runs the report with
 * ptrec_report_run, in processes the application never sees.  A slot is free again once its
 * report is done, so a full queue means "the recorder is still busy": the caller is refused.
 *
 * Not async-signal-safe: a mutex and a condition variable guard the queue.  The recorder
 * thread never takes ptrec_rec.lock, so ptrec_shutdown (which holds it) can wait for it. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "core/safe_str.h"
#include "runtime/recorder.h"

enum {
	JOB_FREE = 0, /* unused */
	JOB_FILLING,  /* claimed by a snapshot's caller */
	JOB_READY,    /* submitted, waiting for the recorder thread */
	JOB_WRITING,  /* the recorder thread writes its dump and report */
};

static struct ptrec_snap_job jobs[PTREC_SNAPSHOT_QUEUE];
static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t qwake = PTHREAD_COND_INITIALIZER;  /* a job was submitted / stop */
static pthread_cond_t qdone = PTHREAD_COND_INITIALIZER;  /* a job finished, or its dump */
/* Serializes writing: the island's snapshot slot has one set of buffers.  Only the recorder
 * thread writes, unless it could not be started (then the callers do, one at a time). */
static pthread_mutex_t wlock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t next_seq;
static int running;            /* the recorder thread exists */
static int stopping;           /* it should exit once the queue is empty */
static pthread_t writer;
static char last_report[PTREC_PATH_MAX + 8];
static int atexit_done;

/* Returns the oldest READY job, or NULL.  Under qlock. */
static struct ptrec_snap_job *oldest_ready(void)
{
	struct ptrec_snap_job *best = NULL;
	for (unsigned i = 0; i < PTREC_SNAPSHOT_QUEUE; i++)
		if (jobs[i].state == JOB_READY && (!best || jobs[i].seq < best->seq))
			best = &jobs[i];
	return best;
}

/* Number of jobs not FREE.  Under qlock. */
static unsigned busy_jobs(void)
{
	unsigned n = 0;
	for (unsigned i = 0; i < PTREC_SNAPSHOT_QUEUE; i++)
		n += jobs[i].state != JOB_FREE;
	return n;
}

/* Writes one job's dump and report. */
static void write_job(struct ptrec_snap_job *job)
{
	const char *tag = job->event == PTREC_EVENT_WATCH ? "watch" : "snapshot";
	struct ptrec_dump_request req = {
		.fd = -1, .event = job->event, .signo = 0, .info = NULL, .ucontext = &job->uc,
		.tid = job->tid, .reason = job->reason, .source = PTREC_DUMP_COPIES,
		.threads = job->list, .nthreads = job->nth,
		.watch = job->has_watch ? &job->watch : NULL,
		.stack_copy = job->stack_len ? job->stack : NULL, .stack_addr = job->stack_addr,
		.stack_len = job->stack_len,
	};
	int want_report = !(ptrec_crash.cfg.flags & PTREC_F_NO_REPORT) &&
	                  ptrec_crash.cfg.report_timeout_ms != 0;

	pthread_mutex_lock(&wlock);
	int rc = ptrec_dump_save(&req, 1, tag, job->dump, sizeof(job->dump));
	if (job->dump[0])
		atomic_fetch_add(&ptrec_rec.snapshots_written, 1);
	pthread_mutex_lock(&qlock);
	if (job->waiter) { /* ptrec_snapshot_path waits for the path */
		struct ptrec_sbuf b;
		ptrec_sbuf_init(&b, job->waiter->path, job->waiter->pathlen);
		ptrec_sbuf_str(&b, job->dump);
		if (job->dump[0] && want_report)
			ptrec_sbuf_str(&b, ".txt");
		job->waiter->rc = job->dump[0] ? 0 : rc ? rc : -PTREC_EIO;
		job->waiter->done = 1;
		job->waiter = NULL;
		pthread_cond_broadcast(&qdone);
	}
	pthread_mutex_unlock(&qlock);
	int report_ok = 0;
	if (job->dump[0] && want_report)
		report_ok = ptrec_report_run(job->dump, ptrec_crash.cfg.report_timeout_ms) == 0;
	pthread_mutex_unlock(&wlock);
	if (job->dump[0]) {
		pthread_mutex_lock(&qlock);
		snprintf(last_report, sizeof(last_report), "%s%s", job->dump, report_ok ? ".txt" : "");
		pthread_mutex_unlock(&qlock);
	}
	ptrec_snap_finished(job->event);
}

/* Writes job (marked WRITING), then frees its slot.  Called and returns under qlock. */
static void run_job(struct ptrec_snap_job *job)
{
	job->state = JOB_WRITING;
	pthread_mutex_unlock(&qlock);
	write_job(job);
	pthread_mutex_lock(&qlock);
	job->state = JOB_FREE;
	pthread_cond_broadcast(&qdone);
}

static void *writer_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&qlock);
	for (;;) {
		struct ptrec_snap_job *job = oldest_ready();
		if (!job) {
			if (stopping)
				break;
			pthread_cond_wait(&qwake, &qlock);
			continue;
		}
		run_job(job);
	}
	pthread_mutex_unlock(&qlock);
	return NULL;
}

struct ptrec_snap_job *ptrec_snap_job_claim(void)
{
	struct ptrec_snap_job *job = NULL;

	pthread_mutex_lock(&qlock);
	for (unsigned i = 0; i < PTREC_SNAPSHOT_QUEUE && !job; i++)
		if (jobs[i].state == JOB_FREE)
			job = &jobs[i];
	if (job) {
		job->state = JOB_FILLING;
		job->waiter = NULL;
		job->dump[0] = '\0';
		job->nth = 0;
		job->has_watch = 0;
		job->stack_len = 0;
	}
	pthread_mutex_unlock(&qlock);
	return job;
}

static void *map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

int ptrec_snap_job_reserve(struct ptrec_snap_job *job, unsigned n, size_t ring_size)
{
	if (!job->th) {
		job->th = map(PTREC_MAX_THREADS * sizeof(*job->th));
		job->list = map(PTREC_MAX_THREADS * sizeof(*job->list));
		if (!job->th || !job->list)
			return -PTREC_ENOMEM;
		for (unsigned i = 0; i < PTREC_MAX_THREADS; i++)
			job->list[i] = &job->th[i];
	}
	if (n > PTREC_MAX_THREADS || ring_size > SIZE_MAX / (n ? n : 1))
		return -PTREC_ENOMEM;
	size_t need = (size_t)n * ring_size;
	if (need <= job->arena_len)
		return 0;
	/* Grow with room for a few more threads: arenas are kept, so their pages stay faulted
	 * in and later snapshots pay only for the copies. */
	size_t len = need + need / 4;
	uint8_t *p = map(len);
	if (!p)
		return -PTREC_ENOMEM;
	if (job->arena)
		munmap(job->arena, job->arena_len);
	job->arena = p;
	job->arena_len = len;
	return 0;
}

static void atexit_flush(void)
{
	ptrec_snapshot_flush(ptrec_crash.cfg.report_timeout_ms + 1000);
}

void ptrec_snap_job_submit(struct ptrec_snap_job *job, struct ptrec_snap_wait *wait)
{
	pthread_mutex_lock(&qlock);
	job->seq = next_seq++;
	job->state = JOB_READY;
	job->waiter = wait;
	if (!running) {
		stopping = 0;
		if (ptrec_thread_create_untraced(&writer, writer_main, NULL) == 0) {
			running = 1;
			if (!atexit_done && atexit(atexit_flush) == 0)
				atexit_done = 1;
		}
	}
	if (!running)
		run_job(job); /* no thread: the caller writes it (the old, synchronous way) */
	pthread_cond_signal(&qwake);
	while (wait && !wait->done)
		pthread_cond_wait(&qdone, &qlock);
	pthread_mutex_unlock(&qlock);
}

void ptrec_snap_job_abandon(struct ptrec_snap_job *job)
{
	pthread_mutex_lock(&qlock);
	job->state = JOB_FREE;
	pthread_cond_broadcast(&qdone);
	pthread_mutex_unlock(&qlock);
}

PTREC_API int ptrec_snapshot_flush(unsigned timeout_ms)
{
	struct timespec end;
	int r = 0;

	if (!atomic_load(&ptrec_rec.initialized))
		return -PTREC_ESTATE;
	clock_gettime(CLOCK_REALTIME, &end);
	end.tv_sec += timeout_ms / 1000;
	end.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (end.tv_nsec >= 1000000000) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&qlock);
	while (busy_jobs()) {
		if (pthread_cond_timedwait(&qdone, &qlock, &end) == ETIMEDOUT) {
			r = busy_jobs() ? -PTREC_EBUSY : 0;
			break;
		}
	}
	pthread_mutex_unlock(&qlock);
	return r;
}

void ptrec_snap_writer_stop(void)
{
	pthread_mutex_lock(&qlock);
	while (busy_jobs() && running)
		pthread_cond_wait(&qdone, &qlock);
	int join = running;
	stopping = 1;
	pthread_cond_broadcast(&qwake);
	pthread_mutex_unlock(&qlock);
	if (join)
		pthread_join(writer, NULL);
	pthread_mutex_lock(&qlock);
	running = 0;
	for (unsigned i = 0; i < PTREC_SNAPSHOT_QUEUE; i++) {
		struct ptrec_snap_job *job = &jobs[i];
		if (job->state != JOB_FREE)
			continue;
		if (job->arena)
			munmap(job->arena, job->arena_len);
		if (job->th)
			munmap(job->th, PTREC_MAX_THREADS * sizeof(*job->th));
		if (job->list)
			munmap(job->list, PTREC_MAX_THREADS * sizeof(*job->list));
		job->arena = NULL;
		job->arena_len = 0;
		job->th = NULL;
		job->list = NULL;
	}
	pthread_mutex_unlock(&qlock);
}

void ptrec_snap_writer_after_fork(void)
{
	/* Only the forking thread exists: the recorder thread and any caller filling a job
	 * are gone.  The locks may have been held by them: start over. */
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	memcpy(&qlock, &m, sizeof(m));
	memcpy(&wlock, &m, sizeof(m));
	memcpy(&qwake, &c, sizeof(c));
	memcpy(&qdone, &c, sizeof(c));
	running = 0;
	stopping = 0;
	for (unsigned i = 0; i < PTREC_SNAPSHOT_QUEUE; i++) {
		jobs[i].waiter = NULL;
		jobs[i].state = JOB_FREE;
	}
}

void ptrec_snap_last_report(char *out, size_t len)
{
	pthread_mutex_lock(&qlock);
	ptrec_strlcpy(out, last_report[0] ? last_report : ptrec_crash.last_report, len);
	pthread_mutex_unlock(&qlock);
}
