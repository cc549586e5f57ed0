/* recorder.h — the runtime's shared state and the seams between its files: lifecycle
 * (recorder.c), threads (thread_registry.c), snapshots (snapshot.c) and assertions (assert.c).
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
	pthread_mutex_t lock;                     /* init/shutdown/snapshot/status (never taken
	                                             on the crash path) */
	struct timespec last_snapshot;            /* CLOCK_MONOTONIC of the last snapshot */
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

/* ---- thread_registry.c ----------------------------------------------------------------- */

/* Prepares the registry (pthread key, atfork handlers).  Returns 0 or -PTREC_ENOMEM. */
int ptrec_registry_init(void);

/* Detaches and frees every slot whose thread is the caller or has exited; freezes the rings
 * of threads still running (they free theirs at exit). */
void ptrec_registry_shutdown(void);

/* Counts the process's threads (/proc/self/task) that have no alternate signal stack: not
 * attached, or attached without one (mapping it failed).  Their ids go to tids, space-separated
 * and cut to cap.  Returns the count. */
unsigned ptrec_registry_no_altstack(char *tids, size_t cap);

#endif
