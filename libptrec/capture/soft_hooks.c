/* soft_hooks.c — the compiler instrumentation hooks of the instrumented backend.  Built into
 * libptrec (for programs that only link -lptrec) and into the static archive libptrec_hooks.a,
 * which `pkg-config --libs libptrec` puts on the link line so that the executable carries its
 * own hooks: instrumented code then calls them directly, without the PLT.
 *
 * - `-finstrument-functions` (GCC) and `-finstrument-functions-after-inlining` (Clang) call
 *   __cyg_profile_func_enter(fn, call_site) at function entry and __cyg_profile_func_exit at
 *   exit: a CALL record (a = call site, b = fn) and a RET record (a = fn, b = call site).
 * - `-pg -mfentry -mfentry-name=__ptrec_fentry` (GCC, the recommended GCC build) calls
 *   __ptrec_fentry first thing in every function that was not inlined: an ENTRY record
 *   (a = call site, b = the hook's return address, x = the stack pointer's bits 3..30); the
 *   decoder infers returns from the stack pointer of later entries.
 * - `-fsanitize-coverage=trace-pc` calls __sanitizer_cov_trace_pc() at every edge: an EDGE
 *   record (a = the instrumented site).
 *
 * ASYNC-SIGNAL-SAFE, no_instrument_function; compiled without instrumentation. */
#include "config.h"

/* GCC: __ptrec_fentry may not use SSE registers (it saves only what it touches), and nothing
 * here needs them. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC target("general-regs-only")
#endif

#include "capture/soft_write.h"

#define HOOK __attribute__((visibility("default"), no_instrument_function))

HOOK void __cyg_profile_func_enter(void *fn, void *call_site);
HOOK void __cyg_profile_func_exit(void *fn, void *call_site);
HOOK void __sanitizer_cov_trace_pc(void);
__attribute__((no_caller_saved_registers)) HOOK void __ptrec_fentry(void);

HOOK void __cyg_profile_func_enter(void *fn, void *call_site)
{
	ptrec_soft_put_kind(PTREC_SOFT_CALL, (uintptr_t)call_site, (uintptr_t)fn);
}

HOOK void __cyg_profile_func_exit(void *fn, void *call_site)
{
	ptrec_soft_put_kind(PTREC_SOFT_RET, (uintptr_t)fn, (uintptr_t)call_site);
}

HOOK void __sanitizer_cov_trace_pc(void)
{
	ptrec_soft_put_kind(PTREC_SOFT_EDGE, (uintptr_t)__builtin_return_address(0), 0);
}

/* Called before the callee's prologue, so every argument register is live: the attribute
 * makes the hook preserve every register it touches.  With the frame pointer this function
 * sets up, f[1] is the hook's return address (in the callee) and f[2] the callee's return
 * address (its call site), which sits at the callee's entry stack pointer. */
__attribute__((no_caller_saved_registers)) HOOK
void __ptrec_fentry(void)
{
	const uint64_t *f = __builtin_frame_address(0);
	uint64_t sp = (uintptr_t)(f + 2);
	ptrec_soft_put(PTREC_SOFT_W0(PTREC_SOFT_ENTRY, f[2], sp >> 3), PTREC_SOFT_W1(f[1], sp >> 3));
}
