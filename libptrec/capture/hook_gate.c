/* hook_gate.c — the page that stops the instrumentation hooks during a crash (hook_gate.h).
 * ASYNC-SIGNAL-SAFE: atomics, stores, mprotect, gettid and sched_yield only (no locks that can
 * deadlock: a bounded spin, reentrant on the holding thread). */
#include "config.h"

#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "capture/hook_gate.h"

/* A section of its own in .data (file-backed, initialized), page-aligned and one page long,
 * so mprotect touches nothing else.  Exported for the hooks of libptrec_hooks.a, which are
 * linked into the executable (test_exports lists it). */
__attribute__((visibility("default"))) struct ptrec_hook_gate __ptrec_hook_gate
	__attribute__((aligned(PTREC_GATE_PAGE), section(".data.ptrec_hook_gate")));

/* The thread changing the gate (its tid), 0 if none.  Stops and resumes come from the crash
 * signals of several threads at once (one thread's episode ends while another, faulting too,
 * stops the hooks): unserialized, a stop could find the gate open and write it after another
 * call had made the page read-only (SIGSEGV in ptrec_hooks_stop), or leave it read-only and
 * open.  Outside the gate's page, which is read-only while the hooks are stopped. */
static _Atomic int gate_owner;

/* Takes the right to change the gate: 1 taken, 0 when this thread holds it already (a signal
 * interrupted its own change: that change completes when the handler returns), -1 when the
 * holder did not let go for a long time (a handler that never returned on its thread): the
 * caller goes on without it, as before the gate was serialized. */
static int gate_take(void)
{
	int me = (int)syscall(SYS_gettid);
	for (int spins = 0; spins < 100000; spins++) {
		int expect = 0;
		if (atomic_compare_exchange_weak(&gate_owner, &expect, me))
			return 1;
		if (expect == me)
			return 0;
		syscall(SYS_sched_yield);
	}
	return -1;
}

static void gate_give(int taken)
{
	if (taken == 1)
		atomic_store(&gate_owner, 0);
}

void ptrec_hooks_after_fork(void)
{
	atomic_store(&gate_owner, 0);
}

int ptrec_hooks_stop(void)
{
	int r = 0, taken;

	if (__ptrec_hook_gate.stopped)
		return 0;
	taken = gate_take();
	if (taken != 0 && !__ptrec_hook_gate.stopped) {
		__ptrec_hook_gate.stopped = 1;
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		mprotect(&__ptrec_hook_gate, sizeof(__ptrec_hook_gate), PROT_READ);
		r = 1;
	}
	gate_give(taken);
	return r;
}

void ptrec_hooks_resume(void)
{
	int taken;

	if (!__ptrec_hook_gate.stopped)
		return;
	taken = gate_take();
	if (taken != 0 && __ptrec_hook_gate.stopped) {
		mprotect(&__ptrec_hook_gate, sizeof(__ptrec_hook_gate), PROT_READ | PROT_WRITE);
		__ptrec_hook_gate.stopped = 0;
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	}
	gate_give(taken);
}
