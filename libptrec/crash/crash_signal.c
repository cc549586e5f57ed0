/* crash_signal.c — crash handlers: stay the kernel's handler, freeze at the first fault, run
 * the application's own handler, and write the one dump when the process is about to die.
 *
 * ASYNC-SIGNAL-SAFE ISLAND: the handler and everything it calls may not use malloc/free,
 * stdio, locks (pthread_mutex_*), lazily allocated TLS (only initial-exec TLS), or any libc
 * function that is not async-signal-safe.  Buffers are static or prepared at ptrec_init.
 *
 * Handlers are installed with SA_SIGINFO|SA_ONSTACK|SA_NODEFER for SIGSEGV SIGBUS SIGILL
 * SIGFPE SIGABRT SIGTRAP SIGSYS.  The application's actions (those before ptrec_init and those
 * it sets later through the interposed sigaction family) live in crash_chain.c; the kernel
 * keeps ours.  The rule (doc/recorder.md, "Crash signals and the application's handlers"):
 *
 * - A crash signal whose application action is a handler starts an *episode* on its thread
 *   (unless one runs): the hooks stop (capture/hook_gate.h), every ring is frozen, the
 *   signal's siginfo and ucontext are saved in the vault (a page of its own, read-only while
 *   the application's handler runs), then the handler runs with its own semantics.
 * - The process is dying when: a crash signal arrives whose application action is SIG_DFL (or
 *   SIG_IGN for a fault the kernel forces); a fault arrives that the running handler blocks;
 *   the handler's stack overflowed and it has no alternate stack; the application calls
 *   exit/_exit/_Exit from inside the handler; or an application SIGABRT handler returns from
 *   a SIGABRT the process sent itself (abort() goes on to kill with SIG_DFL, without us).
 *   Then the one dump is written, with the episode's saved first fault when this thread has
 *   one, and the process dies as the application meant: the signal with its default action
 *   (a hardware fault is re-executed so the core shows it), or the exit status.
 * - The handler returned: if the action is now SIG_DFL and the signal a fault that repeats
 *   (SA_RESETHAND, or the handler reset it), the episode waits for the repeat, which dies with
 *   the saved context; otherwise the fault was handled (a guard page mapped): the rings thaw,
 *   the hooks resume, and nothing is written.
 * - With PTREC_F_DUMP_FIRST the dump is written at the first crash signal, before the
 *   application's handler runs (the rings stay frozen after it).
 *
 * One dump per process: the first thread to dump claims ptrec_crash_owner with a CAS.  Another
 * thread dying meanwhile waits (bounded) for the owner to finish.  A fault inside the dump
 * itself is recognised by the owner tid: the partial dump stays, the report is tried once, and
 * the process dies. */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "capture/hook_gate.h"
#include "core/arch.h"
#include "core/safe_str.h"
#include "crash/crash.h"

static int installed;                         /* 1 while our handlers are in place */
static pid_t crash_pid;                        /* the process the state belongs to */

struct ptrec_crash_ctx ptrec_crash = {.backend = PTREC_BACKEND_NONE};
_Atomic int ptrec_crash_owner;
_Atomic int ptrec_crash_done;
static _Atomic int crash_nesting;             /* handler entries of the owner thread */
static struct ptrec_thread *crash_list[PTREC_MAX_THREADS];
static char crash_dump_path[PTREC_PATH_MAX];
static _Atomic int crash_report_tried;
static unsigned crash_listed;                  /* slots the dump froze, in crash_list */
static char crash_what[600];

/* The first fault of an episode, kept out of reach of the application's handler: a page of its
 * own in .data, read-only while the handler runs. */
struct vault {
	int signo;             /* the signal */
	siginfo_t info;        /* its siginfo */
	ucontext_t uc;         /* its ucontext (x86-64: fpregs pointing into the copy; aarch64:
	                          the FPSIMD record is inside uc_mcontext.__reserved) */
};
/* aarch64's ucontext_t is larger than 4 KiB; 16 KiB is a page of 4 and 16 KiB page kernels
 * (with 64 KiB pages mprotect refuses the range and the vault is merely not read-only). */
#if defined(__aarch64__)
#define VAULT_PAGE 16384u
#else
#define VAULT_PAGE 4096u
#endif
static union {
	struct vault v;
	char page[VAULT_PAGE];
} vault __attribute__((aligned(VAULT_PAGE), section(".data.ptrec_vault")));
_Static_assert(sizeof(struct vault) <= VAULT_PAGE, "the vault fits one page");

/* The episode: one thread handling a crash signal with the application's handler. */
static struct {
	_Atomic int tid;              /* its thread, 0 when none */
	int depth;                    /* application handler calls running on it */
	int refault;                  /* the handler returned, the fault repeats with SIG_DFL */
	struct ptrec_chain_stack app; /* where the outermost application handler runs */
	uintptr_t alt_lo, alt_hi;     /* the alternate stack libptrec's handler ran on */
	unsigned n;                   /* slots frozen */
} episode;
static struct ptrec_thread *episode_list[PTREC_MAX_THREADS];

unsigned ptrec_freeze_all(struct ptrec_thread **list)
{
	struct ptrec_thread *me = ptrec_slot_self();
	unsigned n = 0;

	if (me && ptrec_slot_pin(me)) {
		if (me->ops)
			me->ops->freeze(&me->ring);
		list[n++] = me;
	}
	for (unsigned i = 0; i < PTREC_MAX_THREADS; i++) {
		struct ptrec_thread *t = ptrec_slot_at(i);
		int state = atomic_load(&t->state);
		if (t == me || (state != PTREC_SLOT_ACTIVE && state != PTREC_SLOT_EXITED))
			continue;
		if (!ptrec_slot_pin_crash(t))
			continue;
		if (t->ops)
			t->ops->freeze(&t->ring);
		list[n++] = t;
	}
	return n;
}

/* Soft limits that would keep the dump from being written are raised to the hard ones while
 * the dump and the report are written (the report child inherits them), and put back after:
 * - RLIMIT_FSIZE: a small one must not end the process with SIGXFSZ (ENOSPC-like EFBIG sends
 *   the dump elsewhere instead); SIGXFSZ is blocked meanwhile, and a SIGXFSZ our writes raised
 *   taken out before the mask is put back;
 * - RLIMIT_NOFILE: a process that lowered it below the descriptors it holds (a server that
 *   sets it to 3..10 for a sandboxed worker) has no number left for the dump, its report or
 *   /proc/self/maps, even with the reserve closed (the reserve's number may be above it);
 * - RLIMIT_NPROC: a service that lowered it to keep itself from forking (OpenSSH's and
 *   vsftpd's sandboxes set 0) could not start the report's processes.
 * SIGPIPE is blocked meanwhile too, and one our writes raised taken out the same way: the
 * stderr line to a pipe whose reader is gone (a supervisor's, a `| head`) killed the process
 * with SIGPIPE (status 141) instead of the crash signal. */
struct limit_raise {
	struct rlimit lim;   /* the limit before */
	int raised;          /* 1: lim must be put back */
};

struct limits_guard {
	struct limit_raise fsize, nofile, nproc;
	sigset_t ours;       /* of SIGXFSZ and SIGPIPE, those not pending before: ours to take */
	sigset_t mask;       /* the mask before */
};

static void limit_raise(int resource, struct limit_raise *l)
{
	l->raised = syscall(SYS_prlimit64, 0, resource, NULL, &l->lim) == 0 &&
	            l->lim.rlim_cur != l->lim.rlim_max;
	if (l->raised) {
		struct rlimit r = {l->lim.rlim_max, l->lim.rlim_max};
		l->raised = syscall(SYS_prlimit64, 0, resource, &r, NULL) == 0;
	}
}

static void limit_restore(int resource, const struct limit_raise *l)
{
	if (l->raised)
		syscall(SYS_prlimit64, 0, resource, &l->lim, NULL);
}

static void limits_open(struct limits_guard *g)
{
	sigset_t x, pend;

	sigemptyset(&x);
	sigaddset(&x, SIGXFSZ);
	sigaddset(&x, SIGPIPE);
	/* The raw call: a sanitizer's sigpending interceptor misjudges the stacks we run on. */
	if (syscall(SYS_rt_sigpending, &pend, (long)(_NSIG / 8)) != 0)
		sigfillset(&pend);
	sigemptyset(&g->ours);
	if (sigismember(&pend, SIGXFSZ) != 1)
		sigaddset(&g->ours, SIGXFSZ);
	if (sigismember(&pend, SIGPIPE) != 1)
		sigaddset(&g->ours, SIGPIPE);
	ptrec_kernel_sigmask(SIG_BLOCK, &x, &g->mask);
	limit_raise(RLIMIT_FSIZE, &g->fsize);
	limit_raise(RLIMIT_NOFILE, &g->nofile);
	limit_raise(RLIMIT_NPROC, &g->nproc);
}

static void limits_close(struct limits_guard *g)
{
	struct timespec zero = {0, 0};

	limit_restore(RLIMIT_NPROC, &g->nproc);
	limit_restore(RLIMIT_NOFILE, &g->nofile);
	limit_restore(RLIMIT_FSIZE, &g->fsize);
	for (int k = 0; k < 2; k++) /* each of ours at most once */
		syscall(SYS_rt_sigtimedwait, &g->ours, NULL, &zero, (long)(_NSIG / 8));
	ptrec_kernel_sigmask(SIG_SETMASK, &g->mask, NULL);
}

/* The stack the one dump is written on: a crash may come on a small alternate stack of the
 * application's (SIGSTKSZ, a language runtime's), which writing the dump would overflow. */
#define DUMP_STACK ((size_t)256 << 10)
#if defined(__aarch64__)
#define DUMP_GUARD ((size_t)65536) /* the largest aarch64 page */
#else
#define DUMP_GUARD ((size_t)4096) /* x86-64 page */
#endif
static uint8_t *dump_stack; /* its lowest byte, a guard page below; NULL if not mapped */

void ptrec_crash_stack_prepare(void)
{
	if (dump_stack)
		return;
	uint8_t *p = mmap(NULL, DUMP_STACK + DUMP_GUARD, PROT_NONE,
	                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return;
	if (mprotect(p + DUMP_GUARD, DUMP_STACK, PROT_READ | PROT_WRITE) != 0) {
		munmap(p, DUMP_STACK + DUMP_GUARD);
		return;
	}
	dump_stack = p + DUMP_GUARD;
}

/* One call of dump_owned, to be run on the dump's stack. */
struct dump_call {
	int signo;
	const siginfo_t *info;
	const void *ucontext;
	enum ptrec_dump_event event;
	const char *reason;
	int r;                 /* what dump_owned returned */
};

static int dump_owned(int signo, const siginfo_t *info, const void *ucontext,
                      enum ptrec_dump_event event, const char *reason);

static void dump_call_run(void *p)
{
	struct dump_call *c = p;
	c->r = dump_owned(c->signo, c->info, c->ucontext, c->event, c->reason);
}

int ptrec_crash_dump_owned(int signo, const siginfo_t *info, const void *ucontext,
                           enum ptrec_dump_event event, const char *reason)
{
	struct dump_call c = {signo, info, ucontext, event, reason, 0};
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);

	if (dump_stack && !(sp >= (uintptr_t)dump_stack && sp - (uintptr_t)dump_stack < DUMP_STACK))
		ptrec_call_on_stack((uintptr_t)dump_stack + DUMP_STACK, dump_call_run, &c);
	else
		dump_call_run(&c);
	return c.r;
}

static int dump_owned(int signo, const siginfo_t *info, const void *ucontext,
                      enum ptrec_dump_event event, const char *reason)
{
	pid_t tid = ptrec_gettid();
	int report_ok = 0, r = 0;
	struct limits_guard limits;

	limits_open(&limits);
	atomic_fetch_add(&crash_nesting, 1);
	atomic_store(&ptrec_crash_in_progress, 1);
	unsigned n = ptrec_freeze_all(crash_list);
	crash_listed = n;
	struct ptrec_dump_request req = {
		.fd = -1, .event = event, .signo = signo, .info = info, .ucontext = ucontext,
		.tid = tid, .reason = reason, .source = PTREC_DUMP_LIVE,
		.threads = crash_list, .nthreads = n,
	};
	r = ptrec_dump_save(&req, 0, NULL, crash_dump_path, sizeof(crash_dump_path));
	if (crash_dump_path[0]) {
		if (!(ptrec_crash.cfg.flags & PTREC_F_NO_REPORT)) {
			atomic_store(&crash_report_tried, 1);
			report_ok = ptrec_report_run(crash_dump_path, ptrec_crash.cfg.report_timeout_ms) == 0;
		}
		if (report_ok) {
			struct ptrec_sbuf b;
			ptrec_sbuf_init(&b, ptrec_crash.last_report, sizeof(ptrec_crash.last_report));
			ptrec_sbuf_str(&b, crash_dump_path);
			ptrec_sbuf_str(&b, ".txt");
		}
	} else {
		r = -PTREC_EIO;
	}
	const char *what = ptrec_crash_signame(signo);
	if (event == PTREC_EVENT_ASSERT) {
		struct ptrec_sbuf b;
		ptrec_sbuf_init(&b, crash_what, sizeof(crash_what));
		ptrec_sbuf_str(&b, "assertion failed: ");
		ptrec_sbuf_str(&b, reason);
		what = crash_what;
	}
	ptrec_report_line(what, tid, crash_dump_path[0] ? crash_dump_path : NULL, report_ok);
	limits_close(&limits);
	atomic_store(&ptrec_crash_done, 1);
	return r;
}

void ptrec_crash_reset_after_fork(void)
{
	crash_pid = (pid_t)syscall(SYS_getpid);
	atomic_store(&episode.tid, 0);
	episode.depth = episode.refault = 0;
	ptrec_hooks_after_fork();
	ptrec_hooks_resume();
	atomic_store(&ptrec_crash_owner, 0);
	atomic_store(&ptrec_crash_done, 0);
	atomic_store(&ptrec_crash_in_progress, 0);
	atomic_store(&ptrec_crash_holding, 0);
}

PTREC_API int ptrec_crash_dump(int signo, siginfo_t *info, void *ucontext)
{
	int expect = 0;
	if (!atomic_load(&ptrec_crash.armed))
		return -PTREC_ESTATE;
	if (!atomic_compare_exchange_strong(&ptrec_crash_owner, &expect, (int)ptrec_gettid()))
		return -PTREC_EBUSY;
	return ptrec_crash_dump_owned(signo, info, ucontext, PTREC_EVENT_CRASH, NULL);
}


/* ---- the episode ------------------------------------------------------------------------ */

static void vault_save(int signo, const siginfo_t *info, const ucontext_t *uc)
{
	mprotect(&vault, sizeof(vault), PROT_READ | PROT_WRITE);
	memset(&vault.v, 0, sizeof(vault.v));
	vault.v.signo = signo;
	if (info)
		vault.v.info = *info;
	if (uc) {
		vault.v.uc = *uc;
#if defined(__x86_64__)
		if (uc->uc_mcontext.fpregs) {
			vault.v.uc.__fpregs_mem = *uc->uc_mcontext.fpregs;
			vault.v.uc.uc_mcontext.fpregs = &vault.v.uc.__fpregs_mem;
		}
#endif
	}
	mprotect(&vault, sizeof(vault), PROT_READ);
}

/* Starts this thread's episode: stop the hooks, freeze every ring, keep the fault. */
static void episode_start(int signo, const siginfo_t *info, const ucontext_t *uc)
{
	stack_t ss;

	ptrec_hooks_stop();
	atomic_store(&ptrec_crash_holding, 1);
	episode.n = ptrec_freeze_all(episode_list);
	vault_save(signo, info, uc);
	episode.depth = 0;
	episode.refault = 0;
	episode.alt_lo = episode.alt_hi = 0;
	if (ptrec_kernel_sigaltstack(NULL, &ss) == 0 && (ss.ss_flags & SS_ONSTACK)) {
		episode.alt_lo = (uintptr_t)ss.ss_sp;
		episode.alt_hi = (uintptr_t)ss.ss_sp + ss.ss_size;
	}
}

/* Ends the episode without a dump: the fault was handled.  Once a dump began nothing thaws. */
static void episode_end(void)
{
	if (!atomic_load(&ptrec_crash_owner)) {
		for (unsigned k = 0; k < episode.n; k++) {
			struct ptrec_thread *t = episode_list[k];
			if (t->ops && t->ops->thaw)
				t->ops->thaw(&t->ring);
			ptrec_slot_unpin(t);
		}
		ptrec_hooks_resume();
	}
	atomic_store(&ptrec_crash_holding, 0);
	episode.n = 0;
	episode.depth = 0;
	episode.refault = 0;
	atomic_store(&episode.tid, 0);
}

/* 1 when sp lies inside the running application handler of this thread's episode (or on the
 * alternate stack libptrec's handler used for it). */
static int inside_app_handler(uintptr_t sp)
{
	return episode.depth > 0 &&
	       ((sp >= episode.app.lo && sp < episode.app.hi) ||
	        (sp >= episode.alt_lo && sp < episode.alt_hi));
}

/* Called at a crash signal on the episode's thread: forgets an episode the application left
 * (siglongjmp out of its handler, or a resumed fault that did not repeat). */
static void episode_check(int signo, const ucontext_t *uc)
{
	if (atomic_load(&episode.tid) != (int)ptrec_gettid())
		return;
	if (episode.refault) {
		if (signo == vault.v.signo &&
		    ptrec_uc_pc(uc) == ptrec_uc_pc(&vault.v.uc))
			return;
	} else if (inside_app_handler((uintptr_t)ptrec_uc_sp(uc))) {
		return;
	}
	episode_end();
}

/* 1 when this thread's episode holds the fault the dump must carry. */
static int episode_mine(void)
{
	return atomic_load(&episode.tid) == (int)ptrec_gettid() &&
	       (episode.depth > 0 || episode.refault);
}

/* ---- dying -------------------------------------------------------------------------------- */

/* Waits until the owning thread finished its dump and report (it will then end the process),
 * but not forever: the report has its own timeout, plus a margin. */
static void wait_for_owner(void)
{
	long long budget_ms = (long long)ptrec_crash.cfg.report_timeout_ms + 10000;
	struct timespec ts = {0, 5 * 1000000};
	for (long long waited = 0; waited < budget_ms && !atomic_load(&ptrec_crash_done); waited += 5)
		nanosleep(&ts, NULL);
}

/* Writes the one dump of this process, unless another thread does or did: the saved first
 * fault when this thread's episode has one, else the signal at hand. */
static void dump_once(int signo, const siginfo_t *info, const void *ucontext)
{
	int expect = 0, me = (int)ptrec_gettid();

	if (atomic_compare_exchange_strong(&ptrec_crash_owner, &expect, me)) {
		ptrec_hooks_stop();
		if (episode_mine())
			ptrec_crash_dump_owned(vault.v.signo, &vault.v.info, &vault.v.uc,
			                       PTREC_EVENT_CRASH, NULL);
		else
			ptrec_crash_dump_owned(signo, info, ucontext, PTREC_EVENT_CRASH, NULL);
	} else if (expect != me) {
		wait_for_owner();
	}
}

/* Lets signo kill the process with its default action.  A fault raised by the kernel repeats
 * when the instruction is re-executed: returning lets the default action act on the real
 * fault (exact core, exit status = signal).  Otherwise the signal is sent again, unblocked. */
static void die_now(int signo, const siginfo_t *info, int nested)
{
	struct sigaction dfl;

	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	if (ptrec_real_sigaction)
		ptrec_real_sigaction(signo, &dfl, NULL);
	else
		sigaction(signo, &dfl, NULL);
	if (!nested && info && info->si_code > 0 &&
	    (signo == SIGSEGV || signo == SIGBUS || signo == SIGILL || signo == SIGFPE))
		return;
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, signo);
	ptrec_kernel_sigmask(SIG_UNBLOCK, &set, NULL);
	syscall(SYS_tgkill, (long)getpid(), (long)ptrec_gettid(), (long)signo);
}

static void die(int signo, const siginfo_t *info, ucontext_t *uc)
{
	dump_once(signo, info, uc);
	/* A fault returned to repeats with every other signal blocked: a timer handler that takes
	 * every moment the thread has (a SIGALRM storm) would otherwise run first, again and
	 * again, and the fault never come back.  (Sent again instead, it comes at once.) */
	sigfillset(&uc->uc_sigmask);
	sigdelset(&uc->uc_sigmask, signo);
	die_now(signo, info, 0);
}

void ptrec_crash_exiting(void)
{
	if (!installed || !episode_mine() || episode.refault)
		return;
	if (!inside_app_handler((uintptr_t)__builtin_frame_address(0)))
		return;
	dump_once(vault.v.signo, &vault.v.info, &vault.v.uc);
}

void ptrec_crash_exit_wait(void)
{
	int owner = atomic_load(&ptrec_crash_owner);
	if (!installed || !owner || owner == (int)ptrec_gettid() || ptrec_crash_foreign())
		return;
	wait_for_owner();
	struct timespec ts = {0, 5 * 1000000};
	for (int waited = 0; waited < 1000; waited += 5)
		nanosleep(&ts, NULL); /* the owner's signal ends the process meanwhile */
}

/* Ends this thread's episode when sp lies outside the application handler it runs. */
static void episode_left(uintptr_t sp)
{
	int tid = atomic_load(&episode.tid); /* 0 nearly always: no gettid then */
	if (tid && tid == (int)ptrec_gettid() && episode.depth > 0 && !inside_app_handler(sp))
		episode_end(); /* the handler is left: recording goes on at once */
}

void ptrec_crash_longjmp(uintptr_t sp)
{
	if (!installed)
		return;
	ptrec_chain_left(sp);
	episode_left(sp);
}

void ptrec_crash_thread_exit(void)
{
	if (!installed)
		return;
	ptrec_chain_exiting();
	episode_left(UINTPTR_MAX);
}

/* 1 for a signal the kernel forces on a fault (it kills even when ignored or blocked). */
static int forced_fault(int signo, const siginfo_t *info)
{
	return info && info->si_code > 0 && signo != SIGABRT;
}

/* 1 for a SIGABRT this process sent itself (abort(), raise()). */
static int self_abort(int signo, const siginfo_t *info)
{
	return signo == SIGABRT && info && (info->si_code == SI_TKILL || info->si_code == SI_USER) &&
	       info->si_pid == getpid();
}

/* ---- a child sharing the memory ------------------------------------------------------------ */

int ptrec_crash_foreign(void)
{
	pid_t p = crash_pid;
	return p && (pid_t)syscall(SYS_getpid) != p;
}

/* The foreign child dies of signo (its action is SIG_DFL, or SIG_IGN for a fault): its dump is
 * written like any crash's (its history is in the ring of the parent's thread it borrowed),
 * then every change made to the shared state is undone, so the parent records on and its own
 * crash gets its dump.  Nothing is written while the parent is writing its own. */
static void foreign_die(int signo, siginfo_t *info, ucontext_t *uc)
{
	int expect = 0, nesting = atomic_load(&crash_nesting);
	int progress_was = atomic_load(&ptrec_crash_in_progress);

	if (atomic_compare_exchange_strong(&ptrec_crash_owner, &expect, (int)ptrec_gettid())) {
		int stopped = ptrec_hooks_stop();
		ptrec_crash_dump_owned(signo, info, uc, PTREC_EVENT_CRASH, NULL);
		for (unsigned k = 0; k < crash_listed; k++) {
			struct ptrec_thread *t = crash_list[k];
			if (t->ops && t->ops->thaw)
				t->ops->thaw(&t->ring);
			ptrec_slot_unpin(t);
		}
		crash_listed = 0;
		crash_dump_path[0] = '\0';
		atomic_store(&crash_report_tried, 0);
		atomic_store(&crash_nesting, nesting);
		atomic_store(&ptrec_crash_in_progress, progress_was);
		atomic_store(&ptrec_crash_done, 0);
		if (stopped)
			ptrec_hooks_resume();
		atomic_store(&ptrec_crash_owner, 0);
	}
	die_now(signo, info, 0);
}

/* A crash signal in a child that shares the application's memory but is another process (a
 * vfork or posix_spawn child before its exec): libptrec's state is the parent's.  The child's
 * own signal actions are private to it, so the application's action goes to its kernel and
 * acts natively, as it would without libptrec; only a signal that kills it leaves a dump. */
static void foreign_crash(int i, int signo, siginfo_t *info, ucontext_t *uc)
{
	struct sigaction act;

	ptrec_chain_get(i, &act);
	if (act.sa_handler == SIG_DFL || (act.sa_handler == SIG_IGN && forced_fault(signo, info))) {
		foreign_die(signo, info, uc);
		return;
	}
	if (ptrec_real_sigaction)
		ptrec_real_sigaction(signo, &act, NULL);
	else
		sigaction(signo, &act, NULL);
	if (act.sa_handler != SIG_IGN && !forced_fault(signo, info))
		syscall(SYS_tgkill, (long)syscall(SYS_getpid), (long)ptrec_gettid(), (long)signo);
	/* a fault repeats when the instruction is re-executed, now with the application's action */
}

/* ---- the handler -------------------------------------------------------------------------- */

/* Runs the application's handler act for a crash signal, inside an episode. */
static void handle(int i, const struct sigaction *act, int signo, siginfo_t *info,
                   ucontext_t *uc)
{
	int me = (int)ptrec_gettid(), expect = 0, started = 0;
	struct ptrec_chain_stack where;

	if (ptrec_crash.cfg.flags & PTREC_F_DUMP_FIRST) {
		dump_once(signo, info, uc);
	} else if (!atomic_load(&ptrec_crash_owner) && atomic_load(&episode.tid) != me &&
	           atomic_compare_exchange_strong(&episode.tid, &expect, me)) {
		episode_start(signo, info, uc);
		started = 1;
	}
	ptrec_hooks_stop();
	int mine = atomic_load(&episode.tid) == me;
	if (mine)
		episode.depth++;
	int r = ptrec_chain_run(i, act, signo, info, uc,
	                        mine && episode.depth == 1 ? &episode.app : &where);
	if (mine)
		episode.depth--;
	if (r < 0) {
		die(signo, info, uc);
		return;
	}
	if (self_abort(signo, info)) {
		dump_once(signo, info, uc); /* abort() kills next, past us */
		return;
	}
	if (!started || !mine || atomic_load(&episode.tid) != me)
		return;
	struct sigaction now;
	ptrec_chain_get(i, &now);
	if (forced_fault(signo, info) && (now.sa_handler == SIG_DFL || now.sa_handler == SIG_IGN))
		episode.refault = 1; /* it faults again, and dies */
	else
		episode_end();
}

static __thread int own_thread __attribute__((tls_model("initial-exec")));

void ptrec_crash_own_thread(void)
{
	own_thread = 1;
}

/* On libptrec's own thread: a crash signal sent to the process goes back to it (crash.h). */
static void pass_on(int signo)
{
	uint64_t set = 1ull << (signo - 1); /* the kernel's set, raw as in ptrec_chain_exiting */

	syscall(SYS_rt_sigprocmask, SIG_BLOCK, &set, NULL, sizeof(set));
	kill(getpid(), signo);
}

static void crash_handler(int signo, siginfo_t *info, void *ucontext)
{
	int saved_errno = errno;
	int me = (int)ptrec_gettid();
	int i = ptrec_chain_index(signo);
	int owner = atomic_load(&ptrec_crash_owner);
	ucontext_t *uc = ucontext;
	struct sigaction act;

	if (owner == me && !atomic_load(&ptrec_crash_done)) {
		/* A fault inside our own dump. */
		if (atomic_fetch_add(&crash_nesting, 1) == 1) {
			ptrec_stderr("ptrec: ");
			ptrec_stderr(ptrec_crash_signame(signo));
			ptrec_stderr(" while writing the crash dump; it may be incomplete\n");
			if (crash_dump_path[0] && !atomic_exchange(&crash_report_tried, 1))
				ptrec_report_run(crash_dump_path, ptrec_crash.cfg.report_timeout_ms);
			atomic_store(&ptrec_crash_done, 1);
		}
		die_now(signo, info, 1);
		goto out;
	}
	if (i >= 0 && ptrec_crash_foreign()) {
		foreign_crash(i, signo, info, uc);
		goto out;
	}
	if (owner && owner != me)
		wait_for_owner();
	if (i < 0) {
		die_now(signo, info, 0);
		goto out;
	}
	if (own_thread && ptrec_sent_to_process(info)) {
		pass_on(signo);
		goto out;
	}
	episode_check(signo, uc);
	ptrec_chain_left((uintptr_t)ptrec_uc_sp(uc));
	if (episode_mine() && episode.refault) {
		die(signo, info, uc);
		goto out;
	}
	ptrec_chain_mask_check(uc);
	if (ptrec_chain_blocked(i)) {
		/* The application's handler blocks it: a fault kills, a sent one waits. */
		if (forced_fault(signo, info))
			die(signo, info, uc);
		else
			ptrec_chain_defer(i, info);
		goto out;
	}
	ptrec_chain_get(i, &act);
	if (act.sa_handler == SIG_DFL || (act.sa_handler == SIG_IGN && forced_fault(signo, info)))
		die(signo, info, uc);
	else if (act.sa_handler != SIG_IGN)
		handle(i, &act, signo, info, uc);
	else if (self_abort(signo, info))
		dump_once(signo, info, uc); /* abort() resets it to SIG_DFL and kills next, past us */
out:
	errno = saved_errno;
}

int ptrec_signals_install(void)
{
	struct sigaction sa, old, rb;
	ptrec_sigaction_fn real = ptrec_real_sigaction ? ptrec_real_sigaction : sigaction;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = crash_handler;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
	/* Every other signal waits while libptrec's handler runs (the application's handler, when
	 * chained, gets the mask it asked for: app_call_run sets it): an application whose timer
	 * handler takes longer than its period (a SIGALRM storm) otherwise ran that handler on top
	 * of ours again and again, and a crash never ended, neither dump nor death.  The crash
	 * signals stay open: a fault while the dump is written must reach us. */
	sigfillset(&sa.sa_mask);
	for (int i = 0; i < PTREC_NCRASH; i++)
		sigdelset(&sa.sa_mask, ptrec_crash_signals[i]);
	for (int i = 0; i < PTREC_NCRASH; i++) {
		if (real(ptrec_crash_signals[i], &sa, &old) != 0)
			return -PTREC_EINVAL;
		ptrec_chain_set(i, &old, 1);
		if (real(ptrec_crash_signals[i], NULL, &rb) == 0)
			ptrec_chain_learn_restorer(&rb);
	}
	installed = 1;
	crash_pid = (pid_t)syscall(SYS_getpid);
	ptrec_chain_manage(1);
	return 0;
}

void ptrec_signals_restore(void)
{
	ptrec_sigaction_fn real = ptrec_real_sigaction ? ptrec_real_sigaction : sigaction;

	if (!installed)
		return;
	ptrec_chain_manage(0);
	for (int i = 0; i < PTREC_NCRASH; i++) {
		struct sigaction cur, app;
		/* Leave alone a disposition the application set past us (a raw syscall). */
		ptrec_chain_get(i, &app);
		if (real(ptrec_crash_signals[i], NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
		    cur.sa_sigaction == crash_handler)
			real(ptrec_crash_signals[i], &app, NULL);
	}
	installed = 0;
}
