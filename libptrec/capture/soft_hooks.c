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
 *   (x86-64 only: aarch64 has no -mfentry; GCC builds there use -finstrument-functions.)
 * - `-fsanitize-coverage=trace-pc` calls __sanitizer_cov_trace_pc() at every edge: an EDGE
 *   record (a = the instrumented site).
 *
 * On aarch64 the hooks are plain AAPCS64 functions (the compiler saves the argument registers
 * around the call; they use only caller-saved registers), and the addresses they record are
 * stripped of pointer-authentication bits (ptrec_soft_code).
 *
 * ASYNC-SIGNAL-SAFE, no_instrument_function; compiled without instrumentation. */
#include "config.h"

/* GCC: nothing here needs floating-point or vector registers. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC target("general-regs-only")
#endif

#include "capture/soft_write.h"

#define HOOK __attribute__((visibility("default"), no_instrument_function))

HOOK void __cyg_profile_func_enter(void *fn, void *call_site);
HOOK void __cyg_profile_func_exit(void *fn, void *call_site);
HOOK void __sanitizer_cov_trace_pc(void);
#if defined(__x86_64__)
HOOK void __ptrec_fentry(void);
#endif

HOOK void __cyg_profile_func_enter(void *fn, void *call_site)
{
	ptrec_soft_put_kind(PTREC_SOFT_CALL, ptrec_soft_code((uintptr_t)call_site),
	                    ptrec_soft_code((uintptr_t)fn));
}

HOOK void __cyg_profile_func_exit(void *fn, void *call_site)
{
	ptrec_soft_put_kind(PTREC_SOFT_RET, ptrec_soft_code((uintptr_t)fn),
	                    ptrec_soft_code((uintptr_t)call_site));
}

HOOK void __sanitizer_cov_trace_pc(void)
{
	ptrec_soft_put_kind(PTREC_SOFT_EDGE,
	                    ptrec_soft_code((uintptr_t)__builtin_return_address(0)), 0);
}

#if defined(__x86_64__)
#include <stddef.h>

/* Called before the callee's prologue, so every argument register (rdi, rsi, rdx, rcx, r8,
 * r9, rax for varargs, r10 for a static chain) is live; r11 and the flags are not (the ABI
 * has no use for them at a call).  Written in assembly so that it touches only r11, rax and
 * rdx, and saves the last two in its red zone (it is a leaf; the kernel skips the red zone
 * when it delivers a signal): no frame, no register save beyond those.  What it does is
 * ptrec_soft_put() (soft_write.h) of PTREC_SOFT_W0(PTREC_SOFT_ENTRY, a, x) and
 * PTREC_SOFT_W1(b, x), a = the callee's return address (its call site, at the callee's entry
 * stack pointer sp = rsp + 8), b = this hook's return address (in the callee), x = sp >> 3;
 * test_soft_ring checks the record against the macros and that every other register
 * survives. */
__attribute__((naked)) HOOK void __ptrec_fentry(void)
{
	__asm__ volatile(
		/* the gate (hook_gate.h): nothing else is touched while a crash is handled */
		"movq __ptrec_hook_gate@GOTPCREL(%%rip), %%r11\n\t"
		"cmpl $0, (%%r11)\n\t"
		"jne 2f\n\t"
		/* r11 = the thread's ring (initial-exec TLS, never NULL) */
		"movq __ptrec_soft_tls@GOTTPOFF(%%rip), %%r11\n\t"
		"movq %%fs:(%%r11), %%r11\n\t"
		"movq %%rax, -8(%%rsp)\n\t"
		"movq %c[mask](%%r11), %%rax\n\t"
		"testq %%rax, %%rax\n\t"
		"jz 3f\n\t"
		"movq %%rdx, -16(%%rsp)\n\t"
		/* rax = the record's address: data + (head & mask) (head < 2^63: the timed bit
		 * of the mask changes nothing) */
		"andq %c[head](%%r11), %%rax\n\t"
		"addq %c[data](%%r11), %%rax\n\t"
		/* w1 = b | (sp >> 15) << 48: x's bits 12..27 above b */
		"leaq 8(%%rsp), %%rdx\n\t"
		"shrq $15, %%rdx\n\t"
		"shlq $48, %%rdx\n\t"
		"orq (%%rsp), %%rdx\n\t"
		"movq %%rdx, 8(%%rax)\n\t"
		/* w0 = ENTRY << 60 | (x & 0xfff) << 48 | a: x's 12 low bits to the top of rdx,
		 * the kind below them, rotated into place */
		"leaq 8(%%rsp), %%rdx\n\t"
		"shrq $3, %%rdx\n\t"
		"shlq $52, %%rdx\n\t"
		"orq %[kind], %%rdx\n\t"
		"rorq $4, %%rdx\n\t"
		"orq 8(%%rsp), %%rdx\n\t"
		"movq %%rdx, (%%rax)\n\t"
		/* then the head that publishes the record (x86 keeps stores in order) */
		"addq $16, %c[head](%%r11)\n\t"
		"movq -16(%%rsp), %%rdx\n\t"
		"movq -8(%%rsp), %%rax\n"
		"2:\tret\n"
		/* not recording: note that a hook ran (ptrec_soft_no_ring) */
		"3:\tmovq -8(%%rsp), %%rax\n\t"
		"cmpl $0, %c[seen](%%r11)\n\t"
		"jne 2b\n\t"
		"movl $1, %c[seen](%%r11)\n\t"
		"ret"
		:
		: [mask] "i"(offsetof(struct ptrec_ring, soft_mask)),
		  [head] "i"(offsetof(struct ptrec_ring, head)),
		  [data] "i"(offsetof(struct ptrec_ring, data)),
		  [seen] "i"(offsetof(struct ptrec_ring, soft_seen)),
		  [kind] "i"(PTREC_SOFT_ENTRY));
}
_Static_assert(PTREC_SOFT_ENTRY < 16 && sizeof(((struct ptrec_ring *)0)->soft_seen) == 4,
               "__ptrec_fentry's kind and soft_seen stores");
#endif
