/* signal_interpose.c — the interposed libc functions that change signal dispositions or end
 * the process, so libptrec stays the first handler of the crash signals and sees the process
 * die (doc/recorder.md, "Crash signals and the application's handlers").
 *
 * - sigaction, signal, bsd_signal, sysv_signal, __sysv_signal, ssignal, sigset, sigignore,
 *   siginterrupt: for a crash signal while libptrec's
 *   handlers are installed, the application's action goes to the chain (crash/crash_chain.c)
 *   and the kernel keeps libptrec's handler; reading an action back returns exactly what the
 *   application set, as the kernel would have kept it.  For the other signals the fault
 *   signals (every crash signal but SIGABRT) are taken out of a handler's sa_mask (a fault inside
 *   the handler would otherwise kill with SIG_DFL, past libptrec) and read back as set; handlers
 *   installed before ptrec_init are adopted the same way (ptrec_interpose_adopt), and get their
 *   whole mask back at ptrec_shutdown.
 * - sigprocmask, pthread_sigmask, sighold, sigrelse: while libptrec's handlers are installed, the fault signals
 *   (every crash signal but SIGABRT) a thread blocks are blocked virtually (crash/crash_chain.c),
 *   not in the kernel, which would kill at a fault it finds blocked with SIG_DFL, past libptrec
 *   (worker threads started with every signal blocked); the old mask read back holds them.
 * - siglongjmp, longjmp, _longjmp, __longjmp_chk: a jump out of the application's crash
 *   handler (a recovering server) ends the episode there, so recording goes on at once (glibc
 *   x86-64: the target stack pointer is read from the jmp_buf, demangled with the pointer
 *   guard).
 * - sigaltstack: an alternate stack the application disables stays libptrec's in the kernel
 *   (a stack overflow must reach libptrec), disabled as read back.
 * - exit, _exit, _Exit: when called from inside the application's handler of a crash, the one
 *   dump is written first (crash/crash_signal.c), then libc's function runs; while another
 *   thread writes a crash's dump they wait for the crash to end the process (so does a
 *   destructor, for a return from main).
 *
 * Like pthread_create (thread_registry.c), the definitions bind before libc's for the program
 * and every library loaded after libptrec, and call libc's through dlsym(RTLD_NEXT).  They are
 * weak, so a fully static link keeps libc's (without interposition: call ptrec_crash_dump()
 * from your handlers there, with PTREC_F_NO_SIGNALS).  The libc functions are looked up at
 * load time, never in a signal handler. */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/recorder.h"

#define WEAK __attribute__((weak))
#ifndef SS_AUTODISARM
#define SS_AUTODISARM (1u << 31) /* linux/signal.h: disarm the stack while a handler runs */
#endif

typedef void (*exit_fn)(int) __attribute__((noreturn));
typedef sighandler_t (*signal_fn)(int, sighandler_t);

static signal_fn real_signal, real_bsd_signal, real_sysv_signal, real___sysv_signal, real_ssignal,
	real_sigset;
static int (*real_sigignore)(int);
static int (*real_siginterrupt)(int, int);
static exit_fn real_exit, real__exit, real__Exit;
typedef int (*sigmask_fn)(int, const sigset_t *, sigset_t *);
typedef void (*longjmp_fn)(struct __jmp_buf_tag *, int) __attribute__((noreturn));
static longjmp_fn real_siglongjmp, real_longjmp, real__longjmp, real_longjmp_chk;
static sigmask_fn real_sigprocmask, real_pthread_sigmask;

/* Declared by <signal.h> only for some feature macros (__sysv_signal: what signal() names under
 * strict ISO C, -std=c99 or -std=c11 without _DEFAULT_SOURCE). */
sighandler_t bsd_signal(int sig, sighandler_t h);
sighandler_t __sysv_signal(int sig, sighandler_t h);
sighandler_t ssignal(int sig, sighandler_t h);
int sigignore(int sig);
int siginterrupt(int sig, int flag);
int sighold(int sig);
int sigrelse(int sig);

extern int __sigaction(int, const struct sigaction *, struct sigaction *) __attribute__((weak));

static void *next(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

__attribute__((constructor)) void ptrec_interpose_resolve(void)
{
	if (!ptrec_real_sigaction) {
		ptrec_sigaction_fn f = (ptrec_sigaction_fn)next("sigaction");
		ptrec_real_sigaction = f ? f : __sigaction;
	}
	real_signal = (signal_fn)next("signal");
	real_bsd_signal = (signal_fn)next("bsd_signal");
	real_sysv_signal = (signal_fn)next("sysv_signal");
	real___sysv_signal = (signal_fn)next("__sysv_signal");
	real_ssignal = (signal_fn)next("ssignal");
	real_sigignore = (int (*)(int))next("sigignore");
	real_siginterrupt = (int (*)(int, int))next("siginterrupt");
	real_sigset = (signal_fn)next("sigset");
	real_sigprocmask = (sigmask_fn)next("sigprocmask");
	real_pthread_sigmask = (sigmask_fn)next("pthread_sigmask");
	real_siglongjmp = (longjmp_fn)next("siglongjmp");
	real_longjmp = (longjmp_fn)next("longjmp");
	real__longjmp = (longjmp_fn)next("_longjmp");
	real_longjmp_chk = (longjmp_fn)next("__longjmp_chk");
	real_exit = (exit_fn)next("exit");
	real__exit = (exit_fn)next("_exit");
	real__Exit = (exit_fn)next("_Exit");
}

/* ---- dispositions -------------------------------------------------------------------------- */

/* The fault signals the masks of other signals' handlers hold, by signal (bits by crash
 * signal index): kept out of the kernel while libptrec's handlers are installed (a fault inside
 * such a handler would kill with SIG_DFL, past libptrec) and read back as set. */
static _Atomic unsigned held[NSIG];

/* sigaction for a signal the chain does not keep. */
static int other_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	struct sigaction a;
	unsigned bits = 0;
	int r;

	if (!ptrec_real_sigaction)
		ptrec_interpose_resolve();
	if (!ptrec_real_sigaction) {
		errno = ENOSYS;
		return -1;
	}
	if (sig <= 0 || sig >= NSIG || ptrec_chain_managed(SIGSEGV) < 0)
		return ptrec_real_sigaction(sig, act, old);
	if (act) {
		a = *act;
		bits = ptrec_chain_strip(&a.sa_mask);
	}
	unsigned before = atomic_load(&held[sig]);
	r = ptrec_real_sigaction(sig, act ? &a : NULL, old);
	if (r != 0)
		return r;
	if (old)
		ptrec_chain_unstrip(&old->sa_mask, before);
	if (act)
		atomic_store(&held[sig], bits);
	return 0;
}

/* 1 for a handler (not SIG_DFL or SIG_IGN), whose mask the kernel applies. */
static int is_handler(const struct sigaction *a)
{
	return a->sa_handler != SIG_DFL && a->sa_handler != SIG_IGN;
}

void ptrec_interpose_adopt(void)
{
	struct sigaction cur;
	unsigned bits;

	for (int sig = 1; sig < NSIG; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP || ptrec_chain_index(sig) >= 0 ||
		    ptrec_real_sigaction(sig, NULL, &cur) != 0 || !is_handler(&cur))
			continue;
		bits = ptrec_chain_strip(&cur.sa_mask);
		if (bits && ptrec_real_sigaction(sig, &cur, NULL) == 0)
			atomic_store(&held[sig], bits);
	}
	ptrec_interpose_adopt_mask();
}

void ptrec_interpose_adopt_mask(void)
{
	sigset_t mask;
	unsigned bits;

	if (ptrec_chain_managed(SIGSEGV) < 0 || ptrec_kernel_sigmask(SIG_BLOCK, NULL, &mask) != 0)
		return;
	bits = ptrec_chain_strip(&mask);
	if (bits && ptrec_kernel_sigmask(SIG_SETMASK, &mask, NULL) == 0)
		ptrec_chain_mask(SIG_BLOCK, bits);
}

void ptrec_interpose_release(void)
{
	struct sigaction cur;
	sigset_t mask;

	for (int sig = 1; sig < NSIG; sig++) {
		unsigned bits = atomic_exchange(&held[sig], 0);
		if (!bits || ptrec_real_sigaction(sig, NULL, &cur) != 0 || !is_handler(&cur))
			continue;
		ptrec_chain_unstrip(&cur.sa_mask, bits);
		ptrec_real_sigaction(sig, &cur, NULL);
	}
	sigemptyset(&mask);
	ptrec_chain_unstrip(&mask, ptrec_chain_thread_mask());
	ptrec_kernel_sigmask(SIG_BLOCK, &mask, NULL);
	ptrec_chain_mask(SIG_SETMASK, 0); /* signals sent meanwhile wait in the kernel now */
}

PTREC_API WEAK int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	int i = ptrec_chain_managed(sig);

	if (i < 0)
		return other_sigaction(sig, act, old);
	if (old)
		ptrec_chain_get(i, old);
	if (act)
		ptrec_chain_set(i, act, 0);
	return 0;
}

/* A handler set the way signal(3) sets it: flags and mask as glibc builds them. */
static sighandler_t set_handler(int i, int sig, sighandler_t h, int flags, int block_self)
{
	struct sigaction a, old;

	if (h == SIG_ERR) {
		errno = EINVAL;
		return SIG_ERR;
	}
	memset(&a, 0, sizeof(a));
	a.sa_handler = h;
	sigemptyset(&a.sa_mask);
	if (block_self)
		sigaddset(&a.sa_mask, sig);
	a.sa_flags = flags;
	ptrec_chain_get(i, &old);
	ptrec_chain_set(i, &a, 0);
	return old.sa_handler;
}

/* The signal(3)-like setters: a crash signal's handler goes to the chain with those flags (and
 * the signal in its mask when block_self); any other signal to libc's *real (looked up here when
 * a constructor runs before libptrec's). */
static sighandler_t set_or_pass(signal_fn *real, int sig, sighandler_t h, int flags,
                                int block_self)
{
	int i = ptrec_chain_managed(sig);
	if (i >= 0)
		return set_handler(i, sig, h, flags, block_self);
	if (!*real)
		ptrec_interpose_resolve();
	return *real ? (*real)(sig, h) : SIG_ERR;
}

/* glibc's signal() has BSD semantics: the signal blocked in its handler, SA_RESTART; bsd_signal
 * and ssignal are signal under other names. */
PTREC_API WEAK sighandler_t signal(int sig, sighandler_t h)
{
	return set_or_pass(&real_signal, sig, h, SA_RESTART, 1);
}

PTREC_API WEAK sighandler_t bsd_signal(int sig, sighandler_t h)
{
	return set_or_pass(&real_bsd_signal, sig, h, SA_RESTART, 1);
}

PTREC_API WEAK sighandler_t ssignal(int sig, sighandler_t h)
{
	return set_or_pass(&real_ssignal, sig, h, SA_RESTART, 1);
}

/* System V semantics: reset to SIG_DFL on delivery, not blocked in the handler.  __sysv_signal
 * is what signal() names under strict ISO C: zstd, built with -std=c99, set its SIGSEGV handler
 * through it past libptrec (no dump). */
PTREC_API WEAK sighandler_t sysv_signal(int sig, sighandler_t h)
{
	return set_or_pass(&real_sysv_signal, sig, h, SA_RESETHAND | SA_NODEFER, 0);
}

PTREC_API WEAK sighandler_t __sysv_signal(int sig, sighandler_t h)
{
	return set_or_pass(&real___sysv_signal, sig, h, SA_RESETHAND | SA_NODEFER, 0);
}

/* sigignore(3): SIG_IGN, no flags, an empty mask. */
PTREC_API WEAK int sigignore(int sig)
{
	int i = ptrec_chain_managed(sig);
	if (i < 0)
		return real_sigignore ? real_sigignore(sig) : (errno = ENOSYS, -1);
	struct sigaction a;
	memset(&a, 0, sizeof(a));
	a.sa_handler = SIG_IGN;
	sigemptyset(&a.sa_mask);
	ptrec_chain_set(i, &a, 0);
	return 0;
}

/* siginterrupt(3): SA_RESTART off (flag) or on in the signal's action. */
PTREC_API WEAK int siginterrupt(int sig, int flag)
{
	int i = ptrec_chain_managed(sig);
	if (i < 0)
		return real_siginterrupt ? real_siginterrupt(sig, flag) : (errno = ENOSYS, -1);
	struct sigaction a;
	ptrec_chain_get(i, &a);
	if (flag)
		a.sa_flags &= ~SA_RESTART;
	else
		a.sa_flags |= SA_RESTART;
	ptrec_chain_set(i, &a, 0);
	return 0;
}

/* sigset(3): SIG_HOLD blocks the signal; any other disposition is set and unblocks it.
 * Returns SIG_HOLD when the signal was blocked, else the previous handler. */
PTREC_API WEAK sighandler_t sigset(int sig, sighandler_t h)
{
	int i = ptrec_chain_managed(sig);
	sigset_t set, oset;
	struct sigaction old;

	if (i < 0)
		return real_sigset ? real_sigset(sig, h) : SIG_ERR;
	sigemptyset(&set);
	sigaddset(&set, sig);
	if (h == SIG_HOLD) {
		if (sigprocmask(SIG_BLOCK, &set, &oset) < 0)
			return SIG_ERR;
		if (sigismember(&oset, sig))
			return SIG_HOLD;
		ptrec_chain_get(i, &old);
		return old.sa_handler;
	}
	sighandler_t prev = set_handler(i, sig, h, 0, 0);
	if (prev == SIG_ERR || sigprocmask(SIG_UNBLOCK, &set, &oset) < 0)
		return SIG_ERR;
	return sigismember(&oset, sig) ? SIG_HOLD : prev;
}

/* ---- the thread's mask ----------------------------------------------------------------- */

/* Calls real (sigprocmask when posix, returning -1 and errno; else pthread_sigmask, returning
 * an error number) for the thread's mask, the fault signals changed virtually while libptrec's
 * handlers are installed.  Returns 0 or an error number. */
static int change_mask(sigmask_fn real, int posix, int how, const sigset_t *set, sigset_t *old)
{
	sigset_t k;
	unsigned bits = 0;
	int r;

	if (!real)
		return ENOSYS;
	if (ptrec_chain_managed(SIGSEGV) < 0) {
		r = real(how, set, old);
		return posix ? (r ? errno : 0) : r;
	}
	ptrec_chain_left((uintptr_t)__builtin_frame_address(0));
	if (set) {
		k = *set;
		bits = ptrec_chain_strip(&k);
	}
	unsigned before = ptrec_chain_thread_mask();
	r = real(how, set ? &k : NULL, old);
	if (r != 0)
		return posix ? errno : r;
	if (old)
		ptrec_chain_unstrip(old, before);
	if (set)
		ptrec_chain_mask(how, bits);
	return 0;
}

PTREC_API WEAK int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	if (!real_sigprocmask)
		ptrec_interpose_resolve();
	int e = change_mask(real_sigprocmask, 1, how, set, old);
	if (e) {
		errno = e;
		return -1;
	}
	return 0;
}

PTREC_API WEAK int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	if (!real_pthread_sigmask)
		ptrec_interpose_resolve();
	return change_mask(real_pthread_sigmask, 0, how, set, old);
}

/* sighold(3) and sigrelse(3): one signal blocked or unblocked, through sigprocmask above (glibc's
 * call libc's own, past libptrec). */
static int hold(int how, int sig)
{
	sigset_t set;
	sigemptyset(&set);
	if (sigaddset(&set, sig) < 0)
		return -1;
	return sigprocmask(how, &set, NULL);
}

PTREC_API WEAK int sighold(int sig)
{
	return hold(SIG_BLOCK, sig);
}

PTREC_API WEAK int sigrelse(int sig)
{
	return hold(SIG_UNBLOCK, sig);
}

/* ---- the alternate signal stack ------------------------------------------------------------ */

/* 1 while the application has its thread's alternate stack disabled and libptrec's stands in
 * for it in the kernel. */
static __thread int altstack_hidden __attribute__((tls_model("initial-exec")));

/* 1 when ss, as the kernel reads it back, is libptrec's stack of thread t. */
static int altstack_ours(const struct ptrec_thread *t, const stack_t *ss)
{
	return !(ss->ss_flags & SS_DISABLE) && (char *)ss->ss_sp > (char *)t->altstack &&
	       (char *)ss->ss_sp < (char *)t->altstack + t->altstack_len;
}

/* An application that disables its thread's alternate stack (SS_DISABLE) while libptrec's
 * handlers are installed keeps it disabled in its own view only: libptrec's stack stays (or
 * comes back) in the kernel, so a stack overflow still reaches libptrec, which then lets it
 * kill as the kernel would have (the application's handler has no alternate stack to run on).
 * Read back, the stack is disabled (no address, no size) until the application sets one. */
PTREC_API WEAK int sigaltstack(const stack_t *ss, stack_t *old)
{
	struct ptrec_thread *t = ptrec_slot_self();
	stack_t k, view;

	if (!t || ptrec_chain_managed(SIGSEGV) < 0)
		return ptrec_kernel_sigaltstack(ss, old);
	int disable = ss && (ss->ss_flags & ~SS_AUTODISARM) == SS_DISABLE;
	if (!t->altstack && (!disable || ptrec_thread_altstack_map(t) != 0))
		return ptrec_kernel_sigaltstack(ss, old); /* the thread brought its own stack */
	if (ptrec_kernel_sigaltstack(NULL, &k) != 0)
		return -1;
	view = k;
	if (altstack_hidden) {
		memset(&view, 0, sizeof(view));
		view.ss_flags = SS_DISABLE;
	}
	if (disable) {
		if (k.ss_flags & SS_ONSTACK) {
			errno = EPERM; /* the kernel's answer on the alternate stack */
			return -1;
		}
		if (!altstack_ours(t, &k)) {
			stack_t ours = {
				.ss_sp = (char *)t->altstack + (t->altstack_len - PTREC_ALTSTACK_SIZE) / 2,
				.ss_size = PTREC_ALTSTACK_SIZE,
				.ss_flags = 0,
			};
			if (ptrec_kernel_sigaltstack(&ours, NULL) != 0)
				return ptrec_kernel_sigaltstack(ss, old);
		}
		altstack_hidden = 1;
	} else if (ss) {
		if (ptrec_kernel_sigaltstack(ss, NULL) != 0)
			return -1;
		altstack_hidden = 0;
	}
	if (old)
		*old = view;
	return 0;
}

/* ---- jumps -------------------------------------------------------------------------------- */

/* The stack pointer env jumps to: glibc x86-64 keeps it in __jmpbuf[6] (JB_RSP), mangled as
 * rol(sp ^ guard, 17) with the pointer guard at %fs:0x30. */
#if defined(__x86_64__)
static uintptr_t jump_target_sp(const struct __jmp_buf_tag *env)
{
	uintptr_t guard, v = (uintptr_t)env->__jmpbuf[6];
	__asm__("movq %%fs:0x30, %0" : "=r"(guard));
	return ((v >> 17) | (v << 47)) ^ guard;
}
#else
/* glibc aarch64 keeps it in __jmpbuf[13] (JB_SP), mangled as sp ^ guard with a guard
 * (__pointer_chk_guard) that no public symbol gives: learned from a _setjmp of our own, whose
 * stack pointer is this function's. */
__attribute__((noinline)) static uintptr_t jump_target_sp(const struct __jmp_buf_tag *env)
{
	jmp_buf own;
	uintptr_t sp;
	if (_setjmp(own))
		return 0;
	__asm__ volatile("mov %0, sp" : "=r"(sp));
	uintptr_t guard = (uintptr_t)own[0].__jmpbuf[13] ^ sp;
	return (uintptr_t)env->__jmpbuf[13] ^ guard;
}
#endif

__attribute__((noreturn)) static void jump_through(longjmp_fn *real, const char *name,
                                                    struct __jmp_buf_tag *env, int val)
{
	ptrec_crash_longjmp(jump_target_sp(env));
	if (!*real)
		*real = (longjmp_fn)next(name);
	if (!*real)
		abort();
	(*real)(env, val);
}

PTREC_API WEAK __attribute__((noreturn)) void siglongjmp(sigjmp_buf env, int val)
{
	jump_through(&real_siglongjmp, "siglongjmp", env, val);
}

PTREC_API WEAK __attribute__((noreturn)) void longjmp(jmp_buf env, int val)
{
	jump_through(&real_longjmp, "longjmp", env, val);
}

PTREC_API WEAK __attribute__((noreturn)) void _longjmp(jmp_buf env, int val)
{
	jump_through(&real__longjmp, "_longjmp", env, val);
}

/* glibc's _FORTIFY_SOURCE longjmp; no header declares it. */
void __longjmp_chk(jmp_buf env, int val) __attribute__((noreturn));

PTREC_API WEAK __attribute__((noreturn)) void __longjmp_chk(jmp_buf env, int val)
{
	jump_through(&real_longjmp_chk, "__longjmp_chk", env, val);
}

/* ---- exits -------------------------------------------------------------------------------- */

/* Writes the dump first when called from inside the application's crash handler, then ends
 * the process through libc's function (or the raw syscall when there is none). */
__attribute__((noreturn)) static void exit_through(exit_fn real, int status)
{
	ptrec_crash_exit_wait();
	ptrec_crash_exiting();
	if (real)
		real(status);
	syscall(SYS_exit_group, status);
	__builtin_unreachable();
}

/* A return from main exits through libc's own exit, past the interposer: the crash of another
 * thread meanwhile is waited for here, after the application's exit handlers and destructors. */
__attribute__((destructor)) static void exit_wait(void)
{
	ptrec_crash_exit_wait();
}

PTREC_API WEAK __attribute__((noreturn)) void exit(int status)
{
	exit_through(real_exit, status);
}

PTREC_API WEAK __attribute__((noreturn)) void _exit(int status)
{
	exit_through(real__exit, status);
}

PTREC_API WEAK __attribute__((noreturn)) void _Exit(int status)
{
	exit_through(real__Exit, status);
}
