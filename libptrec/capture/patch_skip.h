/* patch_skip.h — PTREC_NO_TRACE at run time: functions named in the environment keep their
 * patchable entries' NOPs when the others are made to call the entry hook
 * (capture/patch_entries.h), so they record nothing and cost nothing, without a rebuild.
 * `ptrec report` lists the functions filling a thread's ring fastest; a hot leaf among them is
 * the one to name (nothing below it is lost).  The build-time way is the PTREC_NO_TRACE
 * attribute (include/ptrec.h).
 *
 * PTREC_NO_TRACE="zfree,zmalloc" (names separated by commas, spaces or colons) names functions
 * as the symbol table has them; a name also covers the compiler's clones of that function
 * (`zfree.part.0`, `f.constprop.1`, `g.lto_priv.0`, ...).  Names are looked up in each
 * module's .symtab (or .dynsym when the file is stripped) at ptrec_init and when a module
 * registers later (dlopen).
 *
 * Init time only: reads files and allocates; never in the crash path. */
#ifndef PTREC_PATCH_SKIP_H
#define PTREC_PATCH_SKIP_H

#include <stddef.h>
#include <stdint.h>

#define PTREC_SKIP_NAMES 64        /* names taken from PTREC_NO_TRACE (the rest are ignored) */
#define PTREC_SKIP_ADDRS 1024      /* function addresses remembered per module */
#define PTREC_SKIP_LIST_MAX 1024   /* PTREC_NO_TRACE must be shorter */

/* The names of PTREC_NO_TRACE, parsed once. */
struct ptrec_skip_names {
	char buf[PTREC_SKIP_LIST_MAX];        /* the names, each NUL-terminated */
	const char *name[PTREC_SKIP_NAMES];
	unsigned n;
	uint64_t found;                       /* bit i: name i matched a function somewhere */
};

/* The start addresses, in memory, of one module's functions that the names match. */
struct ptrec_skip_addrs {
	uintptr_t addr[PTREC_SKIP_ADDRS];
	unsigned n;
};

/* Parses list (NULL or "" gives no names) into *names.  Returns the number of names, or -1
 * when list is PTREC_SKIP_LIST_MAX bytes or longer (then no names). */
int ptrec_skip_parse(const char *list, struct ptrec_skip_names *names);

/* Fills *out with the functions of the ELF file at path (loaded at bias: the module's
 * dl_iterate_phdr dlpi_addr) whose symbols names match, and sets their bits in names->found.
 * Returns 0, or -1 with *why set (a static English reason) when the file's symbols cannot be
 * read. */
int ptrec_skip_find(struct ptrec_skip_names *names, const char *path, uintptr_t bias,
                    struct ptrec_skip_addrs *out, const char **why);

/* 1 if the patchable entry at entry belongs to a function in s: it starts there, or 4 bytes
 * before it with the endbr64 that -fcf-protection puts first (x86-64) or the BTI c of
 * -mbranch-protection (aarch64). */
int ptrec_skip_has(const struct ptrec_skip_addrs *s, uintptr_t entry);

#endif
