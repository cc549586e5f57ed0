/* instr_scan.h — what an executable or shared library holds for the instrumented backend
 * (`ptrec check`, issue 27): which hooks its functions call, how many functions do, whether it
 * links libptrec, and what its recorded compiler command lines asked for.  Pure: reads an
 * opened ELF (elf_symbols.h), never the running process.  Not async-signal-safe. */
#ifndef PTREC_INSTR_SCAN_H
#define PTREC_INSTR_SCAN_H

#include <stdint.h>

#include "symbols/elf_symbols.h"

/* The ways a build calls libptrec's hooks (libptrec/capture/soft_hooks.c). */
enum ptrec_instr_kind {
	PTREC_INSTR_FENTRY,     /* a call to __ptrec_fentry first in the function (GCC -pg -mfentry
	                           -mfentry-name=__ptrec_fentry) */
	PTREC_INSTR_ENTRY_EXIT, /* calls to __cyg_profile_func_enter (-finstrument-functions, Clang's
	                           -finstrument-functions-after-inlining) */
	PTREC_INSTR_TRACE_PC,   /* calls to __sanitizer_cov_trace_pc (-fsanitize-coverage=trace-pc) */
	PTREC_INSTR_PATCHABLE,  /* entries of __patchable_function_entries
	                           (-fpatchable-function-entry: calls written in at ptrec_init) */
	PTREC_INSTR_KINDS_
};

/* What a command line recorded in the file (DW_AT_producer with GCC's -grecord-gcc-switches,
 * the default, or .GCC.command.line) asked for. */
#define PTREC_ASKED_FENTRY     0x1u  /* -mfentry-name=__ptrec_fentry */
#define PTREC_ASKED_INSTRUMENT 0x2u  /* -finstrument-functions[-after-inlining] */
#define PTREC_ASKED_TRACE_PC   0x4u  /* -fsanitize-coverage=trace-pc */
#define PTREC_ASKED_PATCHABLE  0x8u  /* -fpatchable-function-entry */
#define PTREC_ASKED_LTO        0x10u /* -flto */

struct ptrec_instr_scan {
	unsigned functions;      /* functions with code: sized STT_FUNC symbols of .symtab (else
	                            .dynsym), or, stripped, the FDEs of .eh_frame_hdr */
	unsigned by_kind[PTREC_INSTR_KINDS_]; /* functions that call each kind's hook (PATCHABLE:
	                            entries of the section) */
	int from_fdes;           /* 1 if functions came from .eh_frame_hdr (no symbols) */
	int fentry_guessed;      /* 1 if, without a symbol naming __ptrec_fentry, FENTRY counts the
	                            functions whose first instruction calls one common target */
	int patch_registered;    /* 1 if the module imports or defines __ptrec_patch_register (linked
	                            with `pkg-config --libs libptrec`: its patchable entries are
	                            registered with libptrec at load; without it none is written) */
	int links_libptrec;      /* 1 if a DT_NEEDED entry names libptrec.so* */
	int defines_runtime;     /* 1 if the file defines ptrec_init or holds libptrec's settings
	                            names (libptrec linked in, stripped or not) */
	unsigned asked;          /* PTREC_ASKED_* */
};

/* Fills out for elf.  Returns 0, or -PTREC_ENOMEM. */
int ptrec_instr_scan(const struct ptrec_elf *elf, struct ptrec_instr_scan *out);

/* Short name of a kind: "fentry", "entry/exit", "trace-pc", "patchable entry". */
const char *ptrec_instr_kind_name(enum ptrec_instr_kind k);

#endif
