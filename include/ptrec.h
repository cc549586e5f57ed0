/* ptrec.h — the public API of libptrec, an in-process flight recorder.
 *
 * libptrec keeps a circular branch-trace ring per thread (Intel PT through the kernel's perf
 * intel_pt driver, Intel BTS through intel_bts, or an instrumented software ring), freezes the
 * rings when the process crashes or an assertion fails, and writes a raw dump plus a decoded
 * "last N branches" report next to the core file.  ptrec_snapshot() writes the same report for a
 * live process.
 *
 * Conventions
 * - Every function returning int returns 0 (or a non-negative count) on success and a negative
 *   PTREC_E* code on failure; ptrec_strerror() names the code.
 * - A call that is declared here but not implemented in this build returns -PTREC_ENOTIMPL.
 * - Functions marked "async-signal-safe" may be called from a signal handler.
 * - Unless stated, functions are thread-safe.
 */
#ifndef PTREC_H
#define PTREC_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define PTREC_API __attribute__((visibility("default")))
#define PTREC_NORETURN __attribute__((noreturn))
#define PTREC_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define PTREC_API
#define PTREC_NORETURN
#define PTREC_PRINTF(f, a)
#endif

/* PTREC_NO_TRACE: put on a function that the instrumented backend should not record (a hot
 * leaf that fills the ring: `ptrec report` lists the functions that fill it fastest).  Works
 * with every instrumentation `ptrec cflags` prints (GCC and Clang patchable entries, GCC
 * -pg/-mfentry and -finstrument-functions, Clang -finstrument-functions-after-inlining); no
 * effect on PT/BTS.  Without a rebuild, the environment variable of the same name names such
 * functions at run time for patchable-entry builds: PTREC_NO_TRACE="zfree,zmalloc" leaves their
 * entries unpatched at ptrec_init (libptrec(3)). */
#if defined(__GNUC__) && defined(__has_attribute)
#if __has_attribute(patchable_function_entry)
#define PTREC_NO_TRACE __attribute__((no_instrument_function, patchable_function_entry(0, 0)))
#endif
#endif
#if defined(__GNUC__) && !defined(PTREC_NO_TRACE)
#define PTREC_NO_TRACE __attribute__((no_instrument_function))
#elif !defined(PTREC_NO_TRACE)
#define PTREC_NO_TRACE
#endif

/* ---- Version ---------------------------------------------------------------------------- */

#define PTREC_VERSION_MAJOR 0
#define PTREC_VERSION_MINOR 1
#define PTREC_VERSION_PATCH 0

/* Returns the library's version string, e.g. "0.1.0".  Never NULL. */
PTREC_API const char *ptrec_version(void);

/* ---- Errors ----------------------------------------------------------------------------- */

/* Error codes.  Functions return their negation (-PTREC_EINVAL, ...). */
enum ptrec_error {
	PTREC_OK = 0,         /* success */
	PTREC_EINVAL,         /* an argument or configuration value is invalid */
	PTREC_ENOMEM,         /* out of memory, or the memory budget is exhausted */
	PTREC_ENOTIMPL,       /* declared in the API but not implemented in this build */
	PTREC_ENOSUPP,        /* the requested backend or feature is not available here */
	PTREC_EPERM,          /* the kernel refused for lack of privilege (perf_event_paranoid, caps) */
	PTREC_EBUSY,          /* the resource is in use (another PT user, a dump in progress) */
	PTREC_EIO,            /* a read or write failed (errno is preserved) */
	PTREC_EFORMAT,        /* input bytes are malformed (bad packet, bad ELF, bad dump) */
	PTREC_ETRUNC,         /* input ends in the middle of an item */
	PTREC_ESTATE,         /* wrong state: not initialized, already initialized, not attached */
	PTREC_ERATE,          /* refused by the snapshot rate limit or file cap */
	PTREC_ENOSYNC,        /* no synchronisation point (PSB) found in a trace */
	PTREC_ENOMAP,         /* an address is not covered by the code image */
	PTREC_EOVERFLOW,      /* an internal buffer overflowed or the hardware reported overflow */
	PTREC_EEOS,           /* end of stream: nothing more to decode */
	PTREC_ERROR_COUNT_    /* number of codes; not an error */
};

/* Returns a short English description of error code err (either sign).  Never NULL; unknown
 * codes yield "unknown error".  Async-signal-safe. */
PTREC_API const char *ptrec_strerror(int err);

/* ---- Backends --------------------------------------------------------------------------- */

/* Where branch history comes from. */
enum ptrec_backend {
	PTREC_BACKEND_AUTO = 0,      /* intel_pt, then intel_bts, then instrumented, else none */
	PTREC_BACKEND_NONE,          /* no history: reports still carry registers and a backtrace */
	PTREC_BACKEND_INTEL_PT,      /* Intel Processor Trace via the perf intel_pt PMU */
	PTREC_BACKEND_INTEL_BTS,     /* Branch Trace Store via the perf intel_bts PMU */
	PTREC_BACKEND_INSTRUMENTED,  /* -finstrument-functions / -fsanitize-coverage=trace-pc hooks */
	PTREC_BACKEND_COUNT_         /* number of backends; not a backend */
};

/* Returns the backend's name as used by PTREC_BACKEND ("auto", "none", "intel_pt",
 * "intel_bts", "instrumented"), or "unknown".  Never NULL. */
PTREC_API const char *ptrec_backend_name(enum ptrec_backend backend);

/* Parses a backend name as written by ptrec_backend_name().  Returns the backend (>= 0) or
 * -PTREC_EINVAL. */
PTREC_API int ptrec_backend_parse(const char *name);

/* ---- Configuration ---------------------------------------------------------------------- */

/* Flags for ptrec_config.flags. */
#define PTREC_F_NO_SIGNALS    0x1u /* do not install crash handlers; the application calls
                                      ptrec_crash_dump() from its own handlers */
#define PTREC_F_NO_FORK_RINGS 0x2u /* fork children run untraced instead of getting fresh rings */
#define PTREC_F_NO_REPORT     0x4u /* write the raw dump only; decode later with `ptrec report` */
#define PTREC_F_NO_THREADS    0x8u /* do not attach threads created after init automatically */
#define PTREC_F_SOFT_TIME     0x10u /* instrumented backend: a TSC time in every call/return/edge
                                       record (one rdtsc per hook: measure with bench_overhead;
                                       markers always carry the time) */
#define PTREC_F_DUMP_FIRST    0x100u /* PTREC_CHAIN=first: write the dump at the first crash
                                      signal, before the application's own handler runs (default,
                                      PTREC_CHAIN=dying: only when that handler lets the process
                                      die; doc/recorder.md) */
#define PTREC_F_MINIDUMP      0x200u /* PTREC_MINIDUMP=1: the report child also writes DUMP.dmp,
                                      a Breakpad minidump (`ptrec minidump`, doc/minidump.md),
                                      after the crash report, within report_timeout_ms; never
                                      in the crashing process */

/* Recorder configuration.  Initialize with ptrec_config_init(), then change fields.
 * Every field has an environment variable that ptrec_config_init() reads (with secure_getenv). */
struct ptrec_config {
	size_t struct_size;          /* sizeof(struct ptrec_config), set by ptrec_config_init */
	enum ptrec_backend backend;  /* PTREC_BACKEND: which backend (default auto) */
	size_t ring_size;            /* PTREC_RING_SIZE: bytes per thread ring, a power of two
	                                multiple of 4 KiB, 4 KiB..128 MiB (default 64 KiB);
	                                accepts K/M suffixes in the environment */
	size_t memory_budget;        /* PTREC_MEMORY: total bytes for all rings (default 64 MiB);
	                                threads beyond it get smaller rings, then run untraced */
	const char *dump_dir;        /* PTREC_DIR: the first place tried for crash files (then
	                                next to the core file, $STATE_DIRECTORY,
	                                $LOGS_DIRECTORY, the cwd, ~/.local/state/ptrec,
	                                /var/tmp, /tmp: README "Where reports go") */
	unsigned report_branches;    /* PTREC_BRANCHES: branches shown per thread (default 64) */
	unsigned report_timeout_ms;  /* PTREC_REPORT_TIMEOUT_MS: bound on crash-time decoding
	                                (default 10000, at least 100); 0 decodes nothing at
	                                crash time.  The raw dump is kept either way; a report
	                                cut short is removed when empty, else ends with a line
	                                saying it is incomplete */
	unsigned snapshot_interval_ms; /* PTREC_SNAPSHOT_INTERVAL_MS: minimum time from the end of
	                                  one snapshot to the next (default 1000) */
	unsigned snapshot_max_files; /* PTREC_SNAPSHOT_MAX: snapshots written per process
	                                (default 16) */
	const char *filter;          /* PTREC_FILTER: intel_pt address filter in perf syntax
	                                (e.g. "filter * @ /usr/bin/server"); NULL = trace all */
	unsigned flags;              /* PTREC_FLAGS: PTREC_F_* bits */
};

/* Fills cfg with defaults overridden by the PTREC_* environment variables.  An invalid
 * environment value keeps the default; it is said once per process on stderr ("ptrec: invalid
 * settings ignored: ...") and in ptrec_status().settings_problems.  Returns 0 or -PTREC_EINVAL
 * if cfg is NULL. */
PTREC_API int ptrec_config_init(struct ptrec_config *cfg);

/* ---- Lifecycle -------------------------------------------------------------------------- */

/* Starts the recorder: chooses the backend, attaches the calling thread, installs crash handlers
 * (unless PTREC_F_NO_SIGNALS) and prepares every buffer the crash path needs.  cfg == NULL means
 * ptrec_config_init() defaults.  A backend that cannot start never fails the application: the
 * recorder falls back (auto) and keeps the reason, see ptrec_status().
 * Returns 0, -PTREC_ESTATE if already initialized, -PTREC_EINVAL for a bad cfg, or
 * -PTREC_ENOSUPP if an explicitly requested backend is unavailable. */
PTREC_API int ptrec_init(const struct ptrec_config *cfg);

/* Stops recording, detaches all threads, restores the previous signal handlers and frees all
 * memory.  Returns 0 or -PTREC_ESTATE if not initialized. */
PTREC_API int ptrec_shutdown(void);

/* ---- Threads ---------------------------------------------------------------------------- */

/* Attaches the calling thread: opens its ring and installs its sigaltstack (unless it has one),
 * so a stack overflow in it is reported, and moves the fault signals it blocks in the kernel to
 * libptrec's virtual mask (read back as blocked), so a fault in it is reported.  Threads created with pthread_create after ptrec_init
 * are attached automatically; threads that existed before call this (ptrec_status lists the
 * threads still without an alternate stack).  Returns 0 (also when already attached, or when the thread runs untraced because
 * the budget is exhausted), or -PTREC_ESTATE if the recorder is not initialized. */
PTREC_API int ptrec_thread_attach(void);

/* Detaches the calling thread and frees its ring.  Called automatically at thread exit.
 * Returns 0 or -PTREC_ESTATE if the thread is not attached. */
PTREC_API int ptrec_thread_detach(void);

/* ---- Snapshots -------------------------------------------------------------------------- */

/* Freezes all rings, copies them, re-enables recording and queues the copies; the recorder's
 * own thread (started at the first snapshot) writes the dump where a crash's would go and
 * starts `ptrec report` in a process the application never sees (no SIGCHLD, invisible to
 * waitpid(-1), no inherited descriptors).  The caller pays only for freezing and copying the
 * rings; each other thread is stalled only while its own ring is copied.  reason (may be NULL)
 * is stored in the report, with the calling thread as the one who asked.  If path is not NULL,
 * the call also waits until the dump is written (not for the report) and stores the path the
 * report will have there (NUL-terminated, truncated to pathlen); the report exists once
 * ptrec_snapshot_flush() returned.
 * Returns 0 (queued), -PTREC_ERATE when the rate limit, the file cap or a full queue
 * (PTREC_SNAPSHOT_QUEUE pending snapshots) refuses (counted as dropped in ptrec_status),
 * -PTREC_EBUSY during a crash dump, -PTREC_ESTATE if not initialized, -PTREC_ENOMEM if the
 * copies could not be allocated; with path: -PTREC_EPERM if the process is not dumpable
 * (PR_GET_DUMPABLE, as for a crash), -PTREC_EIO if no file could be written. */
PTREC_API int ptrec_snapshot_path(const char *reason, char *path, size_t pathlen);

/* ptrec_snapshot_path(reason, NULL, 0). */
PTREC_API int ptrec_snapshot(const char *reason);

/* Snapshots waiting for the recorder thread at most (more are refused with -PTREC_ERATE). */
#define PTREC_SNAPSHOT_QUEUE 4

/* Waits until every queued snapshot's dump is written and its report finished (or timed
 * out), at most timeout_ms.  Pending snapshots are also finished by ptrec_shutdown and at
 * exit().  Returns 0 (nothing pending), -PTREC_EBUSY on timeout, -PTREC_ESTATE if not
 * initialized. */
PTREC_API int ptrec_snapshot_flush(unsigned timeout_ms);

/* ---- Latency watches and markers -------------------------------------------------------- */

/* A watched span.  Lives on the caller's stack (or anywhere) between ptrec_watch_begin and
 * ptrec_watch_end; the fields are the library's. */
struct ptrec_watch {
	const char *name;     /* the span's name (a string that outlives the span) */
	uint64_t budget_ns;   /* its budget */
	uint64_t start_ns;    /* CLOCK_MONOTONIC_COARSE at begin */
	uint64_t mark;        /* the begin marker's value (the end marker is mark + 1) */
	unsigned flags;       /* PTREC_WATCH_* */
	uint64_t begin_tsc;   /* TSC at begin when the span is placed by time (intel_pt without
	                         PTWRITE), else 0 */
};

/* Flags for ptrec_watch_begin_flags. */
#define PTREC_WATCH_ALL_THREADS 0x1u /* over budget: snapshot every thread, not only the
                                        calling one */

/* Starts a watched span on the calling thread: notes the time and puts a begin marker into
 * the thread's branch history.  When ptrec_watch_end finds that the span took longer than
 * budget_ns, the calling thread's ring is snapshotted (queued like ptrec_snapshot) and its
 * report is cut to the span: only the branches between the begin and end markers, with both
 * marked, and the span's name, duration and budget in the report's header (text, JSON and
 * trace-event output).  On Intel PT without PTWRITE no marker can be written: the watch reads
 * the TSC at begin and end instead, and the report keeps the branches whose trace times lie
 * between the two (the header says the span was placed by time, and how exactly).  name must
 * outlive the span; it also keys the rate limit: at most one snapshot per name per
 * snapshot_interval_ms (the global interval does not apply to watches; snapshot_max_files
 * does).  Spans nest (each has its own markers) and run concurrently on
 * different threads.  Time is CLOCK_MONOTONIC_COARSE (a few ns to read; its resolution, often
 * 1-4 ms, bounds how exactly a span near its budget is judged).  Untriggered, a begin+end pair
 * costs tens of nanoseconds (bench/bench_watch).  Does nothing when the recorder is not
 * initialized.  Async-signal-safe (ptrec_watch_end is not when it snapshots). */
PTREC_API void ptrec_watch_begin(struct ptrec_watch *w, const char *name, uint64_t budget_ns);

/* ptrec_watch_begin with PTREC_WATCH_* flags. */
PTREC_API void ptrec_watch_begin_flags(struct ptrec_watch *w, const char *name,
                                       uint64_t budget_ns, unsigned flags);

/* Ends the span begun on w by the calling thread: puts the end marker and, if the span took
 * longer than its budget, queues the snapshot.  Returns the span's duration in nanoseconds
 * (at the clock's resolution); -PTREC_ERATE is not reported: a refused snapshot is counted as
 * dropped in ptrec_status.  Returns 0 if the recorder is not initialized. */
PTREC_API uint64_t ptrec_watch_end(struct ptrec_watch *w);

/* Marker values with bits 36..47 equal to this tag and bits 48..63 zero are the watches' own
 * begin/end markers (value >> 36 == PTREC_MARK_WATCH_TAG). */
#define PTREC_MARK_WATCH_TAG 0xb7aull

/* Puts a marker with value into the calling thread's branch history, in its place among the
 * branches: a PTWRITE on Intel PT when the CPU enumerates it (CPUID.(EAX=14H,ECX=0):EBX[4])
 * and the kernel's intel_pt PMU has the `ptw` format bit, otherwise a marker record in the
 * instrumented ring.  Reports show it as a "mark" event with the value.  Does nothing on
 * intel_bts, on intel_pt without PTWRITE, without a ring, or before ptrec_init.  Async-signal-safe, lock-free. */
PTREC_API void ptrec_mark(uint64_t value);

/* ---- Crashes ---------------------------------------------------------------------------- */

/* Crash-dump entry point for applications that own their signal handlers (PTREC_F_NO_SIGNALS):
 * call it first thing from a SA_SIGINFO handler with the handler's arguments.  Freezes all
 * rings, writes the dump and the report (bounded by report_timeout_ms) and returns; the caller
 * then decides how to die.  Only one dump is written per process crash: later calls return
 * -PTREC_EBUSY.  Async-signal-safe.  Returns 0, -PTREC_EBUSY, -PTREC_ESTATE, or -PTREC_EIO. */
PTREC_API int ptrec_crash_dump(int signo, siginfo_t *info, void *ucontext);

/* Called by PTREC_ASSERT on failure: freezes, dumps, reports (with the expression, location and
 * formatted message), then calls abort().  fmt may be NULL. */
PTREC_API PTREC_NORETURN void ptrec_assert_fail(const char *expr, const char *file, int line,
                                                const char *func, const char *fmt, ...)
	PTREC_PRINTF(5, 6);

/* Checks expr; when false, records a crash dump and report, then aborts. */
#define PTREC_ASSERT(expr) \
	((expr) ? (void)0 : ptrec_assert_fail(#expr, __FILE__, __LINE__, __func__, NULL))

/* Like PTREC_ASSERT, with a printf-style message stored in the report. */
#define PTREC_ASSERT_MSG(expr, ...) \
	((expr) ? (void)0 : ptrec_assert_fail(#expr, __FILE__, __LINE__, __func__, __VA_ARGS__))

/* ---- Status ----------------------------------------------------------------------------- */

#define PTREC_REASON_MAX 192
#define PTREC_NOT_RECORDING_MAX 1024

/* What the recorder is doing and why.  Filled by ptrec_status(). */
struct ptrec_status {
	size_t struct_size;               /* set by the caller to sizeof(struct ptrec_status) */
	int initialized;                  /* 1 between ptrec_init and ptrec_shutdown */
	enum ptrec_backend backend;       /* backend in use (NONE if none could start) */
	size_t ring_size;                 /* configured bytes per thread ring */
	size_t memory_used;               /* bytes of rings currently allocated */
	unsigned threads_attached;        /* threads with a ring */
	unsigned threads_untraced;        /* attached threads running without a ring */
	unsigned snapshots_written;       /* snapshot dumps written so far (by the recorder
	                                     thread; requested = written + dropped + pending) */
	char reason[PTREC_BACKEND_COUNT_][PTREC_REASON_MAX];
	/* per backend: why it was rejected or failed ("" if it was not tried or works) */
	char last_report[4096];           /* path of the last report written, or "" */
	char settings_problems[1024];     /* invalid PTREC_* values ignored (default kept), "" if
	                                     none: "NAME=VALUE: why, default kept; ..." */
	unsigned threads_no_altstack;     /* threads of the process without an alternate signal
	                                     stack (never attached, or none could be made): a
	                                     stack overflow there kills the process unreported */
	char no_altstack_tids[256];       /* their thread ids, space-separated (may be cut) */
	unsigned threads_via_helper;      /* threads whose perf ring ptrec-helper opened because the
	                                     kernel refused this process (ptrec-helper(8)); the
	                                     other threads_attached rings were opened directly */
	unsigned snapshots_requested;     /* ptrec_snapshot calls and triggered watches */
	unsigned snapshots_dropped;       /* of those, refused (rate limit, file cap, full
	                                     queue, no memory) */
	char not_recording[PTREC_NOT_RECORDING_MAX];
	/* "" while branch history is recorded in the thread that called ptrec_init, or when
	 * PTREC_BACKEND=none asked for nothing; else why nothing is recorded and the fix, the
	 * text of the line ptrec_init wrote on stderr and to the system log ("ptrec: " and this) */
	char patched_entries[192];        /* GCC's `ptrec cflags` build: how many patchable
	                                     function entries were made to call the entry hook
	                                     at init, or why not; "" when the program has none
	                                     (doc/instrumented.md) */
};

/* Fills st (st->struct_size must be set).  Works before init (initialized = 0).
 * Returns 0 or -PTREC_EINVAL. */
PTREC_API int ptrec_status(struct ptrec_status *st);

#ifdef __cplusplus
}
#endif

#endif /* PTREC_H */
