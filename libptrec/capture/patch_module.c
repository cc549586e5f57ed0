/* patch_module.c — linked into every module (executable or shared library) that links with
 * `pkg-config --libs libptrec`, from the hook archive libptrec_hooks.a: -Wl,-u,__ptrec_patch_module
 * pulls it in (and with it soft_hooks.o, for __ptrec_fentry).  Its constructor registers the
 * module's own __patchable_function_entries section (the linker's __start_/__stop_ symbols,
 * hidden: each module sees its own) with libptrec.so, which writes the calls at ptrec_init
 * (capture/patch_entries.h).  A module without patchable entries registers nothing.
 *
 * Never in libptrec.so itself; compiled without instrumentation. */
#include "config.h"

#include "capture/patch_entries.h"

extern const uintptr_t __start___patchable_function_entries[]
	__attribute__((weak, visibility("hidden")));
extern const uintptr_t __stop___patchable_function_entries[]
	__attribute__((weak, visibility("hidden")));

/* Named by -Wl,-u in libptrec.pc, so the linker takes this file from the archive. */
__attribute__((visibility("hidden"))) struct ptrec_patch_module __ptrec_patch_module = {
	.struct_size = sizeof(struct ptrec_patch_module),
};

/* x86-64 and aarch64 (the architectures with an entry hook and a patcher). */
#if defined(__x86_64__) || defined(__aarch64__)
void __ptrec_fentry(void);

/* The module's way to the hook that a call from any entry reaches: a jump through its GOT (for a
 * shared library mapped beyond a rel32 call's 2 GiB, or a bl's 128 MiB, from every copy of the
 * hook).  aarch64: x16 is the intra-procedure-call scratch register, and the hook starts with
 * BTI c, which a br x16 may land on. */
__attribute__((visibility("hidden"))) void __ptrec_patch_stub(void);
#if defined(__x86_64__)
__asm__(".text\n"
        "\t.globl __ptrec_patch_stub\n"
        "\t.hidden __ptrec_patch_stub\n"
        "\t.type __ptrec_patch_stub, @function\n"
        "__ptrec_patch_stub:\n"
        "\tjmp *__ptrec_fentry@GOTPCREL(%rip)\n"
        "\t.size __ptrec_patch_stub, .-__ptrec_patch_stub\n");
#else
__asm__(".text\n"
        "\t.p2align 2\n"
        "\t.globl __ptrec_patch_stub\n"
        "\t.hidden __ptrec_patch_stub\n"
        "\t.type __ptrec_patch_stub, %function\n"
        "__ptrec_patch_stub:\n"
        "\tadrp x16, :got:__ptrec_fentry\n"
        "\tldr x16, [x16, #:got_lo12:__ptrec_fentry]\n"
        "\tbr x16\n"
        "\t.size __ptrec_patch_stub, .-__ptrec_patch_stub\n");
#endif

__attribute__((constructor, no_instrument_function)) static void patch_module_register(void)
{
	const uintptr_t *start = __start___patchable_function_entries;
	const uintptr_t *stop = __stop___patchable_function_entries;
	if (!start || stop <= start)
		return;
	__ptrec_patch_module.start = start;
	__ptrec_patch_module.stop = stop;
	__ptrec_patch_module.hook = __ptrec_fentry;
	__ptrec_patch_module.stub = __ptrec_patch_stub;
	__ptrec_patch_register(&__ptrec_patch_module);
}
#endif
