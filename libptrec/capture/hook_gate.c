/* hook_gate.c — the page that stops the instrumentation hooks during a crash (hook_gate.h).
 * ASYNC-SIGNAL-SAFE: stores and mprotect only. */
#include "config.h"

#include <sys/mman.h>

#include "capture/hook_gate.h"

/* A section of its own in .data (file-backed, initialized), page-aligned and one page long,
 * so mprotect touches nothing else.  Exported for the hooks of libptrec_hooks.a, which are
 * linked into the executable (test_exports lists it). */
__attribute__((visibility("default"))) struct ptrec_hook_gate __ptrec_hook_gate
	__attribute__((aligned(PTREC_GATE_PAGE), section(".data.ptrec_hook_gate")));

int ptrec_hooks_stop(void)
{
	if (__ptrec_hook_gate.stopped)
		return 0;
	__ptrec_hook_gate.stopped = 1;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	mprotect(&__ptrec_hook_gate, sizeof(__ptrec_hook_gate), PROT_READ);
	return 1;
}

void ptrec_hooks_resume(void)
{
	if (!__ptrec_hook_gate.stopped)
		return;
	mprotect(&__ptrec_hook_gate, sizeof(__ptrec_hook_gate), PROT_READ | PROT_WRITE);
	__ptrec_hook_gate.stopped = 0;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}
