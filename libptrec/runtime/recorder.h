/* recorder_internal.h — the recorder's shared state and the seams between its files:
 * lifecycle (recorder.c), threads (thread_registry.c), the instrumented backend
 * (backend_soft.c), the crash path (crash_signal.c, dump_write.c, core_path.c, crash_report.c,
 * safe_str.c), snapshots (snapshot.c) and assertions (assert.c).
 *
 * Dependencies go one way: recorder.c → thread_registry.c → backends; the crash path reads the
 * registry and the global state but never changes the lifecycle.  Everything the crash path
 * touches is allocated at init (static buffers or mmap), so it needs no malloc, stdio or locks. */
#ifndef PTREC_RECORDER_INTERNAL_H
#define PTREC_RECORDER_INTERNAL_H

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "capture/backend.h"
#include "dump/dump_format.h"
#include "ptrec.h"

#define PTREC_MAX_THREADS 1024             /* registry slots; more threads run untraced */
#define PTREC_ALTSTACK_SIZE (64u << 10)    /* per-thread signal stack (plus a guard page) */
#define PTREC_PATH_MAX 4096                /* paths the crash path builds */
#define PTREC_MAPS_MAX (1u << 20)          /* /proc/self/maps bytes kept in a dump */
#define PTREC_STACK_DUMP (64u << 10)       /* stack bytes kept from SP upwards */
#define PTREC_CODE_DUMP_MAX (16u << 20)    /* total bytes of JIT code kept in a dump */

/* States of a registry slot. */
enum ptrec_slot_state {
	PTREC_SLOT_FREE = 0,    /* unused */
	PTREC_SLOT_OPENING,     /* claimed by a thread that is attaching */
	PTREC_SLOT_ACTIVE,      /* attached: the crash path and snapshots may read it */
	PTREC_SLOT_CLOSING,     /* detaching: readers skip it */
};

/* One attached thread.  Slots live in a static array so the crash path can walk them without
 * locks; a reader pins a slot before it touches the ring, and a detaching thread waits for the
 * pins to drop before it frees anything (or, during a crash, never frees). */
struct ptrec_thread {
	_Atomic int state;                        /* enum ptrec_slot_state */
	_Atomic int pins;                         /* readers currently using the ring */
	pid_t tid;                                /* kernel thread id */
	unsigned flags;                           /* PTREC_THREAD_UNTRACED when no ring */
	const struct ptrec_backend_ops *ops;      /* backend that opened the ring, or NULL */
	struct ptrec_ring ring;                   /* the ring (valid when ops != NULL) */
	size_t charged;                           /* bytes charged to the memory budget */
	void *altstack;                           /* our sigaltstack mapping, or NULL */
	size_t altstack_len;                      /* bytes of that mapping (with guard page) */
	struct ptrec_ring_view snap;              /* snapshot: copied bytes (valid while
	                                             snap_buf != NULL) */
	uint8_t *snap_buf;                        /* snapshot copy buffer, or NULL */
	size_t snap_len;                          /* bytes mapped at snap_buf */
};

/* Global recorder state (recorder.c).  Fields read by the crash path are set before the
 * handlers are installed and not changed while they are. */
struct ptrec_recorder {
	_Atomic int initialized;                  /* 1 between init and shutdown */
	struct ptrec_config cfg;                  /* copy of the configuration */
	char dump_dir[PTREC_PATH_MAX];            /* cfg.dump_dir copied, "" if unset */
	char filter[1024];                        /* cfg.filter copied, "" if unset */
	const struct ptrec_backend_ops *ops;      /* chosen backend, NULL for none */
	enum ptrec_backend backend;               /* chosen backend id */
	char reason[PTREC_BACKEND_COUNT_][PTREC_REASON_MAX]; /* why each backend was refused */
	_Atomic size_t memory_used;               /* ring bytes charged now */
	_Atomic unsigned threads_attached;        /* slots with a ring */
	_Atomic unsigned threads_untraced;        /* attached threads without a ring */
	_Atomic unsigned snapshots_written;       /* snapshot dumps written */
	char tool_path[PTREC_PATH_MAX];           /* absolute path of the ptrec tool */
	uint32_t cpu_family, cpu_model, cpu_stepping; /* CPUID display values */
	uint32_t tsc_ratio_n, tsc_ratio_d;        /* CPUID 15H EBX/EAX (TSC / crystal), 0 = unknown */
	uint32_t nom_freq;                        /* intel_pt caps/max_nonturbo_ratio, 0 = unknown */
	pthread_mutex_t lock;                     /* init/shutdown/snapshot/status (never taken
	                                             on the crash path) */
	char last_report[4096];                   /* path of the last report written */
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

/* ---- thread_registry.c ----------------------------------------------------------------- */

/* Prepares the registry (pthread key, atfork handlers).  Returns 0 or -PTREC_ENOMEM. */
int ptrec_registry_init(void);

/* Detaches and frees every slot whose thread is the caller or has exited; freezes the rings
 * of threads still running (they free theirs at exit). */
void ptrec_registry_shutdown(void);

/* Returns slot i (0 <= i < PTREC_MAX_THREADS).  ASYNC-SIGNAL-SAFE. */
struct ptrec_thread *ptrec_registry_slot(unsigned i);

/* Returns the calling thread's slot, or NULL if it is not attached.  ASYNC-SIGNAL-SAFE
 * (initial-exec TLS). */
struct ptrec_thread *ptrec_registry_self(void);

/* Pins slot t if it is ACTIVE.  Returns 1 (pinned: call ptrec_registry_unpin when done, or
 * never during a crash) or 0.  ASYNC-SIGNAL-SAFE. */
int ptrec_registry_pin(struct ptrec_thread *t);
void ptrec_registry_unpin(struct ptrec_thread *t);

/* Set once a crash dump starts: detaching threads stop freeing rings.  ASYNC-SIGNAL-SAFE. */
extern _Atomic int ptrec_crash_in_progress;

/* Returns the kernel thread id of the caller.  ASYNC-SIGNAL-SAFE. */
pid_t ptrec_gettid(void);

/* ---- backend_soft.c -------------------------------------------------------------------- */

/* 1 once an instrumentation hook ran in this process (the program carries the hooks). */
extern volatile int ptrec_soft_hooks_seen;

/* Appends one record to the calling thread's soft ring (used by the hooks and by tests).
 * ASYNC-SIGNAL-SAFE, lock-free. */
void ptrec_soft_append(uint64_t from, uint64_t to, unsigned kind);

/* Computes the oldest-first view of a BTS-format software ring: like ptrec_ring_view_make but
 * the oldest piece starts on a 24-byte record boundary (the partly overwritten oldest record
 * is dropped).  Pure and ASYNC-SIGNAL-SAFE. */
void ptrec_soft_view_make(const uint8_t *data, size_t size, uint64_t head,
                          struct ptrec_ring_view *view);

/* ---- crash_signal.c -------------------------------------------------------------------- */

/* Installs the crash handlers, saving the previous ones.  Returns 0 or -PTREC_EINVAL. */
int ptrec_signals_install(void);

/* Restores the saved handlers. */
void ptrec_signals_restore(void);

/* The dump owner protocol: 0 free, else the tid of the thread writing the one dump of this
 * process crash.  ASYNC-SIGNAL-SAFE. */
extern _Atomic int ptrec_crash_owner;
extern _Atomic int ptrec_crash_done;

/* Pins and freezes every attached thread's ring, the caller's first, and lists the pinned
 * slots in list (PTREC_MAX_THREADS entries).  Returns how many were listed.  The slots stay
 * pinned (a crash never unpins).  ASYNC-SIGNAL-SAFE. */
unsigned ptrec_freeze_all(struct ptrec_thread **list);

/* Writes the one dump and report of this process crash or assertion; the caller must own the
 * dump (ptrec_crash_owner == its tid).  Marks ptrec_crash_done.  Returns 0 or -PTREC_EIO.
 * ASYNC-SIGNAL-SAFE. */
int ptrec_crash_dump_owned(int signo, const siginfo_t *info, const void *ucontext,
                           enum ptrec_dump_event event, const char *reason);

/* ---- dump_write.c ---------------------------------------------------------------------- */

/* Where a dump's thread rings come from. */
enum ptrec_dump_source {
	PTREC_DUMP_LIVE = 0,   /* the frozen rings themselves (crash, assert) */
	PTREC_DUMP_COPIES,     /* the slots' snapshot copies (snapshot) */
};

/* What one dump is about. */
struct ptrec_dump_request {
	int fd;                        /* open, writable, positioned at 0 */
	enum ptrec_dump_event event;   /* crash, assert or snapshot */
	int signo;                     /* signal (0 for snapshots) */
	const siginfo_t *info;         /* siginfo, or NULL */
	const void *ucontext;          /* ucontext_t of the event thread, or NULL */
	pid_t tid;                     /* the event thread */
	const char *reason;            /* reason / assertion text, or NULL */
	enum ptrec_dump_source source; /* where ring bytes come from */
	struct ptrec_thread *const *threads; /* pinned slots, the event thread first */
	unsigned nthreads;             /* entries in threads */
};

/* Writes a whole dump (doc/dump-format.md) to req->fd with async-signal-safe calls only,
 * using the static buffers of `slot` (0 for crash/assert, 1 for snapshots).  Returns 0, or
 * -PTREC_EIO if a write failed (the file then holds what was written, without END). */
int ptrec_dump_write(const struct ptrec_dump_request *req, int slot);

/* Copies len bytes at addr into dst without faulting (process_vm_readv on the own process).
 * Returns the bytes copied (0 if unreadable).  ASYNC-SIGNAL-SAFE. */
size_t ptrec_safe_copy(void *dst, uint64_t addr, size_t len);

/* ---- core_path.c ----------------------------------------------------------------------- */

/* What the kernel knows when it names a core file. */
struct ptrec_core_info {
	const char *pattern;         /* /proc/sys/kernel/core_pattern text (trailing \n ignored) */
	int uses_pid;                /* /proc/sys/kernel/core_uses_pid */
	const char *cwd;             /* the process's cwd, for relative results */
	long pid;                    /* %p and %P */
	long tid;                    /* %i and %I */
	const char *comm;            /* %e */
	const char *exe;             /* %E: executable path ('/' becomes '!') */
	long long time;              /* %t: seconds since the epoch */
	const char *hostname;        /* %h */
	long uid;                    /* %u */
	long gid;                    /* %g */
	int signo;                   /* %s */
	unsigned long long core_limit; /* %c: RLIMIT_CORE soft limit (RLIM_INFINITY as is) */
};

/* Expands info->pattern as the kernel does for this process into out (absolute when cwd is
 * given).  Pure and ASYNC-SIGNAL-SAFE.  Returns 0, -PTREC_ENOSUPP when the pattern pipes to a
 * program ("|..."), -PTREC_EINVAL for an empty pattern, or -PTREC_EOVERFLOW when the result
 * does not fit outlen. */
int ptrec_core_expand(const struct ptrec_core_info *info, char *out, size_t outlen);

/* Formats the fallback base name "DIR/ptrec.COMM.PID.TIME" into out.  Pure,
 * ASYNC-SIGNAL-SAFE.  Returns 0 or -PTREC_EOVERFLOW. */
int ptrec_fallback_base(const char *dir, const char *comm, long pid, long long time,
                        char *out, size_t outlen);

/* Chooses and creates the dump file for the running process: "<core path>.ptrec" when the
 * core_pattern names a writable file, else the fallback in PTREC_DIR, the cwd, then /tmp.
 * Creates the dump with O_EXCL|O_NOFOLLOW, mode 0600.  On success stores the dump's path in
 * dump (the report's path is dump + ".txt") and returns the open fd; returns -PTREC_EIO if no
 * place worked.  ASYNC-SIGNAL-SAFE. */
int ptrec_dump_open(int signo, pid_t tid, const char *tag, char *dump, size_t dumplen);

/* ---- crash_report.c -------------------------------------------------------------------- */

/* Runs `ptrec report DUMP` (the tool at ptrec_rec.tool_path) with stdout to DUMP.txt
 * (created 0600, O_EXCL|O_NOFOLLOW), killing it after timeout_ms.  Returns 0 when the report
 * was written, -PTREC_EIO if the tool failed or timed out (a partial .txt may remain).
 * ASYNC-SIGNAL-SAFE (raw fork + execve). */
int ptrec_report_run(const char *dump, unsigned timeout_ms);

/* Writes the one stderr line of a crash or assertion.  ASYNC-SIGNAL-SAFE. */
void ptrec_report_line(const char *what, pid_t tid, const char *dump, int report_ok);

/* ---- safe_str.c (async-signal-safe string helpers) -------------------------------------- */

/* A bounded string builder: appends never overflow; `overflow` is set instead. */
struct ptrec_sbuf {
	char *buf;      /* destination */
	size_t cap;     /* bytes at buf */
	size_t len;     /* bytes used, excluding the NUL */
	int overflow;   /* 1 if something did not fit */
};

void ptrec_sbuf_init(struct ptrec_sbuf *b, char *buf, size_t cap);
void ptrec_sbuf_str(struct ptrec_sbuf *b, const char *s);
void ptrec_sbuf_mem(struct ptrec_sbuf *b, const char *s, size_t n);
void ptrec_sbuf_char(struct ptrec_sbuf *b, char c);
void ptrec_sbuf_dec(struct ptrec_sbuf *b, long long v);
void ptrec_sbuf_udec(struct ptrec_sbuf *b, unsigned long long v);
void ptrec_sbuf_hex(struct ptrec_sbuf *b, unsigned long long v);
size_t ptrec_strlcpy(char *dst, const char *src, size_t cap);
/* Returns the name of a crash signal ("SIGSEGV"), or "signal". */
const char *ptrec_crash_signame(int signo);
/* Reads up to cap-1 bytes of a small file (e.g. /proc/self/comm) into buf, NUL-terminated,
 * trailing newline removed.  Returns the length, or -1. */
long ptrec_read_small_file(const char *path, char *buf, size_t cap);
/* Writes all of buf to fd, retrying short writes and EINTR.  Returns 0 or -1. */
int ptrec_write_all(int fd, const void *buf, size_t len);
/* Writes a string to stderr (fd 2), ignoring errors. */
void ptrec_stderr(const char *s);

#endif
