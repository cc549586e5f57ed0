/* recorder.h — the runtime's shared state and the seams between its files: lifecycle
 * (recorder.c), threads (thread_registry.c), snapshots (snapshot.c: the caller's part;
 * snapshot_writer.c: the recorder thread, which writes dumps and reports with the crash
 * island's ptrec_dump_save and ptrec_report_run), watches and markers (watch.c) and
 * assertions (assert.c).
 *
 * Dependencies go one way: recorder.c → thread_registry.c → backends (capture/); the runtime
 * fills the crash island's context (crash/crash.h) at init and calls into the island, never
 * the other way round. */
#ifndef PTREC_RECORDER_H
#define PTREC_RECORDER_H

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#include <ucontext.h>

#include "capture/backend.h"
#include "capture/thread_slots.h"
#include "crash/crash.h"
#include "ptrec.h"

#define PTREC_ALTSTACK_SIZE (64u << 10)    /* per-thread signal stack (plus a guard page each side) */

/* Global runtime state (recorder.c).  What the crash path needs (configuration, backend,
 * reasons, clock parameters) lives in ptrec_crash, which recorder.c fills. */
struct ptrec_recorder {
	_Atomic int initialized;                  /* 1 between init and shutdown */
	const struct ptrec_backend_ops *ops;      /* chosen backend, NULL for none */
	_Atomic size_t memory_used;               /* ring bytes charged now */
	_Atomic unsigned threads_attached;        /* slots with a ring */
	_Atomic unsigned threads_untraced;        /* attached threads without a ring */
	_Atomic unsigned snapshots_written;       /* snapshot dumps written */
	_Atomic unsigned snapshots_requested;     /* snapshots asked for (calls, watches) */
	_Atomic unsigned snapshots_dropped;       /* of those, refused */
	_Atomic unsigned snapshots_accepted;      /* of those, queued (the file cap counts these) */
	pthread_mutex_t lock;                     /* init/shutdown/snapshot/status (never taken
	                                             on the crash path) */
	struct timespec last_snapshot;            /* CLOCK_MONOTONIC of the last snapshot */
	int quiet_init;                           /* set by preload.c: ptrec_init does not print
	                                             the not-recording line (`ptrec run` says it) */
	char not_recording[PTREC_NOT_RECORDING_MAX]; /* ptrec_status().not_recording */
};

extern struct ptrec_recorder ptrec_rec;

/* ---- recorder.c ------------------------------------------------------------------------ */

/* Chooses a backend from cands[0..n) (NULL entries are backends not built in).  With
 * cfg->backend == AUTO the candidates are probed in order and the first that works wins;
 * with an explicit backend only the candidate with that id is probed; NONE probes nothing.
 * Every refusal leaves its cause in reasons[id].  Stores the winner (or NULL) in *chosen and
 * returns its id (PTREC_BACKEND_NONE when none works under AUTO), or -PTREC_ENOSUPP when an
 * explicitly requested backend refused. */
int ptrec_backend_choose(const struct ptrec_backend_ops *const *cands, size_t n,
                         const struct ptrec_config *cfg,
                         char reasons[PTREC_BACKEND_COUNT_][PTREC_REASON_MAX],
                         const struct ptrec_backend_ops **chosen);

/* ---- signal_interpose.c ---------------------------------------------------------------- */

/* Looks up libc's functions behind the interposed ones (also done at load time). */
void ptrec_interpose_resolve(void);

/* At ptrec_init, once libptrec's crash handlers are installed: what the application set up
 * before is treated as if it were set after.  The handlers of other signals lose the fault
 * signals from their mask in the kernel (a fault inside one would otherwise kill with SIG_DFL,
 * past libptrec) and still read back as set; the fault signals the calling thread's mask blocks
 * are blocked virtually instead of in the kernel.  Threads other than the caller keep their
 * kernel mask (nothing can change it from outside). */
void ptrec_interpose_adopt(void);

/* Moves the fault signals the calling thread blocks in the kernel to its virtual mask, as
 * ptrec_init does for its own thread (a fault the kernel finds blocked kills with SIG_DFL,
 * past libptrec); nothing unless libptrec's handlers are installed.  Called by
 * ptrec_thread_attach: a thread started before ptrec_init with every signal blocked (a pool's
 * worker) is covered once it attaches. */
void ptrec_interpose_adopt_mask(void);

/* At ptrec_shutdown, before the crash handlers go: the kernel gets back the masks of other
 * signals' handlers as the application set them, and the calling thread's fault signals
 * blocked virtually. */
void ptrec_interpose_release(void);

/* ---- preload.c ------------------------------------------------------------------------- */

/* Gives the report child (ptrec_report_env_prepare) this process's environment without
 * libptrec's LD_PRELOAD entry and PTREC_PRELOAD.  Called at ptrec_init. */
void ptrec_preload_env_prepare(void);

/* Copies list (an LD_PRELOAD value, entries separated by spaces or colons) to out without its
 * libptrec entries (a file named libptrec.so*, or the file this copy was loaded from), the
 * others joined by ':'.  Returns the number of entries removed, or -1 if out (cap bytes) is
 * too small.  Used by `ptrec run` too. */
int ptrec_preload_without_libptrec(const char *list, char *out, size_t cap);

/* ---- thread_registry.c ----------------------------------------------------------------- */

/* ptrec_thread_attach, and when the calling thread ends up without a ring and why is not
 * NULL, the reason in why (left as it was when the ring opened). */
int ptrec_thread_attach_why(char *why, size_t why_len);

/* Prepares the registry (pthread key, atfork handlers).  Returns 0 or -PTREC_ENOMEM. */
int ptrec_registry_init(void);

/* Detaches and frees every slot whose thread is the caller or has exited; freezes the rings
 * of threads still running (they free theirs at exit). */
void ptrec_registry_shutdown(void);

/* Counts the process's threads (/proc/self/task) that have no alternate signal stack: not
 * attached, or attached without one (mapping it failed).  Their ids go to tids, space-separated
 * and cut to cap.  Returns the count. */
unsigned ptrec_registry_no_altstack(char *tids, size_t cap);

/* Maps the calling thread's signal stack of libptrec (PTREC_ALTSTACK_SIZE between two guard
 * pages, t->altstack) unless it has one, without giving it to the kernel; it is unmapped when
 * the thread detaches.  Returns 0 or -1 (no memory). */
int ptrec_thread_altstack_map(struct ptrec_thread *t);

/* Creates a thread that libptrec does not attach (no ring, not in dumps), with every signal
 * blocked, through the real pthread_create.  Returns 0 or an errno value. */
int ptrec_thread_create_untraced(pthread_t *thr, void *(*fn)(void *), void *arg);

/* ---- snapshot.c ------------------------------------------------------------------------- */

/* Where the application called the API: the registers a snapshot reports are the caller's,
 * not libptrec's. */
struct ptrec_snap_site {
	uint64_t pc;   /* return address into the application */
	uint64_t sp;   /* its stack pointer after the return */
	uint64_t fp;   /* its frame pointer (rbp) */
};

/* Fills *s from inside a public function that has a frame pointer (the macro uses
 * __builtin_frame_address, which gives the function one).  On aarch64 the frame record
 * (x29, x30) may lie anywhere in the frame: the caller's sp is the CFA, and the return address
 * loses its pointer-authentication bits. */
#if defined(__x86_64__)
#define PTREC_SNAP_SITE(s) do { \
	uint64_t *fa_ = (uint64_t *)__builtin_frame_address(0); \
	(s)->pc = (uint64_t)(uintptr_t)__builtin_return_address(0); \
	(s)->fp = fa_[0]; \
	(s)->sp = (uint64_t)(uintptr_t)(fa_ + 2); \
} while (0)
#else
#define PTREC_SNAP_SITE(s) do { \
	uint64_t *fa_ = (uint64_t *)__builtin_frame_address(0); \
	(s)->pc = (uint64_t)(uintptr_t)__builtin_return_address(0) & ((1ull << 48) - 1); \
	(s)->fp = fa_[0]; \
	(s)->sp = (uint64_t)(uintptr_t)__builtin_dwarf_cfa(); \
} while (0)
#endif

/* Takes a snapshot for event (PTREC_EVENT_SNAPSHOT or _WATCH): claims a queue slot, freezes
 * and copies the caller's ring and, with all_threads, every other attached thread's, notes the
 * caller's registers (pc, sp and rbp from site) and stack, and queues it for the recorder
 * thread.  watch may be NULL.  The rate limit is the caller's business; the file cap and the
 * queue are checked here.  Counts the request and, when refused, the drop.  Returns as
 * ptrec_snapshot_path. */
int ptrec_snap_take(enum ptrec_dump_event event, const char *reason,
                    const struct ptrec_dump_watch *watch, int all_threads,
                    const struct ptrec_snap_site *site, char *path, size_t pathlen);

/* Called by the recorder thread when a snapshot of event is finished (dump and report): the
 * interval of ptrec_snapshot runs from there. */
void ptrec_snap_finished(enum ptrec_dump_event event);

/* ---- snapshot_writer.c: the queue and the recorder thread ------------------------------- */

#define PTREC_SNAP_STACK (16u << 10)   /* stack bytes a snapshot keeps from the caller's SP */

/* A caller of ptrec_snapshot_path that waits for its dump (on its stack; the recorder thread
 * fills it under the queue lock). */
struct ptrec_snap_wait {
	int done;                         /* 1 once the dump was written or failed */
	int rc;                           /* ptrec_dump_save's result */
	char *path;                       /* where the report's (or dump's) path goes */
	size_t pathlen;
};

/* One queued snapshot: the frozen copies and what the dump says about them. */
struct ptrec_snap_job {
	int state;                        /* JOB_* (snapshot_writer.c), under the queue lock */
	uint64_t seq;                     /* submission order */
	enum ptrec_dump_event event;      /* PTREC_EVENT_SNAPSHOT or _WATCH */
	pid_t tid;                        /* the thread that asked */
	char reason[512];                 /* its reason */
	ucontext_t uc;                    /* its registers */
	uint8_t stack[PTREC_SNAP_STACK];  /* its stack from SP up */
	uint64_t stack_addr;              /* SP */
	size_t stack_len;                 /* bytes in stack */
	int has_watch;                    /* 1: watch is valid */
	struct ptrec_dump_watch watch;    /* the span, for watches */
	struct ptrec_snap_wait *waiter;   /* the caller waiting for the dump, or NULL */
	char dump[PTREC_PATH_MAX];        /* its path, set by the recorder thread */
	struct ptrec_thread *th;          /* copies of the slots, snap pointing into arena
	                                     (PTREC_MAX_THREADS entries, mapped once) */
	struct ptrec_thread **list;       /* &th[i], as the dump writer wants them */
	unsigned nth;                     /* threads copied */
	uint8_t *arena;                   /* ring copies */
	size_t arena_len;                 /* bytes mapped at arena */
};

/* Claims a free queue slot for filling.  Returns it, or NULL when the queue is full. */
struct ptrec_snap_job *ptrec_snap_job_claim(void);

/* Makes sure job can hold n threads with ring copies of ring_size bytes each.  Returns 0 or
 * -PTREC_ENOMEM. */
int ptrec_snap_job_reserve(struct ptrec_snap_job *job, unsigned n, size_t ring_size);

/* Queues a filled job for the recorder thread (started at the first call).  With wait, also
 * waits until its dump is written and fills *wait. */
void ptrec_snap_job_submit(struct ptrec_snap_job *job, struct ptrec_snap_wait *wait);

/* Gives a claimed job back unused. */
void ptrec_snap_job_abandon(struct ptrec_snap_job *job);

/* Writes every queued job, stops the recorder thread and frees the queue (ptrec_shutdown). */
void ptrec_snap_writer_stop(void);

/* In a fork child: the recorder thread is gone; forget the queue. */
void ptrec_snap_writer_after_fork(void);

/* Copies the last report's path (as ptrec_status shows it) into out. */
void ptrec_snap_last_report(char *out, size_t len);

#endif
