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
#include <ucontext.h>

#include "capture/thread_slots.h"
#include "core/report_dirs.h"
#include "dump/dump_format.h"
#include "ptrec.h"

#define PTREC_PATH_MAX 4096                /* paths the crash path builds */
#define PTREC_MAPS_MAX (1u << 20)          /* /proc/self/maps bytes kept in a dump */
#define PTREC_STACK_DUMP (64u << 10)       /* stack bytes kept from SP upwards */
#define PTREC_CODE_DUMP_MAX (16u << 20)    /* total bytes of JIT code kept in a dump */
#define PTREC_TASK_STACK_DUMP (32u << 10)  /* stack bytes kept from SP upwards of each other
                                              thread blocked in the kernel (TASK records) */
#define PTREC_TASK_STACKS_MAX (4u << 20)   /* total of those in a dump */

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

/* Installs the crash handlers; the previous actions become the application's chained ones
 * (crash_chain.c).  Returns 0 or -PTREC_EINVAL. */
int ptrec_signals_install(void);

/* Gives the kernel the application's actions back (where libptrec's handler is still in place). */
void ptrec_signals_restore(void);

/* The dump owner protocol: 0 free, else the tid of the thread writing the one dump of this
 * process crash.  ASYNC-SIGNAL-SAFE. */
extern _Atomic int ptrec_crash_owner;
extern _Atomic int ptrec_crash_done;

/* Pins and freezes every attached thread's ring, the caller's first, and lists the pinned
 * slots in list (PTREC_MAX_THREADS entries); threads that exited while a crash signal was
 * being handled (slots EXITED) are listed too, their rings as they left them.  Returns how many were listed.  The slots stay
 * pinned (a crash never unpins).  ASYNC-SIGNAL-SAFE. */
unsigned ptrec_freeze_all(struct ptrec_thread **list);

/* Writes the one dump and report of this process crash or assertion; the caller must own the
 * dump (ptrec_crash_owner == its tid).  Marks ptrec_crash_done.  Returns 0 or -PTREC_EIO.
 * ASYNC-SIGNAL-SAFE. */
int ptrec_crash_dump_owned(int signo, const siginfo_t *info, const void *ucontext,
                           enum ptrec_dump_event event, const char *reason);

/* Maps, at ptrec_init, the stack ptrec_crash_dump_owned writes the dump on (whatever stack the
 * crash signal came on).  Idempotent; without it the dump is written on the stack at hand. */
void ptrec_crash_stack_prepare(void);

/* Marks the calling thread as libptrec's own (the snapshot writer): a crash signal sent to the
 * process (kill, sigqueue) that the kernel gives it (its mask cannot block the fault signals)
 * is blocked there and sent to the process again, so another thread takes it or it waits, and
 * the application's handlers never run on libptrec's thread.  Its own faults and aborts are
 * crashes as in any thread. */
void ptrec_crash_own_thread(void);

/* Forgets a crash begun in the parent: called in a fork child by the runtime (the child's
 * state is its own copy from then on). */
void ptrec_crash_reset_after_fork(void);

/* 1 in a process that shares the memory of the one libptrec's state belongs to but is another
 * (a vfork or posix_spawn child before its exec, no fork handlers run): there the interposed
 * functions pass through to libc (the child's actions and mask are its own, the stored ones
 * its parent's), the application's action of a crash signal acts natively, and a crash that
 * kills the child leaves its dump with the shared state put back after.  One getpid system
 * call.  ASYNC-SIGNAL-SAFE. */
int ptrec_crash_foreign(void);

/* 1 when info says the signal was sent to the process (kill, sigqueue: SI_USER, SI_QUEUE), not
 * to a thread and not by the kernel for a fault.  ASYNC-SIGNAL-SAFE. */
static inline int ptrec_sent_to_process(const siginfo_t *info)
{
	return info && (info->si_code == SI_USER || info->si_code == SI_QUEUE);
}

/* ---- crash_chain.c --------------------------------------------------------------------- */

#define PTREC_NCRASH 7 /* SIGSEGV SIGBUS SIGILL SIGFPE SIGABRT SIGTRAP SIGSYS */

/* The crash signals, in the order of the indexes below. */
extern const int ptrec_crash_signals[PTREC_NCRASH];

/* glibc's sigaction (found past any interposer by the runtime), used to change the kernel's
 * disposition.  Set before ptrec_signals_install. */
typedef int (*ptrec_sigaction_fn)(int, const struct sigaction *, struct sigaction *);
extern ptrec_sigaction_fn ptrec_real_sigaction;

/* Index of signo in ptrec_crash_signals, or -1.  ASYNC-SIGNAL-SAFE. */
int ptrec_chain_index(int signo);

/* Index of signo when libptrec's handler holds it in the kernel and the application's action
 * is kept by the chain instead; else -1.  ASYNC-SIGNAL-SAFE. */
int ptrec_chain_managed(int signo);

/* Copies the application's action for crash signal index i.  ASYNC-SIGNAL-SAFE. */
void ptrec_chain_get(int i, struct sigaction *out);

/* Keeps act as the application's action for index i, as the kernel would keep it (SA_RESTORER
 * and glibc's restorer added, SIGKILL and SIGSTOP dropped from the mask); raw = 1 stores act
 * as given (an action read back from the kernel).  ASYNC-SIGNAL-SAFE. */
void ptrec_chain_set(int i, const struct sigaction *act, int raw);

/* Learns glibc's restorer from an action read back from the kernel. */
void ptrec_chain_learn_restorer(const struct sigaction *readback);

/* Starts (1) or stops (0) keeping the application's actions. */
void ptrec_chain_manage(int on);

/* 0 = the handler returned; -1 = the kernel could not have run it (its stack overflowed and
 * it has no alternate stack), the caller must let the signal kill the process. */
struct ptrec_chain_stack {
	uintptr_t lo, hi;   /* stack range the application's handler runs in */
};

/* Runs the application's action act (a handler) for signal index i the way the kernel would:
 * SA_SIGINFO or not, its sa_mask and SA_NODEFER (crash signals it blocks are blocked
 * virtually: a fault there kills, a sent one waits, so a fault never bypasses libptrec),
 * SA_RESETHAND, and SA_ONSTACK: on the application's alternate stack when it asked for one and
 * has one, on libptrec's (below our frame) when the thread has none of its own (a runtime may
 * have taken libptrec's as its own: Go), else on the interrupted stack.  Fills *where.  Returns 0 when
 * the handler returned, -1 when the interrupted stack overflowed and the application has no
 * alternate stack (the kernel would have killed the process).  ASYNC-SIGNAL-SAFE. */
int ptrec_chain_run(int i, const struct sigaction *act, int signo, siginfo_t *info,
                    ucontext_t *uc, struct ptrec_chain_stack *where);

/* 1 if crash signal index i is blocked virtually on this thread (inside an application
 * handler whose mask holds it); a sent one (info as it came) is then remembered by
 * ptrec_chain_defer and sent again to the thread, with its siginfo, when unblocked.
 * ASYNC-SIGNAL-SAFE. */
int ptrec_chain_blocked(int i);
void ptrec_chain_defer(int i, const siginfo_t *info);

/* The calling thread is ending (its last destructors run): its application handler levels are
 * left, and signals it holds back are treated as the kernel treats a dying thread's pending
 * signals: those sent to the thread (tgkill, raise, pthread_kill) are dropped, those sent to
 * the process (kill, sigqueue: SI_USER, SI_QUEUE) are sent to the process again, blocked on
 * this thread in the kernel first, so another thread takes them or they wait until one
 * unblocks them.  ASYNC-SIGNAL-SAFE. */
void ptrec_chain_exiting(void);

/* The thread's signal mask, for the interposed sigprocmask/pthread_sigmask: the fault signals
 * (every crash signal but SIGABRT) are blocked virtually, never in the kernel, which would
 * otherwise kill at a fault with SIG_DFL, past libptrec.  ptrec_chain_strip removes them from
 * set and returns the bits (by index) of every crash signal set held; ptrec_chain_unstrip adds
 * bits back; ptrec_chain_mask applies how (SIG_BLOCK, SIG_UNBLOCK, SIG_SETMASK) with bits to
 * the virtual mask, sends again signals sent while blocked that it unblocks, and returns the
 * virtual mask before; ptrec_chain_thread_mask is the mask a new thread inherits.
 * ASYNC-SIGNAL-SAFE. */
unsigned ptrec_chain_strip(sigset_t *set);
void ptrec_chain_unstrip(sigset_t *set, unsigned bits);
unsigned ptrec_chain_mask(int how, unsigned bits);
unsigned ptrec_chain_thread_mask(void);

/* Called at a crash signal with its context: when the thread's mask (uc_sigmask, as it was
 * interrupted) lacks a signal the kernel's held after the thread's last change through
 * libptrec, outside any application handler, the thread changed it with the raw system call
 * (Go's runtime sets each new thread's mask so, after cgo's pthread_sigmask blocked every
 * signal around pthread_create): the fault signals the kernel's mask does not hold are then
 * unblocked virtually too, as the kernel's mask says.  ASYNC-SIGNAL-SAFE. */
void ptrec_chain_mask_check(const ucontext_t *uc);

/* Calls fn(arg) with the stack pointer at top (aligned down to 16), then returns normally;
 * unwinders walk through it (frame pointer and CFI).  ASYNC-SIGNAL-SAFE. */
void ptrec_call_on_stack(uintptr_t top, void (*fn)(void *), void *arg);

/* Forgets the application handlers of this thread that sp lies outside of (left with
 * siglongjmp): the virtual mask is again the one before them.  ASYNC-SIGNAL-SAFE. */
void ptrec_chain_left(uintptr_t sp);

/* rt_sigprocmask on the calling thread, past any interposer.  ASYNC-SIGNAL-SAFE. */
int ptrec_kernel_sigmask(int how, const sigset_t *set, sigset_t *old);

/* sigaltstack on the calling thread, past the interposer (runtime/signal_interpose.c).  Returns
 * 0 or -1 with errno.  ASYNC-SIGNAL-SAFE. */
int ptrec_kernel_sigaltstack(const stack_t *ss, stack_t *old);

/* Called by the interposed longjmp family with the stack pointer it jumps to: when that lies
 * outside the application's crash handlers running on this thread, they are left (the mask
 * they added goes, the episode ends and the hooks record again).  ASYNC-SIGNAL-SAFE. */
void ptrec_crash_longjmp(uintptr_t sp);

/* Called from the thread's exit destructor: the application's handlers running on it are left
 * as by a jump above every frame (ptrec_crash_longjmp), its held-back signals handled as by
 * ptrec_chain_exiting.  ASYNC-SIGNAL-SAFE. */
void ptrec_crash_thread_exit(void);

/* Called by the interposed exit functions: when the calling thread is inside the application's
 * handler of a crash, writes the dump (the first fault's) before the process exits.
 * ASYNC-SIGNAL-SAFE. */
void ptrec_crash_exiting(void);

/* Called when the process exits (the interposed exit functions, and libptrec's destructor for
 * a return from main): while another thread writes the dump of a crash, waits until it ends
 * the process, as the crash signal would have at once without libptrec (a worker's crash
 * during shutdown must not become exit status 0 with its report cut short).  The wait is
 * bounded: the report timeout plus 10 s, and 1 s after the dump is done.  ASYNC-SIGNAL-SAFE. */
void ptrec_crash_exit_wait(void);

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
	const struct ptrec_dump_watch *watch; /* a watch's span (WATCH record), or NULL */
	const void *stack_copy;        /* stack bytes copied at snapshot time, or NULL: the live
	                                  stack from the ucontext's SP is written */
	uint64_t stack_addr;           /* address stack_copy was copied from */
	size_t stack_len;              /* bytes at stack_copy */
};

/* Writes a whole dump (doc/dump-format.md) to req->fd with async-signal-safe calls only,
 * using the static buffers of `slot` (0 for crash/assert, 1 for snapshots).  Returns 0, or
 * -PTREC_EIO if a write failed (the file then holds what was written, without END; errno is
 * the write's error). */
int ptrec_dump_write(const struct ptrec_dump_request *req, int slot);

/* Reads what the dump of `slot` needs a descriptor for besides its own (/proc/self/maps,
 * comm, cmdline and the status of thread tid) before that file is made, so that with no
 * descriptor free the reserved one serves them first and the dump then takes its number.
 * ptrec_dump_write does it when nobody did.
 * When the maps text does not fit its buffer, data mappings without a file go first (the
 * STATUS record counts them); the stack at ucontext's SP is kept.  ASYNC-SIGNAL-SAFE. */
void ptrec_dump_prepare(int slot, pid_t tid, const void *ucontext);

/* Reads /proc/self/auxv for every later dump's SYSFILE record (at ptrec_init: it never
 * changes, and a process that changes its root later still has it). */
void ptrec_dump_prepare_auxv(void);

/* In the report child of `slot`, after the dump was written: appends the host's SYSFILE
 * records (/proc/cpuinfo cut to whole processor entries within PTREC_SYSFILE_CPUINFO_MAX,
 * /etc/lsb-release, /etc/os-release or /usr/lib/os-release, uname) and an END record to the dump at
 * path.  Regular files only.  A write that fails truncates the dump back to what it was.
 * Returns 0 or -PTREC_EIO.  ASYNC-SIGNAL-SAFE. */
int ptrec_dump_append_host(int slot, const char *dump);

/* One file of the host: its SYSFILE kind, its path, the bytes kept (at most
 * PTREC_SYSFILE_CPUINFO_MAX). */
struct ptrec_host_file {
	uint32_t kind;    /* enum ptrec_dump_sysfile_kind */
	const char *path; /* NULL ends a table */
	size_t cap;       /* bytes kept */
};

/* The table ptrec_dump_append_host reads, in order: a kind already read is not read again
 * (/usr/lib/os-release only when there is no /etc/os-release). */
extern const struct ptrec_host_file ptrec_host_files[];

/* ptrec_dump_append_host with the files of table files (tests).  ASYNC-SIGNAL-SAFE. */
int ptrec_dump_append_files(int slot, const char *dump, const struct ptrec_host_file *files);

/* Copies len bytes at addr into dst without faulting (process_vm_readv on the own process;
 * where it does not exist, ENOSYS under qemu-user, write(2) of the bytes into a pipe made for
 * the call).  Returns the bytes copied (0 if unreadable).  ASYNC-SIGNAL-SAFE. */
size_t ptrec_safe_copy(void *dst, uint64_t addr, size_t len);

/* The program's path (readlink of /proc/thread-self/exe, else /proc/self/exe: once the main
 * thread has ended with pthread_exit, /proc/self names the zombie leader, whose exe, maps and
 * memory are gone), NUL-terminated in buf ("" when unknown).  ASYNC-SIGNAL-SAFE. */
void ptrec_self_exe(char *buf, size_t len);

/* ---- task_syscall.c --------------------------------------------------------------------- */

/* Reads /proc/self/task/TID/syscall of a thread of this process into *t (zeroed first, tid
 * set): its state, and for a thread blocked in the kernel the system call, SP and PC.  A file
 * that cannot be opened or read, or says something else, gives PTREC_TASK_UNREADABLE with
 * t->err (EBADMSG: not understood).  The descriptor is closed again.  ASYNC-SIGNAL-SAFE. */
void ptrec_task_read(pid_t tid, struct ptrec_dump_task *t);

/* Parses the file's text (len bytes, not NUL-terminated) into t's state, nr, args, sp and pc.
 * Returns 0, or -1 (t->state PTREC_TASK_UNREADABLE) when it is not one of the three forms.
 * Pure; ASYNC-SIGNAL-SAFE. */
int ptrec_task_parse(const char *text, size_t len, struct ptrec_dump_task *t);

/* ---- dump_path.c ------------------------------------------------------------------------ */

/* Prepares what the crash path needs to place its files, at ptrec_init: the places'
 * environment (the values of $STATE_DIRECTORY, $LOGS_DIRECTORY, $XDG_STATE_HOME and $HOME, each
 * NULL when unset; the runtime reads them with secure_getenv), a descriptor kept in reserve
 * for the dump, and whether /tmp and /var/tmp are a systemd unit's private ones (read once from
 * /proc/self/mountinfo). */
void ptrec_crash_prepare(const char *state_dir, const char *logs_dir, const char *xdg_state_home,
                         const char *home);

/* In a fork child: takes the reserved descriptor again if it is gone. */
void ptrec_crash_prepare_after_fork(void);

/* open(path, flags, mode); with no descriptor free (EMFILE), the reserved one is closed and the
 * open retried (its number is free again once the caller closes the file), and then, when
 * every number below the soft RLIMIT_NOFILE is still taken, the file is opened by a child
 * sharing the descriptor table (clone, no exit signal) that raises only its own soft limit to
 * the hard one: the descriptor lies above the application's soft limit, which is never
 * changed.  ASYNC-SIGNAL-SAFE. */
int ptrec_crash_open(const char *path, int flags, mode_t mode);

/* ptrec_crash_open(path, O_RDONLY | O_CLOEXEC, 0).  ASYNC-SIGNAL-SAFE. */
int ptrec_crash_open_read(const char *path);

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

/* "/tmp" or "/var/tmp" when dump lies right in that directory (not in a folder under it, which
 * PTREC_DIR or the cwd chose) and, as ptrec_init found it, the directory is a systemd unit's
 * private one (PrivateTmp=, implied by DynamicUser=): systemd
 * removes it, the dump with it, when the unit stops, and the host's own /tmp or /var/tmp does
 * not show it.  NULL otherwise.  ASYNC-SIGNAL-SAFE. */
const char *ptrec_dump_private_dir(const char *dump);

/* Why the last ptrec_dump_save of slot wrote nothing ("" if it did).  ASYNC-SIGNAL-SAFE. */
const char *ptrec_dump_failure(int slot);

/* ---- new_root.c ------------------------------------------------------------------------ */

/* Notes, at ptrec_init, which directory is the root ("/"), to tell later whether the process
 * changed it. */
void ptrec_root_prepare(void);

/* Called by the interposed chroot: before libc's (changed = 0), opens /proc/self/maps and keeps
 * it (the new root rarely has /proc) and remembers the program's path; after a chroot that
 * succeeded (changed = 1), remembers host_root, the new root as the host sees it (NULL or "/"
 * when unknown or unchanged).  Not called in a signal handler. */
void ptrec_root_note(const char *host_root, int changed);

/* The new root as the host sees it, "" when the process never called chroot after ptrec_init
 * (or it could not be named).  ASYNC-SIGNAL-SAFE. */
const char *ptrec_root_host(void);

/* 1 when the process's root directory is no longer the one of ptrec_init (a chroot seen by the
 * interposer, or "/" is another directory now: a raw system call).  ASYNC-SIGNAL-SAFE. */
int ptrec_root_changed(void);

/* path (a host path from the environment of ptrec_init) as seen inside the new root: the part
 * after the new root when path lies under it, else path itself.  ASYNC-SIGNAL-SAFE. */
const char *ptrec_root_inside(const char *path);

/* Reads (one pread) the /proc/self/maps kept open by ptrec_root_note into buf from offset off.
 * Returns the bytes read, 0 at the end, -1 when none is kept (or the application closed it).
 * ASYNC-SIGNAL-SAFE. */
long ptrec_root_pread_maps(char *buf, size_t cap, size_t off);

/* The program's path remembered before the first chroot, "" if none.  ASYNC-SIGNAL-SAFE. */
const char *ptrec_root_exe(void);

/* ---- report_child.c -------------------------------------------------------------------- */

/* Runs `ptrec report DUMP` (the tool at ptrec_crash.tool_path) with stdout to DUMP.txt (the
 * file ptrec_report_reserve made, else created 0600, O_EXCL|O_NOFOLLOW) and every other
 * descriptor closed, killing it after timeout_ms (0: runs nothing), in processes the
 * application never sees (no SIGCHLD, not returned by its waitpid(-1)).  Waits for it.
 * Returns 0 when the report was written, -PTREC_EIO if the tool did not run, failed or timed
 * out: an empty DUMP.txt is then removed, a partial one ends with a line saying it is
 * incomplete.  Needs ptrec_report_prepare (else -PTREC_EIO).  ASYNC-SIGNAL-SAFE (clone,
 * execve; the application's address space is shared, never copied). */
int ptrec_report_run(const char *dump, unsigned timeout_ms);

/* Maps, at ptrec_init, the stacks the report's runner and tool run on (shared address space).
 * Idempotent; on failure no report runs. */
void ptrec_report_prepare(void);

/* Creates DUMP.txt (0600, O_EXCL|O_NOFOLLOW) for the next ptrec_report_run of the calling
 * thread's slot.  Returns 0 or -errno (-EEXIST: the name is taken).  ASYNC-SIGNAL-SAFE. */
int ptrec_report_reserve(const char *dump);

/* Closes and removes a DUMP.txt made by ptrec_report_reserve.  ASYNC-SIGNAL-SAFE. */
void ptrec_report_unreserve(const char *dump);

/* Copies, at ptrec_init, the environment the report child will get: env's entries except
 * LD_PRELOAD and PTREC_PRELOAD (and DEBUGINFOD_URLS unless env has PTREC_REPORT_DEBUGINFOD=1:
 * no network at crash time by default), then LD_PRELOAD=ld_preload unless ld_preload is NULL or
 * "" (the runtime passes the list without libptrec, so the tool never records itself).  Entries
 * beyond the static room (REPORT_ENV_MAX entries, REPORT_ENV_BYTES bytes) are left out. */
void ptrec_report_env_prepare(char *const *env, const char *ld_preload);

/* Opens the syslog datagram socket for path ($PTREC_SYSLOG; NULL or "" means /dev/log, "none"
 * disables).  Called at ptrec_init. */
void ptrec_syslog_prepare(const char *path);

/* Sends text (one line, no newline, without the "ptrec: " that stderr gets) to the system
 * log with severity warning, as "ptrec[PID]: text".  ASYNC-SIGNAL-SAFE. */
void ptrec_syslog_warning(const char *text);

/* Writes the one line of a crash or assertion to stderr and to the system log: the event,
 * pid, thread (name escaped), and where the dump and report went or why they did not (the
 * outcome of the last ptrec_dump_save and ptrec_report_run of the crash slot).
 * ASYNC-SIGNAL-SAFE. */
void ptrec_report_line(const char *what, pid_t tid, const char *dump, int report_ok);

#endif
