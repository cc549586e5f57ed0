/* patch_entries.h — the patchable-entry builds of the instrumented backend: `ptrec cflags`
 * gives -fpatchable-function-entry=5 (x86-64) or =2 (aarch64) to GCC and Clang, which leaves
 * NOPs at the entry of every function that is emitted (after inlining, also under LTO, where -pg
 * is lost) and lists their addresses in the module's __patchable_function_entries section.  At
 * ptrec_init, when the instrumented backend is chosen, each listed entry becomes a call of
 * __ptrec_fentry (the entry hook, capture/soft_hooks.c), so records, decoder and reports are
 * those of -mfentry.
 *
 * Every module (executable or shared library) linked with `pkg-config --libs libptrec` carries
 * patch_module.c from libptrec_hooks.a (forced in by -Wl,-u,__ptrec_patch_module): its
 * constructor registers the module's own section bounds and hook address here.  Modules
 * registered after ptrec_init (dlopen) are patched as they register.
 *
 * Init time only: nothing here runs in the crash path.  Text pages are made writable (and kept
 * executable, for other threads) only while they are patched; if the kernel refuses (SELinux,
 * a seccomp filter, MemoryDenyWriteExecute, PR_SET_MDWE), nothing is patched and the reason is
 * returned.  doc/instrumented.md has the design. */
#ifndef PTREC_PATCH_ENTRIES_H
#define PTREC_PATCH_ENTRIES_H

#include <stddef.h>
#include <stdint.h>

#include "capture/backend.h"

/* Bytes of NOPs at each entry: x86-64, -fpatchable-function-entry=5, room for one
 * `call rel32`; aarch64, -fpatchable-function-entry=2, two NOPs that become
 * `mov x9, x30; bl __ptrec_fentry` (the hook finds the caller's return address in x9 and
 * gives it back to x30). */
#if defined(__aarch64__)
#define PTREC_PATCH_BYTES 8
#else
#define PTREC_PATCH_BYTES 5
#endif

/* One module's registration.  Lives in the module (static storage of patch_module.c). */
struct ptrec_patch_module {
	uint32_t struct_size;               /* sizeof(struct ptrec_patch_module) */
	uint32_t patched;                   /* entries now calling the hook (set here) */
	const uintptr_t *start, *stop;      /* the module's __patchable_function_entries */
	void (*hook)(void);                 /* __ptrec_fentry as the module's GOT binds it */
	void (*stub)(void);                 /* the module's own jump to the hook through its GOT,
	                                       used when hook is beyond the call's reach */
	struct ptrec_patch_module *next;    /* set here */
};

/* Called by each module's constructor (patch_module.c).  Exported from libptrec.so. */
PTREC_API void __ptrec_patch_register(struct ptrec_patch_module *m);

/* Patches every registered entry not patched yet, and from now on patches modules as they
 * register.  Returns the number of entries that call the hook (0: the program has none), or
 * -PTREC_ENOSUPP with the reason in why when text could not be made writable and nothing
 * was patched.  Init time only; takes a lock. */
int ptrec_patch_apply(char *why, size_t why_len);

/* One line on the patching ("3120 of 3120 patchable function entries in 2 modules call
 * __ptrec_fentry", and why not all), "" when no module registered entries.  Defined in
 * patch_note.c; filled under the lock at init and registration; read by ptrec_status and by
 * the dump writer's STATUS record (a plain buffer: ASYNC-SIGNAL-SAFE to read). */
extern char ptrec_patch_note[192];

#endif
