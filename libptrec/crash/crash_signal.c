/* crash_signal.c — crash handlers: freeze, dump, report, then die with the original signal.
 *
 * ASYNC-SIGNAL-SAFE ISLAND: the handler and everything it calls may not use malloc/free,
 * stdio, locks (pthread_mutex_*), lazily allocated TLS (only initial-exec TLS), or any libc
 * function that is not async-signal-safe.  Buffers are static or prepared at ptrec_init.
 *
 * Handlers are installed with SA_SIGINFO|SA_ONSTACK|SA_NODEFER for SIGSEGV SIGBUS SIGILL
 * SIGFPE SIGABRT SIGTRAP SIGSYS; the previous actions are saved.
 *
 * One dump per process crash: the first thread to arrive claims ptrec_crash_owner with a CAS.
 * - Another thread crashing meanwhile waits (bounded) for the owner to finish; the owner's
 *   signal then ends the process.  Its ring was frozen by the owner and is in the dump.
 * - A fault inside the handler (SA_NODEFER lets it re-enter) is recognised by the owner tid:
 *   the partial dump stays on disk, the report is attempted once, and the process dies.
 * Chaining: a previous handler is reinstalled and called; without one the default action is
 * restored and the signal raised again (a hardware fault is simply re-executed, so the kernel's
 * core shows the faulting instruction), so the exit status is the original signal. */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/safe_str.h"
#include "crash/crash.h"

static const int crash_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS};
#define NCRASH (sizeof(crash_signals) / sizeof(crash_signals[0]))

static struct sigaction saved_action[NCRASH]; /* previous actions, by index in crash_signals */
static int installed;                         /* 1 while our handlers are in place */

struct ptrec_crash_ctx ptrec_crash = {.backend = PTREC_BACKEND_NONE};
_Atomic int ptrec_crash_owner;
_Atomic int ptrec_crash_done;
static _Atomic int crash_nesting;             /* handler entries of the owner thread */
static struct ptrec_thread *crash_list[PTREC_MAX_THREADS];
static char crash_dump_path[PTREC_PATH_MAX];
static _Atomic int crash_report_tried;
static char crash_what[600];

static int signal_index(int signo)
{
	for (unsigned i = 0; i < NCRASH; i++)
		if (crash_signals[i] == signo)
			return (int)i;
	return -1;
}

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
		if (t == me || atomic_load(&t->state) != PTREC_SLOT_ACTIVE)
			continue;
		if (!ptrec_slot_pin(t))
			continue;
		if (t->ops)
			t->ops->freeze(&t->ring);
		list[n++] = t;
	}
	return n;
}

int ptrec_crash_dump_owned(int signo, const siginfo_t *info, const void *ucontext,
                           enum ptrec_dump_event event, const char *reason)
{
	pid_t tid = ptrec_gettid();
	int report_ok = 0, r = 0;

	atomic_fetch_add(&crash_nesting, 1);
	atomic_store(&ptrec_crash_in_progress, 1);
	unsigned n = ptrec_freeze_all(crash_list);
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
	atomic_store(&ptrec_crash_done, 1);
	return r;
}

void ptrec_crash_reset_after_fork(void)
{
	atomic_store(&ptrec_crash_owner, 0);
	atomic_store(&ptrec_crash_done, 0);
	atomic_store(&ptrec_crash_in_progress, 0);
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

/* Waits until the owning thread finished its dump and report (it will then end the process),
 * but not forever: the report has its own timeout, plus a margin. */
static void wait_for_owner(void)
{
	long long budget_ms = (long long)ptrec_crash.cfg.report_timeout_ms + 10000;
	struct timespec ts = {0, 5 * 1000000};
	for (long long waited = 0; waited < budget_ms && !atomic_load(&ptrec_crash_done); waited += 5)
		nanosleep(&ts, NULL);
}

/* Hands the signal on: to the previous handler, or to the default action. */
static void chain(int signo, siginfo_t *info, void *ucontext, int nested)
{
	int i = signal_index(signo);
	struct sigaction dfl;

	if (i >= 0 && installed) {
		const struct sigaction *prev = &saved_action[i];
		int has_handler = (prev->sa_flags & SA_SIGINFO) ? prev->sa_sigaction != NULL
		                  : (prev->sa_handler != SIG_DFL && prev->sa_handler != SIG_IGN);
		if (has_handler) {
			sigaction(signo, prev, NULL); /* a repeat goes straight to it */
			if (prev->sa_flags & SA_SIGINFO)
				prev->sa_sigaction(signo, info, ucontext);
			else
				prev->sa_handler(signo);
			return;
		}
	}
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(signo, &dfl, NULL);
	/* A fault raised by the kernel repeats when the instruction is re-executed: returning
	 * lets the default action act on the real fault (exact core, exit status = signal). */
	if (!nested && info && info->si_code > 0 &&
	    (signo == SIGSEGV || signo == SIGBUS || signo == SIGILL || signo == SIGFPE))
		return;
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, signo);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	syscall(SYS_tgkill, (long)getpid(), (long)ptrec_gettid(), (long)signo);
}

static void crash_handler(int signo, siginfo_t *info, void *ucontext)
{
	int saved_errno = errno;
	int me = (int)ptrec_gettid();
	int owner = 0;
	int nested = 0;

	if (atomic_compare_exchange_strong(&ptrec_crash_owner, &owner, me)) {
		ptrec_crash_dump_owned(signo, info, ucontext, PTREC_EVENT_CRASH, NULL);
	} else if (owner == me) {
		/* Our own thread again: either the signal after a finished dump or assertion
		 * (abort), or a fault inside the dump itself. */
		if (!atomic_load(&ptrec_crash_done)) {
			nested = 1;
			if (atomic_fetch_add(&crash_nesting, 1) == 1) {
				ptrec_stderr("ptrec: ");
				ptrec_stderr(ptrec_crash_signame(signo));
				ptrec_stderr(" while writing the crash dump; it may be incomplete\n");
				if (crash_dump_path[0] && !atomic_exchange(&crash_report_tried, 1))
					ptrec_report_run(crash_dump_path, ptrec_crash.cfg.report_timeout_ms);
				atomic_store(&ptrec_crash_done, 1);
			}
		}
	} else {
		wait_for_owner();
	}
	chain(signo, info, ucontext, nested);
	errno = saved_errno;
}

int ptrec_signals_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = crash_handler;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	for (unsigned i = 0; i < NCRASH; i++)
		if (sigaction(crash_signals[i], &sa, &saved_action[i]) != 0)
			return -PTREC_EINVAL;
	installed = 1;
	return 0;
}

void ptrec_signals_restore(void)
{
	if (!installed)
		return;
	for (unsigned i = 0; i < NCRASH; i++) {
		struct sigaction cur;
		/* Leave a handler the application installed after us alone. */
		if (sigaction(crash_signals[i], NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
		    cur.sa_sigaction == crash_handler)
			sigaction(crash_signals[i], &saved_action[i], NULL);
	}
	installed = 0;
}
