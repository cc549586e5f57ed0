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
	uint64_t lo;        /* DW_AT_low_pc */
	uint64_t hi;        /* one past the last address */
	const char *name;   /* linkage name if present, else DW_AT_name (points into the ELF) */
};

/* Debug information of one ELF file. */
struct ptrec_dwarf {
	struct ptrec_line_row *rows;   /* all sequences, sorted by address */
	size_t nrows;
	char **files;                  /* file paths (owned), indexed by row.file */
	size_t nfiles;
	struct ptrec_dwarf_func *funcs; /* sorted by lo */
	size_t nfuncs;
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

/* Internal, shared by dwarf_line.c and dwarf_info.c: compilation directory of the unit whose
 * DW_AT_stmt_list is off, or NULL. */
struct dwarf_cu_dir {
	uint64_t stmt_list;  /* .debug_line offset */
	const char *comp_dir; /* DW_AT_comp_dir */
};
int ptrec_dwarf_info_load(struct ptrec_dwarf *d, const struct ptrec_elf *elf, struct ptrec_warnings *w,
                    struct dwarf_cu_dir **dirs, size_t *ndirs);

#endif
