/* unwind.h — the stack of one thread, unwound offline from the dump's registers, its stack
 * bytes (MEMORY records) and the CFI of the modules named in MAPS: .eh_frame / .debug_frame
 * rules first, the kernel's signal frame at a signal trampoline, the return address at SP when
 * the pc lies outside any code (a call through a wild pointer), then the frame-pointer chain,
 * and last a bounded stack scan for return addresses; between a frame and its caller (by CFI),
 * the functions that tail-called it where the debug information's call sites show them (like
 * gdb).  Each frame says how it was found.
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
};

#define PTREC_UNWIND_ALL_REGS ((1u << PTREC_REG_COUNT) - 1) /* every register known */
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

/* Unwinds from gregs (indexed by enum ptrec_dump_reg) and writes at most max frames to out.
 * *stop (may be NULL) gets why the walk ended ("outermost frame", "stack not in the dump",
 * ...).  Returns the number of frames (0 only if max is 0 or the pc is 0). */
size_t ptrec_unwind(struct ptrec_symbolizer *s, const struct ptrec_dump *d,
                    const uint64_t gregs[PTREC_REG_COUNT], struct ptrec_unwind_frame *out,
                    size_t max, const char **stop);

/* ptrec_unwind from the registers whose bits (1u << enum ptrec_dump_reg) are set in known; the
 * others are unknown and stay so in every frame until a CFI rule restores them from the stack.
 * With any register unknown, frame #0 is marked PTREC_UNWIND_SP_PC and the walk never scans
 * the stack for return addresses (it would be a guess); when it ends because a rule needs an
 * unknown register (the CFA is rbp-based and rbp was never restored), *missing (may be NULL)
 * gets its DWARF number and *stop "a register the CFI needs is unknown"; otherwise *missing is
 * PTREC_UNWIND_NO_REG. */
size_t ptrec_unwind_regs(struct ptrec_symbolizer *s, const struct ptrec_dump *d,
                         const uint64_t gregs[PTREC_REG_COUNT], uint32_t known,
                         struct ptrec_unwind_frame *out, size_t max, const char **stop,
                         unsigned *missing);

/* The name of DWARF x86-64 register number reg ("rbp", "r12", "rip"), or "a register". */
const char *ptrec_unwind_reg_name(unsigned reg);

/* Short name of a method for reports: "registers", "cfi", "signal frame", "return address at
 * sp", "frame pointer", "found by scanning", "sp and pc only", "tail call". */
const char *ptrec_unwind_how_name(unsigned how);

#endif
