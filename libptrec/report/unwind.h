/* unwind.h — the stack of one thread, unwound offline from the dump's registers, its stack
 * bytes (MEMORY records) and the CFI of the modules named in MAPS: .eh_frame / .debug_frame
 * rules first, the kernel's signal frame at a signal trampoline, the return address at SP
 * (x86-64) or in the link register (aarch64) when frame #0 has no CFI (a call through a wild
 * pointer; on aarch64 also a leaf), then the frame-pointer chain (rbp, x29 frame records), and
 * last a bounded stack scan for return addresses; between a frame and its caller (by CFI), the
 * functions that tail-called it where the debug information's call sites show them (like gdb).
 * Each frame says how it was found.  The dump's machine (PROCESS.arch: x86-64 or aarch64, on
 * a reader of either machine) decides the registers and instructions; aarch64 return addresses
 * signed by pointer authentication are stripped.
 * Reads only the dump and the module files, never live memory.  Not async-signal-safe. */
#ifndef PTREC_UNWIND_H
#define PTREC_UNWIND_H

#include <stddef.h>
#include <stdint.h>

#include "dump/dump_read.h"
#include "symbols/cfi.h"
#include "symbols/symbolize.h"

/* How a frame's pc was found. */
enum ptrec_unwind_how {
	PTREC_UNWIND_CONTEXT = 0, /* the thread's registers (frame #0) */
	PTREC_UNWIND_CFI,         /* call-frame information of the frame below */
	PTREC_UNWIND_SIGNAL,      /* the interrupted context saved in a kernel signal frame */
	PTREC_UNWIND_RET_AT_SP,   /* the pc below lies in no code: the return address at its SP */
	PTREC_UNWIND_FP,          /* the frame-pointer chain */
	PTREC_UNWIND_SCAN,        /* a stack scan: a word that is a return address after a call */
	PTREC_UNWIND_SP_PC,       /* frame #0 of a thread of which only sp and pc are known (the
	                             kernel's /proc/PID/task/TID/syscall) */
	PTREC_UNWIND_TAILCALL,    /* a function the frame below was tail-called from (no frame of
	                             its own: the debug information's call sites tell, as gdb's) */
	PTREC_UNWIND_RET_IN_LR,   /* aarch64: frame #0 (or a signal's interrupted frame) has no
	                             CFI (a leaf, or its pc lies in no code): the return address
	                             in the link register x30 */
};

#define PTREC_UNWIND_ALL_REGS UINT64_MAX /* every register known */
#define PTREC_UNWIND_NO_REG PTREC_CFI_NREGS /* ptrec_unwind_regs: no unknown register needed */

/* One frame, innermost first. */
struct ptrec_unwind_frame {
	uint64_t pc;              /* the frame's pc */
	uint64_t sp;              /* its stack pointer */
	uint8_t how;              /* enum ptrec_unwind_how */
	uint8_t return_address;   /* 1 if pc is a return address (its call is at pc - 1) */
	uint8_t signal_frame;     /* 1 if pc is a signal trampoline (the handler returns here) */
	uint8_t reserved[5];
};

/* Unwinds from gregs (the REGS record's values: indexed by enum ptrec_dump_reg on x86-64,
 * enum ptrec_dump_reg_a64 on aarch64, by the dump's PROCESS.arch) and writes at most max
 * frames to out.
 * *stop (may be NULL) gets why the walk ended ("outermost frame", "stack not in the dump",
 * ...).  Returns the number of frames (0 only if max is 0 or the pc is 0). */
size_t ptrec_unwind(struct ptrec_symbolizer *s, const struct ptrec_dump *d,
                    const uint64_t *gregs, struct ptrec_unwind_frame *out,
                    size_t max, const char **stop);

/* ptrec_unwind from the registers whose bits (1ull << their REGS index) are set in known; the
 * others are unknown and stay so in every frame until a CFI rule restores them from the stack.
 * With any register unknown, frame #0 is marked PTREC_UNWIND_SP_PC and the walk never scans
 * the stack for return addresses (it would be a guess); when it ends because a rule needs an
 * unknown register (the CFA is rbp-based and rbp was never restored; an aarch64 leaf's return
 * address in x30), *missing (may be NULL)
 * gets its DWARF number and *stop "a register the CFI needs is unknown"; otherwise *missing is
 * PTREC_UNWIND_NO_REG. */
size_t ptrec_unwind_regs(struct ptrec_symbolizer *s, const struct ptrec_dump *d,
                         const uint64_t *gregs, uint64_t known,
                         struct ptrec_unwind_frame *out, size_t max, const char **stop,
                         unsigned *missing);

/* The name of DWARF register number reg of the machine arch (PROCESS.arch): x86-64 "rbp",
 * "r12", "rip"; aarch64 "x29", "x30", "sp"; or "a register". */
const char *ptrec_unwind_reg_name(uint32_t arch, unsigned reg);

/* Short name of a method for reports: "registers", "cfi", "signal frame", "return address at
 * sp", "frame pointer", "found by scanning", "sp and pc only", "tail call", "link register". */
const char *ptrec_unwind_how_name(unsigned how);

#endif
