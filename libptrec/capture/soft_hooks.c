/* soft_hooks.c — the compiler instrumentation hooks of the instrumented backend.  Built into
 * libptrec (for programs that only link -lptrec) and into the static archive libptrec_hooks.a,
 * which `pkg-config --libs libptrec` puts on the link line so that the executable carries its
 * own hooks: instrumented code then calls them directly, without the PLT.
 *
 * - `-finstrument-functions` (GCC) and `-finstrument-functions-after-inlining` (Clang) call
 *   __cyg_profile_func_enter(fn, call_site) at function entry and __cyg_profile_func_exit at
 *   exit: a CALL record (a = call site, b = fn) and a RET record (a = fn, b = call site).
 * - __ptrec_fentry is called first thing in every function that was not inlined: from the
 *   patchable entries that ptrec_init patches (patch_entries.c; x86-64 `call`, aarch64
 *   `mov x9, x30; bl`), or from `-pg -mfentry -mfentry-name=__ptrec_fentry` (GCC, x86-64).
 *   An ENTRY record (a = call site, b = the hook's return address, x = the stack pointer's
 *   bits 3..30 at the callee's entry); the decoder infers returns from the stack pointer of
 *   later entries.
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
#if defined(__x86_64__) || defined(__aarch64__)
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

#if defined(__aarch64__)
#include <stddef.h>

/* The ring's fields the hook reads, as numbers for the assembly below (GCC has no naked
 * functions on aarch64, so it is a file-scope asm, which takes no operands). */
#define A64_MASK 72
#define A64_HEAD 64
#define A64_DATA 48
#define A64_SEEN 88
#define A64_STR_(x) #x
#define A64_STR(x) A64_STR_(x)
_Static_assert(offsetof(struct ptrec_ring, soft_mask) == A64_MASK &&
               offsetof(struct ptrec_ring, head) == A64_HEAD &&
               offsetof(struct ptrec_ring, data) == A64_DATA &&
               offsetof(struct ptrec_ring, soft_seen) == A64_SEEN &&
               sizeof(((struct ptrec_ring *)0)->soft_seen) == 4 && PTREC_SOFT_ENTRY == 5,
               "__ptrec_fentry's offsets, kind and soft_seen stores");

/* Called by the patched entry `mov x9, x30; bl __ptrec_fentry` (through the module's stub,
 * `br x16`, when out of a bl's reach) before the callee's prologue: x0..x8 may hold arguments
 * and x30 is the callee's return address moved to x9; x9..x17 are temporaries the callee may
 * clobber anyway (GCC keeps no value in them across a call of a function with a patchable
 * entry: -fipa-ra does not narrow those).  So the hook uses only x9..x17, no stack, and
 * returns with x30 = x9 to x30's value at its entry, the instruction after the bl (`ret x16`:
 * BTI does not check returns).  It starts with BTI c for the stub's br x16.  What it does is
 * ptrec_soft_put() (soft_write.h) of PTREC_SOFT_W0(PTREC_SOFT_ENTRY, a, x) and
 * PTREC_SOFT_W1(b, x), a = x9 (the call site), b = x30 (in the callee), both with the bits above
 * the 48-bit address cleared (pointer authentication), x = sp >> 3 (the callee's entry stack
 * pointer: bl pushes nothing); test_soft_ring checks the record and the registers. */
__asm__(".text\n"
	"\t.p2align 4\n"
	"\t.globl __ptrec_fentry\n"
	"\t.type __ptrec_fentry, %function\n"
	"__ptrec_fentry:\n"
	"\thint #34\n" /* bti c */
	/* the gate (hook_gate.h): nothing else is touched while a crash is handled */
	"\tadrp x16, :got:__ptrec_hook_gate\n"
	"\tldr x16, [x16, #:got_lo12:__ptrec_hook_gate]\n"
	"\tldr w17, [x16]\n"
	"\tcbnz w17, 2f\n"
	/* x16 = the thread's ring (initial-exec TLS, never NULL) */
	"\tmrs x16, tpidr_el0\n"
	"\tadrp x17, :gottprel:__ptrec_soft_tls\n"
	"\tldr x17, [x17, #:gottprel_lo12:__ptrec_soft_tls]\n"
	"\tldr x16, [x16, x17]\n"
	"\tldr x17, [x16, #" A64_STR(A64_MASK) "]\n"
	"\tcbz x17, 3f\n"
	/* x11 = the record's address: data + (head & mask) */
	"\tldr x10, [x16, #" A64_STR(A64_HEAD) "]\n"
	"\tldr x11, [x16, #" A64_STR(A64_DATA) "]\n"
	"\tand x12, x10, x17\n"
	"\tadd x11, x11, x12\n"
	"\tmov x12, sp\n"
	"\tlsr x12, x12, #3\n"
	/* w0 = ENTRY << 60 | (x & 0xfff) << 48 | a */
	"\tand x13, x9, #0xffffffffffff\n"
	"\tbfi x13, x12, #48, #12\n"
	"\tmovz x14, #0x5000, lsl #48\n"
	"\torr x13, x13, x14\n"
	/* w1 = (x >> 12 & 0xffff) << 48 | b */
	"\tand x14, x30, #0xffffffffffff\n"
	"\tlsr x15, x12, #12\n"
	"\tbfi x14, x15, #48, #16\n"
	"\tstp x13, x14, [x11]\n"
	/* then the head that publishes the record */
	"\tadd x10, x10, #16\n"
	"\tstr x10, [x16, #" A64_STR(A64_HEAD) "]\n"
	"2:\tmov x16, x30\n"
	"\tmov x30, x9\n"
	"\tret x16\n"
	/* not recording: note that a hook ran (ptrec_soft_no_ring) */
	"3:\tldr w17, [x16, #" A64_STR(A64_SEEN) "]\n"
	"\tcbnz w17, 2b\n"
	"\tmov w17, #1\n"
	"\tstr w17, [x16, #" A64_STR(A64_SEEN) "]\n"
	"\tb 2b\n"
	"\t.size __ptrec_fentry, .-__ptrec_fentry\n");
#endif
