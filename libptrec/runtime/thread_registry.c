/* thread_registry.c — attached threads: their rings, signal stacks, creation and exit, fork.
 *
 * Slots live in a static array so the crash path can walk them without locks (see
 * capture/thread_slots.h for the pin protocol).  A thread is attached by ptrec_init (the caller),
 * by ptrec_thread_attach, or automatically when it was created with pthread_create after init:
 *
 * - Shared library (libptrec.so): this file defines pthread_create, which the dynamic linker
 *   binds before libc's for the program and every library loaded after libptrec.  It wraps the
 *   start routine (attach, then run) and calls the real function found with
 *   dlsym(RTLD_NEXT, "pthread_create").
 * - Static linking of libptrec into a dynamically linked program: the same definition in the
 *   executable wins, and RTLD_NEXT still finds libc's.
 * - Fully static programs (-static): dlsym(RTLD_NEXT) cannot work.  Link with
 *   -Wl,--wrap=pthread_create (we define __wrap_pthread_create, which calls
 *   __real_pthread_create), or call ptrec_thread_attach() at the start of each thread.
 *
 * Thread exit detaches through a pthread key destructor (also after pthread_exit).  Each
 * attached thread gets a sigaltstack unless it already has one, so stack overflows reach the
 * crash handler.  fork: the child keeps only the forking thread; it gets a fresh ring (or none
 * with PTREC_F_NO_FORK_RINGS) and the other slots are released.  exec: perf fds are opened
 * close-on-exec and soft rings are plain memory, so nothing survives an exec. */
#include "config.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/settings.h"
#include "runtime/recorder.h"

#define SLOT_ORPHANED 0x100u /* slot flag: shut down while its thread ran; the owner frees it */
#define SLOT_ALTSTACK 0x200u /* slot flag: the thread has an alternate signal stack */

static pthread_key_t exit_key;
static pthread_once_t registry_once = PTHREAD_ONCE_INIT;
static int registry_ok;

/* ---- signal stacks --------------------------------------------------------------------- */

int ptrec_thread_altstack_map(struct ptrec_thread *t)
{
	long page = sysconf(_SC_PAGESIZE);

	if (t->altstack)
		return 0;
	size_t len = PTREC_ALTSTACK_SIZE + 2 * (size_t)page;
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK,
	               -1, 0);
	if (p == MAP_FAILED)
		return -1;
	mprotect(p, (size_t)page, PROT_NONE);
	mprotect((char *)p + page + PTREC_ALTSTACK_SIZE, (size_t)page, PROT_NONE);
	t->altstack = p;
	t->altstack_len = len;
	return 0;
}

/* Gives the calling thread a sigaltstack, with a guard page on each side (an overflow of it, or
 * a write running up from below, faults instead of reaching other memory), unless it has one. */
static void altstack_install(struct ptrec_thread *t)
{
	stack_t old, ss;

	if (ptrec_kernel_sigaltstack(NULL, &old) == 0 && !(old.ss_flags & SS_DISABLE)) {
		t->flags |= SLOT_ALTSTACK;
		return; /* the application brought its own */
	}
	if (ptrec_thread_altstack_map(t) != 0)
		return;
	ss.ss_sp = (char *)t->altstack + (t->altstack_len - PTREC_ALTSTACK_SIZE) / 2;
	ss.ss_size = PTREC_ALTSTACK_SIZE;
	ss.ss_flags = 0;
	if (ptrec_kernel_sigaltstack(&ss, NULL) != 0) {
		munmap(t->altstack, t->altstack_len);
		t->altstack = NULL;
		t->altstack_len = 0;
		return;
	}
	t->flags |= SLOT_ALTSTACK;
}

/* Removes the calling thread's sigaltstack mapping: taken out of the kernel first when it is
 * still the thread's alternate stack, unmapped too when the application replaced it by its own
 * (it was left mapped then: every thread of a server that sets its own alternate stack lost
 * the 64 KiB and two guard pages).  Left mapped only while the thread runs on it (pthread_exit
 * from a handler). */
static void altstack_remove(struct ptrec_thread *t)
{
	stack_t old, ss;
	char *lo = t->altstack, *here = __builtin_frame_address(0);

	if (!lo)
		return;
	int running = here >= lo && here < lo + t->altstack_len;
	int current = ptrec_kernel_sigaltstack(NULL, &old) == 0 && !(old.ss_flags & SS_DISABLE) &&
	              (char *)old.ss_sp > lo && (char *)old.ss_sp < lo + t->altstack_len;
	if (!running && current && !(old.ss_flags & SS_ONSTACK)) {
		memset(&ss, 0, sizeof(ss));
		ss.ss_flags = SS_DISABLE;
		current = ptrec_kernel_sigaltstack(&ss, NULL) != 0;
	}
	if (!running && !current)
		munmap(lo, t->altstack_len);
	t->altstack = NULL;
	t->altstack_len = 0;
}

/* ---- rings ------------------------------------------------------------------------------ */

/* Reserves `size` bytes of the budget.  Returns 1 on success. */
static int budget_take(size_t size)
{
	size_t cur = atomic_load(&ptrec_rec.memory_used);
	do {
		if (cur + size > ptrec_crash.cfg.memory_budget || cur + size < cur)
			return 0;
	} while (!atomic_compare_exchange_weak(&ptrec_rec.memory_used, &cur, cur + size));
	return 1;
}

static void budget_give(size_t size)
{
	atomic_fetch_sub(&ptrec_rec.memory_used, size);
}

/* Opens the calling thread's ring: the configured size, halved on -PTREC_ENOMEM or when the
 * budget is short, down to the smallest ring; any other refusal runs the thread untraced.
 * Then why (when not NULL) gets the backend's reason, or says the budget was too small. */
static void ring_open(struct ptrec_thread *t, char *why, size_t why_len)
{
	const struct ptrec_backend_ops *ops = ptrec_rec.ops;
	char reason[PTREC_REASON_MAX];
	size_t size = ptrec_crash.cfg.ring_size;

	t->ops = NULL;
	t->flags |= PTREC_THREAD_UNTRACED;
	if (!ops)
		return;
	for (; size >= PTREC_RING_MIN; size /= 2) {
		if (!budget_take(size))
			continue;
		memset(&t->ring, 0, sizeof(t->ring));
		t->ring.fd = -1;
		reason[0] = '\0';
		int r = ops->open(&t->ring, size, &ptrec_crash.cfg, reason, sizeof(reason));
		if (r == 0) {
			t->ops = ops;
			t->charged = size;
			t->flags &= ~PTREC_THREAD_UNTRACED;
			return;
		}
		budget_give(size);
		if (why)
			snprintf(why, why_len, "%s", reason[0] ? reason : ptrec_strerror(r));
		if (r != -PTREC_ENOMEM)
			return;
	}
	if (why && !why[0])
		snprintf(why, why_len, "the memory budget (PTREC_MEMORY_BUDGET) has no room for a "
		         "ring of %zu bytes", (size_t)PTREC_RING_MIN);
}

static void ring_close(struct ptrec_thread *t)
{
	if (t->ops) {
		t->ops->close(&t->ring);
		t->ops = NULL;
		budget_give(t->charged);
		t->charged = 0;
	}
	if (t->snap_buf) {
		munmap(t->snap_buf, t->snap_len);
		t->snap_buf = NULL;
		t->snap_len = 0;
	}
}

/* ---- attach / detach -------------------------------------------------------------------- */

static void exit_destructor(void *p)
{
	(void)p;
	/* Ended inside an application crash handler (pthread_exit there): that fault was handled
	 * by ending the thread, as if the handler were left by a jump to above every frame; the
	 * signals it held back go as the kernel's pending signals of a dying thread go. */
	ptrec_crash_thread_exit();
	ptrec_thread_detach();
}

static void atfork_child(void);

static void registry_once_init(void)
{
	if (pthread_key_create(&exit_key, exit_destructor) != 0)
		return;
	pthread_atfork(NULL, NULL, atfork_child);
	registry_ok = 1;
}

int ptrec_registry_init(void)
{
	pthread_once(&registry_once, registry_once_init);
	return registry_ok ? 0 : -PTREC_ENOMEM;
}

/* Claims slot t, EXITED, once nothing pins it and no crash dump is being written: the dead
 * thread's ring is closed.  Returns 1 with t OPENING, else 0 with t left as it was.  The state
 * is claimed before the pins are read, and readers pin before they read the state, so a
 * reader either sees the claim or is seen. */
static int slot_reclaim(struct ptrec_thread *t)
{
	int expect = PTREC_SLOT_EXITED;

	if (!atomic_compare_exchange_strong(&t->state, &expect, PTREC_SLOT_OPENING))
		return 0;
	if (atomic_load(&t->pins) > 0 || atomic_load(&ptrec_crash_in_progress)) {
		atomic_store(&t->state, PTREC_SLOT_EXITED);
		return 0;
	}
	ring_close(t);
	t->name[0] = '\0';
	return 1;
}

int ptrec_thread_attach_why(char *why, size_t why_len)
{
	struct ptrec_thread *t = NULL;

	if (!atomic_load(&ptrec_rec.initialized))
		return -PTREC_ESTATE;
	ptrec_interpose_adopt_mask();
	if (ptrec_slot_self())
		return 0;
	for (unsigned i = 0; i < PTREC_MAX_THREADS; i++) {
		int expect = PTREC_SLOT_FREE;
		if (atomic_compare_exchange_strong(&ptrec_slot_at(i)->state, &expect, PTREC_SLOT_OPENING) ||
		    (expect == PTREC_SLOT_EXITED && slot_reclaim(ptrec_slot_at(i)))) {
			t = ptrec_slot_at(i);
			break;
		}
	}
	if (!t) {
		atomic_fetch_add(&ptrec_rec.threads_untraced, 1);
		if (why)
			snprintf(why, why_len, "all %u thread slots are taken", PTREC_MAX_THREADS);
		return 0; /* more threads than slots: this one runs untraced */
	}
	t->tid = ptrec_gettid();
	t->flags = 0;
	t->charged = 0;
	altstack_install(t);
	ring_open(t, why, why_len);
	if (t->flags & PTREC_THREAD_UNTRACED)
		atomic_fetch_add(&ptrec_rec.threads_untraced, 1);
	else
		atomic_fetch_add(&ptrec_rec.threads_attached, 1);
	ptrec_slot_set_self(t);
	pthread_setspecific(exit_key, t);
	atomic_store(&t->state, PTREC_SLOT_ACTIVE);
	return 0;
}

PTREC_API int ptrec_thread_attach(void)
{
	return ptrec_thread_attach_why(NULL, 0);
}

/* Takes slot t's thread off the attached (or untraced) count. */
static void slot_uncount(struct ptrec_thread *t)
{
	if (t->flags & PTREC_THREAD_UNTRACED)
		atomic_fetch_sub(&ptrec_rec.threads_untraced, 1);
	else
		atomic_fetch_sub(&ptrec_rec.threads_attached, 1);
}

/* Releases slot t (which must be in CLOSING state) once no reader pins it.  During a crash
 * nothing is freed: the dump may still be reading.  While a crash signal is being handled the
 * pins stay until the application's handler returns, and that handler may be waiting for this
 * very thread to end (pthread_join): the exiting thread leaves its ring as it is and its slot
 * EXITED instead of waiting. */
static void slot_release(struct ptrec_thread *t, int own_thread)
{
	while (atomic_load(&t->pins) > 0) {
		if (atomic_load(&ptrec_crash_in_progress))
			return;
		if (atomic_load(&ptrec_crash_holding)) {
			if (!own_thread)
				return; /* a running thread's ring (ptrec_shutdown): leave it CLOSING */
			slot_uncount(t);
			altstack_remove(t);
			prctl(PR_GET_NAME, t->name); /* for the dump: /proc no longer has it */
			atomic_store(&t->state, PTREC_SLOT_EXITED);
			return;
		}
		struct timespec ts = {0, 200000};
		nanosleep(&ts, NULL);
	}
	if (atomic_load(&ptrec_crash_in_progress))
		return;
	slot_uncount(t);
	if (own_thread || !t->ops || t->ops->id != PTREC_BACKEND_INSTRUMENTED)
		ring_close(t);
	else if (t->ops) {
		/* Another thread's soft ring: its hooks may still be storing.  Freeze it and keep
		 * the memory; it stays charged until the process ends. */
		t->ops->freeze(&t->ring);
		t->flags |= SLOT_ORPHANED;
		return;
	}
	if (own_thread)
		altstack_remove(t);
	t->tid = 0;
	t->flags = 0;
	atomic_store(&t->state, PTREC_SLOT_FREE);
}

PTREC_API int ptrec_thread_detach(void)
{
	struct ptrec_thread *t = ptrec_slot_self();
	int expect = PTREC_SLOT_ACTIVE;

	if (!t)
		return -PTREC_ESTATE;
	ptrec_slot_set_self(NULL);
	if (registry_ok)
		pthread_setspecific(exit_key, NULL);
	if (!atomic_compare_exchange_strong(&t->state, &expect, PTREC_SLOT_CLOSING)) {
		if (expect == PTREC_SLOT_CLOSING && (t->flags & SLOT_ORPHANED) &&
		    !atomic_load(&ptrec_crash_in_progress)) {
			/* ptrec_shutdown froze this thread's ring; the owner frees it now. */
			ring_close(t);
			altstack_remove(t);
			t->tid = 0;
			t->flags = 0;
			atomic_store(&t->state, PTREC_SLOT_FREE);
		}
		return -PTREC_ESTATE;
	}
	slot_release(t, 1);
	return 0;
}

void ptrec_registry_shutdown(void)
{
	struct ptrec_thread *me = ptrec_slot_self();

	if (me)
		ptrec_thread_detach();
	for (unsigned i = 0; i < PTREC_MAX_THREADS; i++) {
		struct ptrec_thread *t = ptrec_slot_at(i);
		int expect = PTREC_SLOT_ACTIVE;
		if (!atomic_compare_exchange_strong(&t->state, &expect, PTREC_SLOT_CLOSING)) {
			/* A thread that ended while a fault was handled: its ring goes now. */
			if (expect == PTREC_SLOT_EXITED && slot_reclaim(t)) {
				t->tid = 0;
				t->flags = 0;
				atomic_store(&t->state, PTREC_SLOT_FREE);
			}
			continue;
		}
		/* A thread that is still running: freeze its ring; its exit destructor finds the
		 * slot CLOSING and leaves it.  A soft ring's memory stays mapped (its hooks may be
		 * storing right now); a perf ring is closed. */
		slot_release(t, 0);
	}
}

/* In a fork child only the forking thread exists.  Release every other slot (their memory is
 * a copy) and give the caller a fresh ring, or none with PTREC_F_NO_FORK_RINGS. */
static void atfork_child(void)
{
	struct ptrec_thread *me = ptrec_slot_self();

	ptrec_crash_reset_after_fork();
	ptrec_snap_writer_after_fork();
	if (!atomic_load(&ptrec_rec.initialized))
		return;
	ptrec_crash_prepare_after_fork();
	for (unsigned i = 0; i < PTREC_MAX_THREADS; i++) {
		struct ptrec_thread *t = ptrec_slot_at(i);
		if (t == me || atomic_load(&t->state) == PTREC_SLOT_FREE)
			continue;
		atomic_store(&t->pins, 0);
		ring_close(t);
		t->tid = 0;
		t->flags = 0;
		t->altstack = NULL; /* the owner's stack mapping is copied too; leave it */
		atomic_store(&t->state, PTREC_SLOT_FREE);
	}
	atomic_store(&ptrec_rec.threads_attached, 0);
	atomic_store(&ptrec_rec.threads_untraced, 0);
	if (!me)
		return;
	atomic_store(&me->pins, 0);
	ring_close(me);
	me->tid = ptrec_gettid();
	me->flags &= SLOT_ALTSTACK; /* the signal stack is inherited, the ring is not */
	if (ptrec_crash.cfg.flags & PTREC_F_NO_FORK_RINGS)
		me->flags |= PTREC_THREAD_UNTRACED;
	else
		ring_open(me, NULL, 0);
	if (me->flags & PTREC_THREAD_UNTRACED)
		atomic_store(&ptrec_rec.threads_untraced, 1);
	else
		atomic_store(&ptrec_rec.threads_attached, 1);
}

unsigned ptrec_registry_no_altstack(char *tids, size_t cap)
{
	char line[32];
	unsigned count = 0;
	size_t used = 0;
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;

	if (cap)
		tids[0] = '\0';
	if (!d)
		return 0;
	while ((e = readdir(d)) != NULL) {
		long tid = strtol(e->d_name, NULL, 10);
		int covered = 0;
		if (tid <= 0)
			continue;
		for (unsigned i = 0; i < PTREC_MAX_THREADS && !covered; i++) {
			struct ptrec_thread *t = ptrec_slot_at(i);
			covered = atomic_load(&t->state) == PTREC_SLOT_ACTIVE && t->tid == (pid_t)tid &&
			          (t->flags & SLOT_ALTSTACK);
		}
		if (covered)
			continue;
		count++;
		int n = snprintf(line, sizeof(line), "%s%ld", used ? " " : "", tid);
		if (n > 0 && used + (size_t)n < cap) {
			memcpy(tids + used, line, (size_t)n + 1);
			used += (size_t)n;
		}
	}
	closedir(d);
	return count;
}

/* ---- pthread_create wrapping ------------------------------------------------------------- */

typedef int (*pthread_create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *),
                                 void *);

struct start_args {
	void *(*fn)(void *); /* the application's start routine */
	void *arg;           /* its argument */
	unsigned vmask;      /* the creator's virtually blocked signals, which the thread inherits */
};

static void *start_wrapper(void *p)
{
	struct start_args a = *(struct start_args *)p;
	free(p);
	ptrec_chain_mask(SIG_SETMASK, a.vmask);
	ptrec_thread_attach();
	return a.fn(a.arg);
}

static int create_wrapped(pthread_create_fn real, pthread_t *thr, const pthread_attr_t *attr,
                          void *(*fn)(void *), void *arg)
{
	if (!real)
		return EAGAIN;
	if (!atomic_load(&ptrec_rec.initialized) || (ptrec_crash.cfg.flags & PTREC_F_NO_THREADS))
		return real(thr, attr, fn, arg);
	struct start_args *a = malloc(sizeof(*a));
	if (!a)
		return real(thr, attr, fn, arg);
	a->fn = fn;
	a->arg = arg;
	a->vmask = ptrec_chain_thread_mask();
	int r = real(thr, attr, start_wrapper, a);
	if (r != 0)
		free(a);
	return r;
}

static pthread_create_fn real_pthread_create(void)
{
	static _Atomic(pthread_create_fn) real;
	pthread_create_fn f = atomic_load(&real);
	if (!f) {
		f = (pthread_create_fn)dlsym(RTLD_NEXT, "pthread_create");
		atomic_store(&real, f);
	}
	return f;
}

PTREC_API int pthread_create(pthread_t *thr, const pthread_attr_t *attr, void *(*fn)(void *),
                             void *arg)
{
	return create_wrapped(real_pthread_create(), thr, attr, fn, arg);
}

extern int __real_pthread_create(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *)
	__attribute__((weak));
PTREC_API int __wrap_pthread_create(pthread_t *, const pthread_attr_t *, void *(*)(void *),
                                    void *);

PTREC_API int __wrap_pthread_create(pthread_t *thr, const pthread_attr_t *attr,
                                    void *(*fn)(void *), void *arg)
{
	return create_wrapped(__real_pthread_create, thr, attr, fn, arg);
}

static void *untraced_main(void *p)
{
	struct start_args a = *(struct start_args *)p;
	free(p);
	ptrec_crash_own_thread();
	return a.fn(a.arg);
}

int ptrec_thread_create_untraced(pthread_t *thr, void *(*fn)(void *), void *arg)
{
	pthread_create_fn real = real_pthread_create();
	struct start_args *a;
	sigset_t all, old;

	if (!real)
		real = __real_pthread_create;
	if (!real || !(a = malloc(sizeof(*a))))
		return EAGAIN;
	a->fn = fn;
	a->arg = arg;
	/* The new thread inherits the creator's mask: block everything only for the call. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int r = real(thr, NULL, untraced_main, a);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0)
		free(a);
	return r;
}
