/* symbolize.h — address -> module+offset -> symbol+offset -> file:line for the addresses of a
 * dump.  Modules come from the dump's MAPS (path, load bias) and BUILDID records; their ELF
 * files are read from disk (or, for the vDSO, from the dump's MEMORY bytes) once, on first
 * use.  A file whose build-id differs from the dump's (or that is gone) is warned about and not
 * used; a replacement with the dump's build-id is used instead when one is given (`--binary`)
 * or lies in a debuginfod client's cache (CACHE/BUILDID/executable).  Separate debug files are
 * looked for as debug_file.h says, then in that cache (CACHE/BUILDID/debuginfo).  Reads files
 * only: fetching them is the tool's (tool/debuginfod.c).  C++ names
 * are demangled with __cxa_demangle when the process has it (looked up at run time).
 * Not async-signal-safe. */
#ifndef PTREC_SYMBOLIZE_H
#define PTREC_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>

#include "dump/dump_read.h"
#include "symbols/cfi.h"
#include "symbols/dwarf_line.h"
#include "symbols/elf_symbols.h"
#include "core/warnings.h"

/* A loaded object (executable, shared library, vDSO) as mapped in the dumped process. */
struct ptrec_module {
	char *path;               /* mapping path ("[vdso]" for the vDSO) */
	const char *name;         /* basename of path */
	uint64_t start;           /* lowest mapped address */
	uint64_t end;             /* one past the highest mapped address */
	uint64_t map_start;       /* a mapping used to compute the bias: its start ... */
	uint64_t map_offset;      /* ... and file offset: an executable mapping's when there is
	                             one (else the lowest offset's) */
	int map_exec;             /* 1: map_start is an executable mapping */
	uint64_t bias;            /* runtime address = link-time address + bias */
	const uint8_t *dump_id;   /* build-id from the dump's BUILDID record, or NULL */
	size_t dump_id_len;
	const struct ptrec_dump_memory_rec *image; /* ELF bytes in the dump (vDSO), or NULL */
	int state;                /* 0 not loaded yet, 1 loaded, -1 unusable */
	int has_elf, has_dbg;     /* elf / dbg are open */
	struct ptrec_elf elf;     /* the file itself */
	struct ptrec_elf dbg;     /* its separate debug file */
	struct ptrec_dwarf dwarf; /* debug info (from dbg when it has some, else elf) */
	int cfi_state;            /* 0: CFI not prepared yet, 1: prepared */
	struct ptrec_cfi eh_frame;    /* .eh_frame (+ .eh_frame_hdr) of elf */
	struct ptrec_cfi debug_frame; /* .debug_frame of dbg, else of elf */
	unsigned lacks;           /* once loaded: PTREC_MODULE_NO_FILE | PTREC_MODULE_NO_DEBUG */
};

/* What a loaded module lacks (ptrec_module.lacks), for a fetcher to look for. */
#define PTREC_MODULE_NO_FILE 1u  /* no file with the dump's build-id (gone, or replaced) */
#define PTREC_MODULE_NO_DEBUG 2u /* no symbol table with line information, no debug file */

/* An address range of one module. */
struct ptrec_module_range {
	uint64_t start, end;      /* [start, end) */
	size_t module;            /* index in ptrec_symbolizer.mods */
};

/* The symbolizer of one dump. */
struct ptrec_symbolizer {
	const struct ptrec_dump *dump;        /* the dump (MEMORY for code bytes) */
	struct ptrec_module *mods;            /* modules */
	size_t nmods;
	struct ptrec_module_range *ranges;    /* sorted, non-overlapping */
	size_t nranges;
	const char *const *debug_dirs;        /* extra debug directories (NULL-terminated) */
	const char *const *binaries;          /* replacement files (NULL-terminated) or NULL: used
	                                         for a module whose file is gone or has another
	                                         build-id, when theirs is the dump's; set after
	                                         ptrec_symbolizer_init, before any lookup */
	const char *debuginfod_cache;         /* a debuginfod client's cache directory, or NULL
	                                         (set like binaries) */
	struct ptrec_warnings *w;             /* where warnings go */
	char *(*demangle)(const char *, char *, size_t *, int *); /* __cxa_demangle or NULL */
	struct demangle_entry *cache;         /* mangled name -> demangled (open addressing) */
	size_t cache_cap, cache_used;
	struct symbol_cache_entry *recent;    /* last results, direct-mapped by address */
};

/* What is known about one address.  Strings stay valid until ptrec_symbolizer_free. */
struct ptrec_symbol {
	uint64_t addr;            /* the address asked for */
	const struct ptrec_module *module; /* containing module, or NULL */
	uint64_t module_offset;   /* link-time address inside the module (addr - bias) */
	const char *name;         /* function (demangled when possible), or NULL */
	uint64_t offset;          /* addr - start of the function */
	const char *file;         /* source file, or NULL */
	unsigned line;            /* source line (valid when file != NULL) */
};

/* Prepares a symbolizer for dump (which must outlive it).  debug_dirs may be NULL.  Returns 0
 * or -PTREC_ENOMEM. */
int ptrec_symbolizer_init(struct ptrec_symbolizer *s, const struct ptrec_dump *dump,
                          const char *const *debug_dirs, struct ptrec_warnings *w);

/* Frees s and everything it loaded. */
void ptrec_symbolizer_free(struct ptrec_symbolizer *s);

/* Describes addr.  return_address: addr is a return address (the call is the instruction
 * before it), so the file:line and function of addr - 1 are reported.  Never fails: fields
 * not found stay NULL.  O(log n) once the module is loaded. */
void ptrec_symbolize(struct ptrec_symbolizer *s, uint64_t addr, int return_address,
                     struct ptrec_symbol *out);

/* The inlined calls at addr (return_address: at addr - 1), like `addr2line -i`: out[0..n-2]
 * the inlined functions, innermost first (names demangled), out[n-1] the function containing
 * them (the symbol's name); each with its own file:line (the innermost at addr's line, the
 * others at the call site of the frame inside them).  Returns n, 0 if no inlined call covers
 * addr (then ptrec_symbolize says it all). */
size_t ptrec_symbolize_inline(struct ptrec_symbolizer *s, uint64_t addr, int return_address,
                              struct ptrec_inline_frame *out, size_t max);

/* The tail-call frames between a frame at callee_pc (callee_ret: a return address, its call at
 * callee_pc - 1) and its caller, which returns to caller_ret: ptrec_dwarf_tail_calls in their
 * module (both in one, with call sites in its debug information), runtime addresses written to
 * out, innermost first.  Returns their number (0: none known). */
size_t ptrec_symbolizer_tail_calls(struct ptrec_symbolizer *s, uint64_t callee_pc, int callee_ret,
                                   uint64_t caller_ret, uint64_t *out, size_t max);

/* Copies up to len code bytes at addr from the dump's MEMORY records, else from the module's
 * file.  Returns the bytes copied (0 if unknown). */
size_t ptrec_symbolizer_read(struct ptrec_symbolizer *s, uint64_t addr, void *buf, size_t len);

/* Returns the module containing addr (loading it), or NULL. */
struct ptrec_module *ptrec_symbolizer_module(struct ptrec_symbolizer *s, uint64_t addr);

/* Finds the unwinding rules at runtime address addr: the module's .eh_frame first, then its
 * .debug_frame (also from the separate debug file).  Returns 0 with *row (link-time addresses)
 * and *bias (runtime = link-time + bias), -PTREC_ENOMAP if no module or FDE covers addr,
 * -PTREC_EFORMAT for malformed CFI, -PTREC_ENOMEM. */
int ptrec_symbolizer_cfi(struct ptrec_symbolizer *s, uint64_t addr, struct ptrec_cfi_row *row,
                         uint64_t *bias);

/* Formats "name+0xoff (file:line)" / "module+0xoff" / "0xaddr" into buf; returns buf. */
char *ptrec_symbol_format(const struct ptrec_symbol *sym, char *buf, size_t len);

#endif
