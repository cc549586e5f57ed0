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

/* x86-64 only: on aarch64 (GCC builds use -finstrument-functions there) no module registers. */
#if defined(__x86_64__)
void __ptrec_fentry(void);

/* The module's way to the hook that a rel32 call always reaches: a jump through its GOT (for a
 * shared library mapped more than 2 GiB away from every copy of the hook). */
__attribute__((visibility("hidden"))) void __ptrec_patch_stub(void);
__asm__(".text\n"
        "\t.globl __ptrec_patch_stub\n"
        "\t.hidden __ptrec_patch_stub\n"
        "\t.type __ptrec_patch_stub, @function\n"
        "__ptrec_patch_stub:\n"
        "\tjmp *__ptrec_fentry@GOTPCREL(%rip)\n"
        "\t.size __ptrec_patch_stub, .-__ptrec_patch_stub\n");

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
