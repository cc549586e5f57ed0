/* dwarf_line.h — DWARF debug information for symbolization: the .debug_line line tables
 * (versions 2 to 5, including DW_FORM_line_strp names in .debug_line_str) for file:line, and
 * DW_TAG_subprogram address ranges from .debug_info (DWARF 2 to 5) for function names when the
 * symbol table is stripped.  Malformed units are skipped with a warning; never a crash.
 * Not async-signal-safe. */
#ifndef PTREC_DWARF_LINE_H
#define PTREC_DWARF_LINE_H

#include <stddef.h>
#include <stdint.h>

#include "symbols/elf_symbols.h"
#include "core/warnings.h"

/* One row of a line table. */
struct ptrec_line_row {
	uint64_t addr;      /* first address of the row */
	uint32_t file;      /* index into ptrec_dwarf.files */
	uint32_t line;      /* line number (0 = no line) */
	uint32_t end;       /* 1 for an end_sequence row (addr is one past the sequence) */
	uint32_t reserved;
};

/* One function from .debug_info. */
struct ptrec_dwarf_func {
	uint64_t lo;        /* DW_AT_low_pc, or the start of one of its DW_AT_ranges */
	uint64_t hi;        /* one past the last address */
	const char *name;   /* linkage name if present, else DW_AT_name (points into the ELF) */
	uint64_t entry;     /* the function's entry: lo, or for a function in several ranges (a
	                       .cold part) the start of its first range */
};

/* One address range of an inlined call (DW_TAG_inlined_subroutine). */
struct ptrec_dwarf_inline {
	uint64_t lo;        /* first address of the range */
	uint64_t hi;        /* one past the last */
	const char *name;   /* the inlined function: linkage name if present, else DW_AT_name
	                       (through DW_AT_abstract_origin / DW_AT_specification) */
	uint64_t stmt_list; /* .debug_line offset of its unit's line table (for call_file) */
	uint32_t call_file; /* DW_AT_call_file: index in that line table's file list */
	uint32_t call_line; /* DW_AT_call_line */
	uint32_t depth;     /* DIE nesting depth: an inlined call inside another one is deeper */
	uint32_t reserved;
};

/* The file list of one line table: its DWARF file indexes mapped to ptrec_dwarf.files. */
struct ptrec_dwarf_unit_files {
	uint64_t stmt_list; /* .debug_line offset of the unit */
	long *ids;          /* ids[DWARF index] = index in files, -1 if none (owned) */
	size_t n;
};

/* A call site (DW_TAG_call_site, DWARF 4's DW_TAG_GNU_call_site) whose callee is known: a
 * function of the same file with a known entry, or one named in a declaration (another file's,
 * through the PLT). */
struct ptrec_dwarf_call {
	uint64_t ret;       /* link-time return address: after the call (or the tail call's jump) */
	uint64_t target;    /* link-time entry of the function it calls, 0: see name */
	const char *name;   /* the callee's name when target is 0 (points into the file) */
	uint32_t tail;      /* 1: a tail call (DW_AT_call_tail_call) */
	uint32_t reserved;
};

/* A function's entry by one of its names (DW_AT_name, DW_AT_linkage_name; or an ELF function
 * symbol's name that the debug information does not give: an alias). */
struct ptrec_dwarf_name {
	const char *name;
	uint64_t entry;
};

/* Debug information of one ELF file. */
struct ptrec_dwarf {
	struct ptrec_line_row *rows;   /* all sequences, sorted by address */
	size_t nrows;
	char **files;                  /* file paths (owned), indexed by row.file */
	size_t nfiles;
	struct ptrec_dwarf_func *funcs; /* sorted by lo */
	size_t nfuncs;
	struct ptrec_dwarf_inline *inlines; /* inlined calls, sorted by lo */
	size_t ninlines;
	uint64_t *inline_maxhi;        /* inline_maxhi[i] = max hi of inlines[0..i] (owned) */
	struct ptrec_dwarf_unit_files *units; /* line tables' file lists, sorted by stmt_list */
	size_t nunits;
	struct ptrec_dwarf_call *calls; /* call sites with a known callee, sorted by ret */
	size_t ncalls;
	struct ptrec_dwarf_name *names; /* functions by name, sorted by name (then entry); names
	                                   pointing into the ELF (its symbols' too) */
	size_t nnames;
	int has_lines;                 /* 1 if a .debug_line section was read */
	int has_info;                  /* 1 if a .debug_info section was read */
};

/* Reads the line tables and functions of elf (which must stay open while d is used).  A
 * missing section is no error; compressed or malformed ones are reported in w.  Returns 0 or
 * -PTREC_ENOMEM. */
int ptrec_dwarf_load(struct ptrec_dwarf *d, const struct ptrec_elf *elf, struct ptrec_warnings *w);

/* Frees d. */
void ptrec_dwarf_free(struct ptrec_dwarf *d);

/* Finds the line of link-time address addr.  Returns 0 with *file and *line set, or
 * -PTREC_ENOMAP if no line table row covers addr.  O(log n). */
int ptrec_dwarf_lookup_line(const struct ptrec_dwarf *d, uint64_t addr, const char **file,
                            unsigned *line);

/* Returns the innermost function whose [lo, hi) contains addr, or NULL.  O(log n). */
const struct ptrec_dwarf_func *ptrec_dwarf_lookup_func(const struct ptrec_dwarf *d,
                                                       uint64_t addr);

/* Writes to out (at most max) the inlined calls whose range holds addr, outermost first
 * (innermost last).  Returns the number written.  O(log n + ranges starting below addr that
 * reach past it). */
size_t ptrec_dwarf_lookup_inlines(const struct ptrec_dwarf *d, uint64_t addr,
                                  const struct ptrec_dwarf_inline **out, size_t max);

/* One frame of the inlined calls at an address, as `addr2line -i` prints them. */
struct ptrec_inline_frame {
	const char *name;   /* the function (raw: linkage name if any), NULL for the last entry */
	const char *file;   /* where this frame is: the address's own line for the innermost, the
	                       call site of the frame inside it for the others; NULL if unknown */
	unsigned line;
};

/* Fills out (at most max) with the inlined calls at link-time address addr, innermost first,
 * then one entry for the function that contains them (name NULL: the caller names it; its
 * file:line is the call site of the outermost inlined call).  Returns the number written, 0 if
 * no inlined call covers addr. */
size_t ptrec_dwarf_inline_chain(const struct ptrec_dwarf *d, uint64_t addr,
                                struct ptrec_inline_frame *out, size_t max);

/* Returns the path of an inlined call's DW_AT_call_file, or NULL. */
const char *ptrec_dwarf_call_file(const struct ptrec_dwarf *d, const struct ptrec_dwarf_inline *in);

/* The call site whose return address is link-time address ret, or NULL. */
const struct ptrec_dwarf_call *ptrec_dwarf_call_at(const struct ptrec_dwarf *d, uint64_t ret);

/* The entry of the one function named name (several of that name, static ones: 0), or 0. */
uint64_t ptrec_dwarf_entry_by_name(const struct ptrec_dwarf *d, const char *name);

/* The frames gdb shows for tail calls between a caller and the frame it called: when the
 * caller called the function entered at from and the frame below runs in the one entered at
 * callee (from != callee), and exactly one chain of tail calls (at most max) leads from one to
 * the other, writes the return addresses of that chain's tail calls to out, innermost first
 * (the jump into callee first): each is a frame of its own, in the function holding that jump.
 * Returns their number, 0 otherwise (no chain, or more than one). */
size_t ptrec_dwarf_tail_chain(const struct ptrec_dwarf *d, uint64_t from, uint64_t callee,
                              uint64_t *out, size_t max);

/* Internal, shared by dwarf_line.c and dwarf_info.c: compilation directory of the unit whose
 * DW_AT_stmt_list is off, or NULL. */
struct dwarf_cu_dir {
	uint64_t stmt_list;  /* .debug_line offset */
	const char *comp_dir; /* DW_AT_comp_dir */
};
int ptrec_dwarf_info_load(struct ptrec_dwarf *d, const struct ptrec_elf *elf, struct ptrec_warnings *w,
                    struct dwarf_cu_dir **dirs, size_t *ndirs);

#endif
