/* x86_ild.h — x86 instruction-length decoder and branch classification.
 * Pure functions: no I/O, no globals, no allocation.  Never read past bytes[len).
 * (Contract fixed first so the flow decoder can be written alongside.) */
#ifndef PTREC_X86_ILD_H
#define PTREC_X86_ILD_H

#include <stddef.h>
#include <stdint.h>

/* Execution mode (default operand/address size of the code segment). */
enum ptrec_x86_mode {
	X86_MODE_16 = 0, /* 16-bit code (CS.D = 0, CS.L = 0) */
	X86_MODE_32 = 1, /* 32-bit code (CS.D = 1, CS.L = 0) */
	X86_MODE_64 = 2, /* 64-bit code (CS.L = 1) */
};

/* What an instruction does to control flow, as Intel PT sees it. */
enum ptrec_x86_iclass {
	X86_IC_OTHER = 0,     /* falls through to the next instruction */
	X86_IC_JCC,           /* conditional direct jump: Jcc, JrCXZ, LOOP/LOOPcc (TNT bit) */
	X86_IC_JMP,           /* unconditional direct near jump (rel8/rel16/rel32) */
	X86_IC_CALL,          /* direct near call */
	X86_IC_JMP_IND,       /* indirect near jump, and APX JMPABS (TIP) */
	X86_IC_CALL_IND,      /* indirect near call (TIP) */
	X86_IC_RET,           /* near return, with or without imm16 (TNT if compressed, or TIP) */
	X86_IC_FAR,           /* far transfers (TIP or FUP+TIP): far jmp/call/ret, int n, int3,
	                         into, int1, iret*, syscall, sysret, sysenter, sysexit, FRED
	                         ERETU/ERETS, UIRET, vmcall/vmlaunch/vmresume, and the like */
	X86_IC_PTWRITE,       /* ptwrite (PTW packet) */
	X86_IC_COUNT_         /* number of classes; not a class */
};

/* Flags on a decoded instruction. */
#define X86_INSN_HAS_TARGET 0x1u /* target is valid: a direct branch's destination */

/* One decoded instruction. */
struct ptrec_x86_insn {
	uint8_t length;  /* 1..15 bytes */
	uint8_t iclass;  /* enum ptrec_x86_iclass */
	uint8_t flags;   /* X86_INSN_* */
	uint8_t mode;    /* enum ptrec_x86_mode it was decoded in */
	uint32_t reserved;
	uint64_t target; /* destination of a direct JCC/JMP/CALL (ip + length + disp, truncated
	                    to the operand size) when X86_INSN_HAS_TARGET */
};

/* Decodes the instruction at bytes[0..len), which sits at address ip, in mode.
 * Returns the length (1..15) and fills *insn, -PTREC_ETRUNC if len is too short for the
 * instruction, or -PTREC_EFORMAT for an invalid encoding (undefined opcode, over 15 bytes,
 * an opcode invalid in this mode). */
int ptrec_x86_ild_decode(const uint8_t *bytes, size_t len, uint64_t ip, enum ptrec_x86_mode mode,
                   struct ptrec_x86_insn *insn);

/* Returns a short name of an iclass ("other", "jcc", "jmp", ...), or "?". */
const char *ptrec_x86_iclass_name(unsigned iclass);

#endif
