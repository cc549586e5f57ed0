/* crash.h — the async-signal-safe island's interface: the context the runtime fills at init,
 * the crash signal handlers and the dump owner protocol, the dump writer, where dumps go, and
 * the report child.
 *
 * Everything the island touches is prepared before the handlers are installed (the context
 * below, static buffers, the thread slots of capture/thread_slots.h), so it needs no malloc,
 * stdio, locks or lazy TLS.  The island reads the context and the slots; it never changes the
 * recorder's lifecycle.  Functions marked ASYNC-SIGNAL-SAFE may run in a signal handler. */
#ifndef PTREC_CRASH_H
#define PTREC_CRASH_H

#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "capture/thread_slots.h"
#include "core/report_dirs.h"
#include "dump/dump_format.h"
#include "ptrec.h"

#define PTREC_PATH_MAX 4096                /* paths the crash path builds */
#define PTREC_MAPS_MAX (1u << 20)          /* /proc/self/maps bytes kept in a dump */
#define PTREC_STACK_DUMP (64u << 10)       /* stack bytes kept from SP upwards */
#define PTREC_CODE_DUMP_MAX (16u << 20)    /* total bytes of JIT code kept in a dump */

/* What the island knows of the recorder.  The runtime fills it under its lock before the
 * handlers are installed and does not change it while they are (except the counters it points
 * to and last_report). */
struct ptrec_crash_ctx {
	_Atomic int armed;                        /* 1 between init and shutdown */
	struct ptrec_config cfg;                  /* the configuration in force; its strings point
	                                             into dump_dir and filter below */
	char dump_dir[PTREC_PATH_MAX];            /* cfg.dump_dir copied, "" if unset */
	char filter[1024];                        /* cfg.filter copied, "" if unset */
	char tool_path[PTREC_PATH_MAX];           /* absolute path of the ptrec tool */
	enum ptrec_backend backend;               /* chosen backend id */
	char reason[PTREC_BACKEND_COUNT_][PTREC_REASON_MAX]; /* why each backend was refused */
	uint32_t cpu_family, cpu_model, cpu_stepping; /* CPUID display values */
	uint32_t tsc_ratio_n, tsc_ratio_d;        /* CPUID 15H EBX/EAX (TSC / crystal), 0 = unknown */
	uint32_t nom_freq;                        /* intel_pt caps/max_nonturbo_ratio, 0 = unknown */
	const _Atomic unsigned *threads_untraced; /* the runtime's count of rings never opened */
	char last_report[4096];                   /* path of the last report written */
};

extern struct ptrec_crash_ctx ptrec_crash;

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

/* Forgets a crash begun in the parent: called in a fork child by the runtime. */
void ptrec_crash_reset_after_fork(void);

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
 * -PTREC_EIO if a write failed (the file then holds what was written, without END; errno is
 * the write's error). */
int ptrec_dump_write(const struct ptrec_dump_request *req, int slot);

/* Copies len bytes at addr into dst without faulting (process_vm_readv on the own process).
 * Returns the bytes copied (0 if unreadable).  ASYNC-SIGNAL-SAFE. */
size_t ptrec_safe_copy(void *dst, uint64_t addr, size_t len);

/* ---- dump_path.c ------------------------------------------------------------------------ */

/* Prepares what the crash path needs to place its files, at ptrec_init: the places'
 * environment (the values of $STATE_DIRECTORY, $LOGS_DIRECTORY, $XDG_STATE_HOME and $HOME, each
 * NULL when unset; the runtime reads them with secure_getenv) and a descriptor kept in reserve
 * for the dump. */
void ptrec_crash_prepare(const char *state_dir, const char *logs_dir, const char *xdg_state_home,
                         const char *home);

/* In a fork child: takes the reserved descriptor again if it is gone. */
void ptrec_crash_prepare_after_fork(void);

/* The reserved descriptor, or -1 (tests). */
int ptrec_crash_reserved_fd(void);

/* Chooses the place of a dump (dump_path.c's comment gives the rules: dumpability, real-uid
 * access, places in order, unplantable names), creates it 0600 with O_EXCL|O_NOFOLLOW,
 * reserves DUMP.txt when a report will run, and writes the dump with ptrec_dump_write(req,
 * slot) (req->fd is set here).  A write cut short by ENOSPC/EDQUOT/EFBIG removes both files
 * and tries the next place.  tag is NULL for crashes (the core file's place is tried) or names
 * the event ("snapshot").  Stores the dump's path in dump, or "" when nothing was written
 * (ptrec_dump_failure says why).  Returns 0, -PTREC_EIO (no dump, or a dump that a write
 * failure left without END), or -PTREC_EPERM (the process is not dumpable).
 * ASYNC-SIGNAL-SAFE. */
int ptrec_dump_save(struct ptrec_dump_request *req, int slot, const char *tag, char *dump,
                    size_t dumplen);

/* Why the last ptrec_dump_save of slot wrote nothing ("" if it did).  ASYNC-SIGNAL-SAFE. */
const char *ptrec_dump_failure(int slot);

/* ---- report_child.c -------------------------------------------------------------------- */

/* Runs `ptrec report DUMP` (the tool at ptrec_crash.tool_path) with stdout to DUMP.txt (the
 * file ptrec_report_reserve made, else created 0600, O_EXCL|O_NOFOLLOW) and every other
 * descriptor closed, killing it after timeout_ms (0: runs nothing).  Returns 0 when the report
 * was written, -PTREC_EIO if the tool did not run, failed or timed out: an empty DUMP.txt is
 * then removed, a partial one ends with a line saying it is incomplete.
 * ASYNC-SIGNAL-SAFE (raw fork + execve). */
int ptrec_report_run(const char *dump, unsigned timeout_ms);

/* Creates DUMP.txt (0600, O_EXCL|O_NOFOLLOW) for the next ptrec_report_run of the calling
 * thread's slot.  Returns 0 or -errno (-EEXIST: the name is taken).  ASYNC-SIGNAL-SAFE. */
int ptrec_report_reserve(const char *dump);

/* Closes and removes a DUMP.txt made by ptrec_report_reserve.  ASYNC-SIGNAL-SAFE. */
void ptrec_report_unreserve(const char *dump);

/* Opens the syslog datagram socket for path ($PTREC_SYSLOG; NULL or "" means /dev/log, "none"
 * disables).  Called at ptrec_init. */
void ptrec_syslog_prepare(const char *path);

/* Writes the one line of a crash or assertion to stderr and to the system log: the event,
 * pid, thread (name escaped), and where the dump and report went or why they did not (the
 * outcome of the last ptrec_dump_save and ptrec_report_run of the crash slot).
 * ASYNC-SIGNAL-SAFE. */
void ptrec_report_line(const char *what, pid_t tid, const char *dump, int report_ok);

#endif
