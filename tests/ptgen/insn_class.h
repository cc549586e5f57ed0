/* insn_class.h — ptgen's own small branch classifier for the instruction a single-step just
 * executed.  Test-only and deliberately independent of libptrec's x86 ILD.
 *
 * It only ever looks at an address where the tracee really started an instruction, so it needs
 * no general length decoder: it skips legacy prefixes and REX, looks at the opcode and decides
 * whether the instruction is a branch.  For branches it also computes the length (and the
 * displacement of direct ones), which the caller checks against what the CPU did (next RIP,
 * pushed return address).  Everything it does not recognise is "other"; the caller verifies that
 * such an instruction fell through (next RIP within 1..15 bytes after it). */
#ifndef PTGEN_INSN_CLASS_H
#define PTGEN_INSN_CLASS_H

#include <stddef.h>
#include <stdint.h>

/* What an instruction does to control flow, as Intel PT sees it. */
enum ic_kind {
	IC_OTHER = 0, /* not a branch: falls through (length unknown to us) */
	IC_JCC,       /* conditional direct jump: Jcc rel8/rel32, JrCXZ, LOOP/LOOPcc: a TNT bit */
	IC_JMP,       /* direct near jump rel8/rel32: no packet */
	IC_CALL,      /* direct near call rel32: no packet, pushes the return address */
	IC_JMP_IND,   /* indirect near jump FF /4: TIP */
	IC_CALL_IND,  /* indirect near call FF /2: TIP, pushes the return address */
	IC_RET,       /* near return C3 / C2 iw: compressed TNT bit or TIP */
	IC_SYSCALL,   /* syscall/sysenter/int n/int3/int1: enters the (untraced) kernel */
	IC_FAR,       /* far jmp/call/ret, iret: a far transfer (not expected in user code) */
	IC_KIND_COUNT_
};

/* One classified instruction. */
struct ic_insn {
	uint8_t kind;  /* enum ic_kind */
	uint8_t len;   /* length in bytes for branches; 0 for IC_OTHER */
	uint8_t rep;   /* a REP/REPNE (F3/F2) prefix is present (string instructions repeat) */
	uint8_t pad_;
	int32_t disp;  /* IC_JCC/IC_JMP/IC_CALL: the relative displacement */
};

/* Classifies the instruction starting at bytes[0..avail) (64-bit mode).  Returns 0 and fills
 * *out, or -1 if avail is too short to tell (the caller reads more bytes and retries). */
int ic_classify(const uint8_t *bytes, size_t avail, struct ic_insn *out);

/* Returns a short name of a kind ("jcc", "ret", ...). */
const char *ic_kind_name(unsigned kind);

#endif
