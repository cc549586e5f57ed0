/* hook_gate.c — the page that stops the instrumentation hooks during a crash (hook_gate.h).
 * ASYNC-SIGNAL-SAFE: atomics, stores, mprotect, gettid, clock_gettime and sched_yield only (no
 * locks that can deadlock: a bounded spin, reentrant on the holding thread). */
#include "config.h"

#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
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

/* How long a call waits for another thread's change of the gate before it gives up. */
#define GATE_WAIT_NS 2000000000LL

static long long now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Takes the right to change the gate: 1 taken, 0 when this thread holds it already (a signal
 * interrupted its own change: that change completes when the handler returns), -1 when the
 * holder did not let go within GATE_WAIT_NS (a handler that never returned on its thread).
 * The bound is time, not a count of tries: on a loaded machine the holder can wait for a CPU
 * far longer than any fixed number of sched_yield calls takes (100000 of them were not enough
 * on a 2-core machine at load 9: test_hook_gate). */
static int gate_take(void)
{
	int me = (int)syscall(SYS_gettid);
	long long start = 0;

	for (unsigned spins = 0;; spins++) {
		int expect = 0;
		if (atomic_compare_exchange_weak(&gate_owner, &expect, me))
			return 1;
		if (expect == me)
			return 0;
		if ((spins & 255) == 0) {
			long long t = now_ns();
			if (!start)
				start = t;
			else if (t - start >= GATE_WAIT_NS)
				return -1;
		}
		syscall(SYS_sched_yield);
	}
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
	if (taken == -1 && !__ptrec_hook_gate.stopped) {
		/* the holder is stuck: close the gate all the same, making the page writable
		 * first (the holder may have made it read-only since the test above) */
		mprotect(&__ptrec_hook_gate, sizeof(__ptrec_hook_gate), PROT_READ | PROT_WRITE);
		__ptrec_hook_gate.stopped = 1;
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		mprotect(&__ptrec_hook_gate, sizeof(__ptrec_hook_gate), PROT_READ);
		r = 1;
	} else if (taken == 1 && !__ptrec_hook_gate.stopped) {
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
	/* a stuck holder (-1): the hooks stay stopped, the safe side */
	taken = gate_take();
	if (taken == 1 && __ptrec_hook_gate.stopped) {
		mprotect(&__ptrec_hook_gate, sizeof(__ptrec_hook_gate), PROT_READ | PROT_WRITE);
		__ptrec_hook_gate.stopped = 0;
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	}
	gate_give(taken);
}
