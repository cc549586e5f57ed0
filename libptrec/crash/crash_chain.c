/* crash_chain.c — the application's actions for the crash signals, kept while libptrec's handler
 * stays the kernel's, and running one of them with the kernel's own semantics.
 *
 * ASYNC-SIGNAL-SAFE ISLAND: everything here may run in a signal handler.  It may not use
 * malloc/free, stdio, locks that a signal could find held by its own thread, or lazily
 * allocated TLS (only initial-exec TLS).  The action table is static.
 *
 * The table: the application's sigaction for each crash signal, as the interposed sigaction()
 * family (runtime/signal_interpose.c) stores it and reads it back.  Each entry is double
 * buffered: a writer fills the idle copy and publishes it with one atomic store, so a handler
 * interrupting a writer reads a whole action.  Writers of different threads take a spin lock
 * by tid; a writer interrupted by a handler that writes again (a crash handler resetting itself
 * to SIG_DFL) finds its own tid and goes on, the lock never deadlocks a thread with itself.
 *
 * Running a handler on the stack the application asked for: libptrec's handler runs on its
 * own small alternate stack; the application's runs on its own alternate stack (SA_ONSTACK and
 * it has one), else on the interrupted stack below its red zone.  While it runs there, the
 * alternate stack we came from is shrunk to end below our frame, so a signal delivered inside
 * the application's handler (it re-raises, or faults) lands below our frame instead of
 * overwriting it, and is restored when the handler returns. */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/arch.h"
#include "crash/crash.h"
#include "crash/rseq_pause.h"

#ifndef SA_RESTORER
#define SA_RESTORER 0x04000000 /* x86-64 kernel ABI; glibc keeps it out of <signal.h> */
#endif
#define RED_ZONE 128u                        /* x86-64 ABI: bytes below SP a leaf may use */
#define STACK_SPAN ((uintptr_t)256 << 20)    /* how far down a thread stack may reach */
#define OVERFLOW_REACH ((uintptr_t)64 << 10) /* a fault this far below SP is a stack overflow */
#define ALT_MARGIN 512u                      /* bytes kept between our frame and a nested one */
#define ALT_MIN ((uintptr_t)8 << 10)         /* smallest shrunk alternate stack */

const int ptrec_crash_signals[PTREC_NCRASH] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP,
                                               SIGSYS};
ptrec_sigaction_fn ptrec_real_sigaction;

struct action_entry {
	struct sigaction act[2];  /* the two copies */
	_Atomic unsigned cur;     /* which copy is current */
};

static struct action_entry actions[PTREC_NCRASH];
static _Atomic int managing;        /* 1 while the table is the application's truth */
static _Atomic int writer;          /* tid of the thread writing the table, 0 if none */
static void (*glibc_restorer)(void); /* what glibc puts in sa_restorer, once seen */
static int restorer_known;          /* glibc_restorer is valid */

/* Crash signals blocked virtually on this thread (bit per index): those the running
 * application handlers' masks add, and the fault signals the thread's own mask blocks (the
 * interposed sigprocmask/pthread_sigmask keep those out of the kernel's mask: a fault the kernel
 * finds blocked kills with SIG_DFL, past libptrec).  And those sent while blocked. */
static __thread unsigned vblocked __attribute__((tls_model("initial-exec")));
static __thread unsigned vpending __attribute__((tls_model("initial-exec")));
static __thread unsigned vpending_proc __attribute__((tls_model("initial-exec"))); /* of them,
                                                 sent to the process (kill, sigqueue) */
/* The first bytes of each held-back signal's siginfo (signo, errno, code, and the sender's pid,
 * uid and sigqueue value), so it is sent again as it came. */
#define VINFO_BYTES 32
static __thread unsigned char vinfo[PTREC_NCRASH][VINFO_BYTES]
	__attribute__((tls_model("initial-exec")));

/* The application handlers running on this thread, innermost last: their stack range and the
 * virtual mask before them, so a handler left with siglongjmp is noticed and its mask undone. */
#define VFRAMES 8
struct vframe {
	uintptr_t lo, hi; /* where the handler runs */
	unsigned outer;   /* vblocked before it */
	int shrunk;       /* 1: the alternate stack was shrunk for it, full is the whole one */
	stack_t full;
};
static __thread struct vframe vframes[VFRAMES] __attribute__((tls_model("initial-exec")));
static __thread int vdepth __attribute__((tls_model("initial-exec")));

/* The crash signals a thread's mask may block for real: SIGABRT is never forced by the kernel
 * (abort() unblocks it itself). */
#define ABRT_BIT (1u << 4)
#define FORCED_BITS (((1u << PTREC_NCRASH) - 1) & ~ABRT_BIT)
_Static_assert(PTREC_NCRASH == 7, "ABRT_BIT is SIGABRT's index in ptrec_crash_signals");

int ptrec_chain_index(int signo)
{
	for (int i = 0; i < PTREC_NCRASH; i++)
		if (ptrec_crash_signals[i] == signo)
			return i;
	return -1;
}

int ptrec_chain_managed(int signo)
{
	return atomic_load(&managing) && !ptrec_crash_foreign() ? ptrec_chain_index(signo) : -1;
}

void ptrec_chain_manage(int on)
{
	atomic_store(&managing, on);
}

void ptrec_chain_get(int i, struct sigaction *out)
{
	*out = actions[i].act[atomic_load(&actions[i].cur) & 1];
}

void ptrec_chain_learn_restorer(const struct sigaction *rb)
{
	if (rb->sa_flags & SA_RESTORER) {
		glibc_restorer = rb->sa_restorer;
		restorer_known = 1;
	}
}

void ptrec_chain_set(int i, const struct sigaction *act, int raw)
{
	struct sigaction a = *act; /* a bad pointer faults here, before the lock */
	int me = (int)ptrec_gettid(), expect = 0, locked = 0;

	if (!raw) {
		if (restorer_known) {
			a.sa_flags |= SA_RESTORER;
			a.sa_restorer = glibc_restorer;
		}
		sigdelset(&a.sa_mask, SIGKILL);
		sigdelset(&a.sa_mask, SIGSTOP);
	}
	while (!atomic_compare_exchange_weak(&writer, &expect, me)) {
		if (expect == me)
			break; /* our own thread, interrupted while writing: go on */
		expect = 0;
		struct timespec ts = {0, 100000};
		nanosleep(&ts, NULL);
	}
	locked = expect == 0;
	unsigned next = (atomic_load(&actions[i].cur) + 1) & 1;
	actions[i].act[next] = a;
	atomic_store(&actions[i].cur, next);
	if (locked)
		atomic_store(&writer, 0);
}

int ptrec_chain_blocked(int i)
{
	return (vblocked >> i) & 1u;
}

int ptrec_kernel_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	return (int)syscall(SYS_rt_sigprocmask, how, set, old, (long)(_NSIG / 8));
}

int ptrec_kernel_sigaltstack(const stack_t *ss, stack_t *old)
{
	return (int)syscall(SYS_sigaltstack, ss, old);
}

/* Sends again the crash signals sent while blocked that are no longer blocked, to this thread,
 * with the siginfo they came with (the application's handler sees the same si_code, sender and
 * sigqueue value: a process may queue any siginfo to its own thread); plain tgkill if refused. */
static void deliver_unblocked(void)
{
	for (int i = 0; i < PTREC_NCRASH; i++) {
		if (!(vpending & ~vblocked & (1u << i)))
			continue;
		vpending &= ~(1u << i);
		vpending_proc &= ~(1u << i);
		int sig = ptrec_crash_signals[i];
		long pid = (long)getpid(), tid = (long)ptrec_gettid();
		siginfo_t si;
		__builtin_memset(&si, 0, sizeof(si));
		__builtin_memcpy(&si, vinfo[i], VINFO_BYTES);
		if (si.si_signo != sig || syscall(SYS_rt_tgsigqueueinfo, pid, tid, (long)sig, &si) != 0)
			syscall(SYS_tgkill, pid, tid, (long)sig);
	}
}

unsigned ptrec_chain_strip(sigset_t *set)
{
	unsigned bits = 0;
	for (int i = 0; i < PTREC_NCRASH; i++) {
		if (sigismember(set, ptrec_crash_signals[i]) != 1)
			continue;
		bits |= 1u << i;
		if (FORCED_BITS & (1u << i))
			sigdelset(set, ptrec_crash_signals[i]);
	}
	return bits;
}

void ptrec_chain_unstrip(sigset_t *set, unsigned bits)
{
	for (int i = 0; i < PTREC_NCRASH; i++)
		if (bits & (1u << i))
			sigaddset(set, ptrec_crash_signals[i]);
}

/* The kernel's mask (signals 1-64) when the thread's mask last changed through libptrec with
 * fault signals virtually blocked (kmask_set: 1), to notice a change made past libptrec. */
static __thread uint64_t kmask __attribute__((tls_model("initial-exec")));
static __thread int kmask_set __attribute__((tls_model("initial-exec")));

static uint64_t mask_word(const sigset_t *set)
{
	uint64_t w;
	memcpy(&w, set, sizeof(w));
	return w;
}

unsigned ptrec_chain_mask(int how, unsigned bits)
{
	unsigned old = vblocked;
	sigset_t k;

	if (how == SIG_BLOCK)
		vblocked |= bits & FORCED_BITS;
	else if (how == SIG_UNBLOCK)
		vblocked &= ~bits;
	else if (how == SIG_SETMASK)
		vblocked = bits & FORCED_BITS;
	kmask_set = (vblocked & FORCED_BITS) && ptrec_kernel_sigmask(SIG_BLOCK, NULL, &k) == 0;
	if (kmask_set)
		kmask = mask_word(&k);
	deliver_unblocked();
	return old;
}

void ptrec_chain_mask_check(const ucontext_t *uc)
{
	/* Only a signal taken out (a raw SIG_SETMASK or SIG_UNBLOCK): the handler of another
	 * signal runs with more blocked, and a fault there must still find the thread's block. */
	if (vdepth == 0 && kmask_set && (kmask & ~mask_word(&uc->uc_sigmask))) {
		vblocked &= ~FORCED_BITS;
		kmask_set = 0;
	}
}

unsigned ptrec_chain_thread_mask(void)
{
	return vblocked & FORCED_BITS;
}

/* Leaves the application handler levels of this thread above depth: the virtual mask is again
 * outer (the one before the outermost of them), signals sent while they blocked them are
 * delivered, and the alternate stack is made whole again (full: as it was before the outermost
 * level that shrank it, NULL when none did).  The order of the last two is the one difference
 * between the ways a level ends:
 * - returned (abandoned = 0): libptrec's frame still lives on the alternate stack above the
 *   shrunk part; the signals are delivered first, so their handler lands below that frame, and
 *   counts as inside the level it returned from;
 * - abandoned (1, left by a jump: the frames above the target are dead, and the code that runs
 *   next may be on the alternate stack): it is made whole first, then the signals come, as
 *   they would at the kernel's mask change inside siglongjmp.
 * Leaving the last level registers the rseq area paused for it again (rseq_pause.c).
 * sigaltstack is refused (EPERM) while we run on the alternate stack: it then stays shrunk. */
static void levels_leave(int depth, unsigned outer, const stack_t *full, int abandoned)
{
	vblocked = outer;
	vdepth = depth;
	if (abandoned && full)
		ptrec_kernel_sigaltstack(full, NULL);
	deliver_unblocked();
	if (depth == 0)
		ptrec_rseq_resume();
	if (!abandoned && full)
		ptrec_kernel_sigaltstack(full, NULL);
}

void ptrec_chain_left(uintptr_t sp)
{
	int depth = vdepth;
	const stack_t *full = NULL;

	if (depth > VFRAMES)
		return; /* levels beyond the frames kept are never judged */
	for (; depth > 0; depth--) {
		const struct vframe *f = &vframes[depth - 1];
		if (sp >= f->lo && sp < f->hi)
			break;
		if (f->shrunk)
			full = &f->full;
	}
	if (depth < vdepth)
		levels_leave(depth, vframes[depth].outer, full, 1);
}

void ptrec_chain_defer(int i, const siginfo_t *info)
{
	_Static_assert(sizeof(siginfo_t) >= VINFO_BYTES, "siginfo_t holds the bytes kept");
	if (info)
		__builtin_memcpy(vinfo[i], info, VINFO_BYTES);
	else
		__builtin_memset(vinfo[i], 0, VINFO_BYTES);
	vpending |= 1u << i;
	if (ptrec_sent_to_process(info))
		vpending_proc |= 1u << i;
}

void ptrec_chain_exiting(void)
{
	unsigned proc = vpending_proc;
	uint64_t set = 0; /* the kernel's set (bit s-1 for signal s): no libc or sanitizer
	                     function writes to this stack, which the abandoned handler left
	                     poisoned for AddressSanitizer */

	vpending = vpending_proc = 0;
	ptrec_chain_left(UINTPTR_MAX);
	if (!proc)
		return;
	for (int i = 0; i < PTREC_NCRASH; i++)
		if (proc & (1u << i))
			set |= 1ull << (ptrec_crash_signals[i] - 1);
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, &set, NULL, sizeof(set));
	for (int i = 0; i < PTREC_NCRASH; i++)
		if (proc & (1u << i))
			kill(getpid(), ptrec_crash_signals[i]);
}

/* ptrec_call_on_stack: frame-pointer based, with CFI, so an unwinder in the application's
 * handler walks through it into libptrec's handler and the signal frame.
 *
 * The call it makes runs on the application's stack, above libptrec's signal stack: to gdb the
 * frame that switched stacks is then "inner" to the one it called, and a backtrace from the
 * application's handler (a core dumped after the handler raised the signal again: zstd's,
 * Redis's) stopped there ("previous frame inner to this frame (corrupt stack?)"), short of the
 * fault.  gdb lets exactly one function switch stacks that way, the split-stack __morestack
 * (it looks the frame's function up by that name): the switching call lies in a local symbol of
 * that name, invisible to the dynamic linker and to any other object's __morestack. */
#if defined(__x86_64__)
__asm__(".text\n"
        ".p2align 4\n"
        ".globl ptrec_call_on_stack\n"
        ".hidden ptrec_call_on_stack\n"
        ".type ptrec_call_on_stack,@function\n"
        "ptrec_call_on_stack:\n"
        ".cfi_startproc\n"
        "pushq %rbp\n"
        ".cfi_def_cfa_offset 16\n"
        ".cfi_offset %rbp, -16\n"
        "movq %rsp, %rbp\n"
        ".cfi_def_cfa_register %rbp\n"
        ".type __morestack,@function\n"
        "__morestack:\n"
        "andq $-16, %rdi\n"
        "movq %rdi, %rsp\n"
        "movq %rsi, %rax\n"
        "movq %rdx, %rdi\n"
        "callq *%rax\n"
        "movq %rbp, %rsp\n"
        "popq %rbp\n"
        ".cfi_def_cfa %rsp, 8\n"
        "ret\n"
        ".size __morestack, .-__morestack\n"
        ".cfi_endproc\n"
        ".size ptrec_call_on_stack, .-ptrec_call_on_stack\n");
#else
/* aarch64: the same with a frame record (x29, x30) and x29 as the CFA register; x16 is the
 * scratch register for the function pointer (AAPCS64's IP0). */
__asm__(".text\n"
        ".p2align 4\n"
        ".globl ptrec_call_on_stack\n"
        ".hidden ptrec_call_on_stack\n"
        ".type ptrec_call_on_stack,%function\n"
        "ptrec_call_on_stack:\n"
        ".cfi_startproc\n"
        "stp x29, x30, [sp, #-16]!\n"
        ".cfi_def_cfa_offset 16\n"
        ".cfi_offset x29, -16\n"
        ".cfi_offset x30, -8\n"
        "mov x29, sp\n"
        ".cfi_def_cfa_register x29\n"
        ".type __morestack,%function\n"
        "__morestack:\n"
        "and x0, x0, #-16\n"
        "mov sp, x0\n"
        "mov x16, x1\n"
        "mov x0, x2\n"
        "blr x16\n"
        "mov sp, x29\n"
        "ldp x29, x30, [sp], #16\n"
        ".cfi_def_cfa sp, 0\n"
        ".cfi_restore x29\n"
        ".cfi_restore x30\n"
        "ret\n"
        ".size __morestack, .-__morestack\n"
        ".cfi_endproc\n"
        ".size ptrec_call_on_stack, .-ptrec_call_on_stack\n");
#endif

/* One call of the application's handler. */
struct app_call {
	const struct sigaction *act; /* the application's action */
	int index;                   /* crash signal index */
	int signo;                   /* the signal */
	siginfo_t *info;             /* as the kernel gave it */
	ucontext_t *uc;              /* as the kernel gave it: changes take effect on return */
	sigset_t mask;               /* the mask the handler runs with */
	unsigned vmask;              /* crash signals it blocks virtually */
	uintptr_t lo, hi;            /* the stack range it runs in */
	int shrink;                  /* 1: shrink the alternate stack while it runs */
	stack_t shrunk, full;        /* the alternate stack shrunk below our frame, and whole */
};

static void app_call_run(void *p)
{
	struct app_call *c = p;
	struct vframe level = {c->lo, c->hi, vblocked, c->shrink, c->full};
	int depth = vdepth;
	sigset_t saved;

	if (c->shrink)
		ptrec_kernel_sigaltstack(&c->shrunk, NULL);
	if (depth < VFRAMES)
		vframes[depth] = level;
	vdepth = depth + 1;
	vblocked = level.outer | c->vmask;
	/* the application's handler may rewrite the TCB (a memory test): rseq_pause.c */
	if (depth == 0)
		ptrec_rseq_pause();
	ptrec_kernel_sigmask(SIG_SETMASK, &c->mask, &saved);
	if (c->act->sa_flags & SA_SIGINFO)
		c->act->sa_sigaction(c->signo, c->info, c->uc);
	else
		c->act->sa_handler(c->signo);
	ptrec_kernel_sigmask(SIG_SETMASK, &saved, NULL);
	levels_leave(depth, level.outer, c->shrink ? &c->full : NULL, 0);
}

/* 1 when a SIGSEGV at si_addr is the interrupted stack running out below sp. */
static int stack_overflowed(int signo, const siginfo_t *info, uintptr_t sp)
{
	uintptr_t a;

	if (signo != SIGSEGV || !info || info->si_code <= 0)
		return 0;
	a = (uintptr_t)info->si_addr;
	return a < sp + RED_ZONE && a + OVERFLOW_REACH >= sp;
}

static int on_stack(uintptr_t sp, const stack_t *ss)
{
	return sp >= (uintptr_t)ss->ss_sp && sp - (uintptr_t)ss->ss_sp < ss->ss_size;
}

int ptrec_chain_run(int i, const struct sigaction *act, int signo, siginfo_t *info,
                    ucontext_t *uc, struct ptrec_chain_stack *where)
{
	struct app_call c;
	stack_t ss;
	uintptr_t here = (uintptr_t)__builtin_frame_address(0);
	uintptr_t isp = (uintptr_t)ptrec_uc_sp(uc);
	struct ptrec_thread *t = ptrec_slot_self();
	uintptr_t top = 0;

	memset(&c, 0, sizeof(c));
	c.act = act;
	c.index = i;
	c.signo = signo;
	c.info = info;
	c.uc = uc;

	int has_alt = ptrec_kernel_sigaltstack(NULL, &ss) == 0 && !(ss.ss_flags & SS_DISABLE);
	int ours = has_alt && t && t->altstack && (char *)ss.ss_sp > (char *)t->altstack &&
	           (char *)ss.ss_sp < (char *)t->altstack + t->altstack_len;
	int here_alt = has_alt && on_stack(here, &ss);

	/* libptrec's alternate stack is the one the thread reads back (sigaltstack) until it sets
	 * its own, and a runtime may adopt it as its signal stack: Go's cgo threads take the one
	 * they find, and Go's handler throws "non-Go code set up signal handler without
	 * SA_ONSTACK flag" when it runs anywhere else (a recovered nil dereference killed every
	 * Go program under `ptrec run`).  So an SA_ONSTACK handler runs on it too, below our
	 * frame, as the kernel would run it there; an overflow still dies below (the
	 * application gave the thread no stack for it). */
	int adopted = ours && here_alt && !on_stack(isp, &ss) && !stack_overflowed(signo, info, isp);

	if ((act->sa_flags & SA_ONSTACK) && has_alt && (!ours || adopted)) {
		/* The application's alternate stack: we run on it already (the kernel put us
		 * there), or the interrupted code did. */
		where->lo = (uintptr_t)ss.ss_sp;
		where->hi = (uintptr_t)ss.ss_sp + ss.ss_size;
		if (!here_alt)
			top = on_stack(isp, &ss) ? isp - RED_ZONE : where->hi;
	} else if (stack_overflowed(signo, info, isp)) {
		return -1;
	} else if (here_alt && !on_stack(isp, &ss)) {
		top = isp - RED_ZONE;
		where->hi = top;
		where->lo = top > STACK_SPAN ? top - STACK_SPAN : 0;
	} else {
		where->hi = here; /* already on the stack it wants: run below us */
		where->lo = here > STACK_SPAN ? here - STACK_SPAN : 0;
	}
	if (top && here_alt) {
		/* Nested deliveries must land below our frame on the stack we leave. */
		uintptr_t sp = ptrec_current_sp();
		uintptr_t end = (sp - ALT_MARGIN) & ~(uintptr_t)15;
		c.full = ss;
		c.full.ss_flags = 0;
		c.shrunk = c.full;
		if (end > (uintptr_t)ss.ss_sp + ALT_MIN) {
			c.shrunk.ss_size = end - (uintptr_t)ss.ss_sp;
			c.shrink = 1;
		}
	}

	/* The mask: the interrupted one, plus the handler's sa_mask, plus the signal itself
	 * unless SA_NODEFER.  The fault signals it adds are blocked virtually; SIGABRT for real,
	 * as a thread's own mask blocks it (FORCED_BITS): abort() unblocks it with glibc's
	 * internal sigprocmask, past libptrec, before it raises it.  Virtually blocked, the
	 * SIGABRT of a handler that blocks every signal and calls abort() (HotSpot's
	 * VMError::report_and_die) was held back, and abort() then set SIG_DFL past libptrec
	 * and died without a dump. */
	c.mask = uc->uc_sigmask;
	for (int s = 1; s < NSIG; s++) {
		int add = sigismember(&act->sa_mask, s) == 1 ||
		          (s == signo && !(act->sa_flags & SA_NODEFER));
		if (!add || sigismember(&uc->uc_sigmask, s) == 1)
			continue;
		int k = ptrec_chain_index(s);
		if (k >= 0 && (FORCED_BITS & (1u << k)))
			c.vmask |= 1u << k;
		else
			sigaddset(&c.mask, s);
	}
	if (act->sa_flags & SA_RESETHAND) {
		struct sigaction dfl;
		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		sigemptyset(&dfl.sa_mask);
		ptrec_chain_set(i, &dfl, 0);
	}
	c.lo = where->lo;
	c.hi = where->hi;
	if (top)
		ptrec_call_on_stack(top, app_call_run, &c);
	else
		app_call_run(&c);
	return 0;
}
