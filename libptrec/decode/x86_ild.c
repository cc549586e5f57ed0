/* x86_ild.c — x86 instruction-length decoder and branch classification.
 *
 * Written from the Intel SDM Vol. 2 (chapter 2 "Instruction Format", Appendix A "Opcode Map")
 * and the Intel APX architecture specification (REX2, EVEX map 4, JMPABS).  Pure: no I/O, no
 * globals written, no allocation, never reads past bytes[len) — safe to call anywhere,
 * including the async-signal-safe crash path.
 *
 * Decoding is one pass: legacy prefixes and REX, then the opcode escape (one-byte map, 0F, 0F38,
 * 0F3A, or a VEX2/VEX3/EVEX/XOP/REX2 prefix naming the map), then one table lookup that says
 * whether a ModRM byte follows, which immediate follows, whether the opcode is invalid (in
 * 64-bit mode) and its branch class.  The few opcodes whose length or class depends on ModRM or
 * on a mandatory prefix carry A_SPEC and are finished in special_op().  See doc/x86-ild.md. */
#include "decode/x86_ild.h"

#include "ptrec.h"

/* ---- Opcode attributes ------------------------------------------------------------------ */

/* Immediate (or relative offset, or pointer) that follows ModRM/SIB/displacement. */
enum ild_imm {
	IMM_NONE = 0, /* nothing */
	IMM_B,        /* ib: 1 byte */
	IMM_W,        /* iw: 2 bytes (RET/RETF imm16) */
	IMM_Z,        /* iz: 2 or 4 bytes by operand size (4 also with REX.W) */
	IMM_V,        /* iv: 2, 4 or 8 bytes by operand size (MOV r, imm with REX.W) */
	IMM_WB,       /* iw + ib: ENTER */
	IMM_MOFFS,    /* moffs: 2, 4 or 8 bytes by address size */
	IMM_AP,       /* ptr16:16 or ptr16:32: 4 or 6 bytes by operand size (far JMP/CALL) */
	IMM_REL8,     /* rel8: 1 byte, direct branch */
	IMM_RELZ,     /* rel16/rel32: direct branch; always 4 bytes in 64-bit mode (Intel 64) */
	IMM_GRP3,     /* F6/F7 group 3: ib/iz only for /0 and /1 (TEST) */
	IMM_D,        /* id: 4 bytes */
	IMM_BB,       /* ib + ib: EXTRQ/INSERTQ */
};

/* Table entry layout: bits 0-3 enum ild_imm, flags below, bits 8-11 enum x86_iclass. */
#define A_IMM_MASK 0x0fu
#define A_MODRM    0x10u /* a ModRM byte follows the opcode */
#define A_INV64    0x20u /* invalid in 64-bit mode */
#define A_UD       0x40u /* undefined opcode in every mode */
#define A_SPEC     0x80u /* length or class needs special_op() */
#define A_CLASS(a) (((a) >> 8) & 0x0fu)

/* Short names for the tables. */
#define N_    0u                              /* no ModRM, no immediate */
#define M_    A_MODRM                         /* ModRM */
#define MB    (A_MODRM | IMM_B)               /* ModRM, ib */
#define MZ    (A_MODRM | IMM_Z)               /* ModRM, iz */
#define IB    IMM_B                           /* ib */
#define IZ    IMM_Z                           /* iz */
#define IV    IMM_V                           /* iv */
#define I64   A_INV64                         /* invalid in 64-bit mode */
#define UD    A_UD                            /* undefined */
#define PFX   A_UD                            /* a prefix: consumed before the table is used */
#define ESC   A_UD                            /* an escape: consumed before the table is used */
#define CLS(c) ((unsigned)(c) << 8)
#define JCC8  (IMM_REL8 | CLS(X86_IC_JCC))
#define FAR   CLS(X86_IC_FAR)

/* One-byte opcode map (SDM Vol. 2 Table A-2). */
static const uint16_t map_one[] = {
	/* 00 */ M_, M_, M_, M_, IB, IZ, I64, I64, M_, M_, M_, M_, IB, IZ, I64, ESC,
	/* 10 */ M_, M_, M_, M_, IB, IZ, I64, I64, M_, M_, M_, M_, IB, IZ, I64, I64,
	/* 20 */ M_, M_, M_, M_, IB, IZ, PFX, I64, M_, M_, M_, M_, IB, IZ, PFX, I64,
	/* 30 */ M_, M_, M_, M_, IB, IZ, PFX, I64, M_, M_, M_, M_, IB, IZ, PFX, I64,
	/* 40: INC/DEC (REX prefixes in 64-bit mode) */
	/* 40 */ N_, N_, N_, N_, N_, N_, N_, N_, N_, N_, N_, N_, N_, N_, N_, N_,
	/* 50: PUSH/POP */
	/* 50 */ N_, N_, N_, N_, N_, N_, N_, N_, N_, N_, N_, N_, N_, N_, N_, N_,
	/* 60: PUSHA POPA BOUND(EVEX) ARPL/MOVSXD, 4 prefixes, PUSH iz, IMUL iz, PUSH ib, IMUL ib, INS/OUTS */
	/* 60 */ I64, I64, M_ | I64, M_, PFX, PFX, PFX, PFX, IZ, MZ, IB, MB, N_, N_, N_, N_,
	/* 70: Jcc rel8 */
	/* 70 */ JCC8, JCC8, JCC8, JCC8, JCC8, JCC8, JCC8, JCC8,
	         JCC8, JCC8, JCC8, JCC8, JCC8, JCC8, JCC8, JCC8,
	/* 80: group 1, TEST, XCHG, MOV, LEA, MOV Sreg, POP Ev (XOP) */
	/* 80 */ MB, MZ, MB | I64, MB, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_,
	/* 90: XCHG/NOP, CBW, CWD, CALLF ptr, FWAIT, PUSHF, POPF, SAHF, LAHF */
	/* 90 */ N_, N_, N_, N_, N_, N_, N_, N_, N_, N_, IMM_AP | I64 | FAR, N_, N_, N_, N_, N_,
	/* A0: MOV moffs, MOVS, CMPS, TEST AL/eAX imm, STOS, LODS, SCAS */
	/* A0 */ IMM_MOFFS, IMM_MOFFS, IMM_MOFFS, IMM_MOFFS, N_, N_, N_, N_,
	         IB, IZ, N_, N_, N_, N_, N_, N_,
	/* B0: MOV r8, ib; MOV r, iv */
	/* B0 */ IB, IB, IB, IB, IB, IB, IB, IB, IV, IV, IV, IV, IV, IV, IV, IV,
	/* C0: shift ib, RET iw, RET, LES(VEX3), LDS(VEX2), MOV ib/iz (XABORT/XBEGIN), ENTER, LEAVE,
	 *     RETF iw, RETF, INT3, INT ib, INTO, IRET */
	/* C0 */ MB, MB, IMM_W | CLS(X86_IC_RET), CLS(X86_IC_RET), M_ | I64, M_ | I64, MB, MZ,
	         IMM_WB, N_, IMM_W | FAR, FAR, FAR, IB | FAR, I64 | FAR, FAR,
	/* D0: shifts by 1/CL, AAM, AAD (REX2 in 64-bit mode), SALC (undefined), XLAT, x87 */
	/* D0 */ M_, M_, M_, M_, IB | I64, IB | I64, UD, N_, M_, M_, M_, M_, M_, M_, M_, M_,
	/* E0: LOOPNE LOOPE LOOP JrCXZ, IN/OUT ib, CALL rel, JMP rel, JMPF ptr, JMP rel8, IN/OUT DX */
	/* E0 */ JCC8, JCC8, JCC8, JCC8, IB, IB, IB, IB,
	         IMM_RELZ | CLS(X86_IC_CALL), IMM_RELZ | CLS(X86_IC_JMP), IMM_AP | I64 | FAR,
	         IMM_REL8 | CLS(X86_IC_JMP), N_, N_, N_, N_,
	/* F0: LOCK, INT1, REPNE, REP, HLT, CMC, group 3, CLC STC CLI STI CLD STD, group 4, group 5 */
	/* F0 */ PFX, FAR, PFX, PFX, N_, N_, A_MODRM | IMM_GRP3, A_MODRM | IMM_GRP3,
	         N_, N_, N_, N_, N_, N_, M_ | A_SPEC, M_ | A_SPEC,
};

/* Two-byte opcode map, 0F xx (SDM Vol. 2 Table A-3). */
static const uint16_t map_0f[] = {
	/* 00: grp6, grp7, LAR, LSL, -, SYSCALL, CLTS, SYSRET, INVD, WBINVD, -, UD2, -, prefetch,
	 *     FEMMS, 3DNow! (ModRM + imm8 opcode suffix) */
	/* 00 */ M_, M_ | A_SPEC, M_, M_, UD, FAR, N_, FAR, N_, N_, UD, N_, UD, M_, N_, MB,
	/* 10: SSE moves, prefetch/hint NOPs, ENDBR */
	/* 10 */ M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_,
	/* 20: MOV CR/DR/TR (ModRM.mod ignored), SSE */
	/* 20 */ M_ | A_SPEC, M_ | A_SPEC, M_ | A_SPEC, M_ | A_SPEC, M_ | A_SPEC, UD, M_ | A_SPEC, UD,
	         M_, M_, M_, M_, M_, M_, M_, M_,
	/* 30: WRMSR RDTSC RDMSR RDPMC SYSENTER SYSEXIT - GETSEC, 0F38, -, 0F3A, - */
	/* 30 */ N_, N_, N_, N_, FAR, FAR, UD, N_, ESC, UD, ESC, UD, UD, UD, UD, UD,
	/* 40: CMOVcc */
	/* 40 */ M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_,
	/* 50 */ M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_,
	/* 60 */ M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_,
	/* 70: PSHUF* ib, shift groups 12-14 ib, PCMPEQ*, EMMS, VMREAD/EXTRQ/INSERTQ, VMWRITE, SSE3 */
	/* 70 */ MB, MB, MB, MB, M_, M_, M_, N_, M_ | A_SPEC, M_, UD, UD, M_, M_, M_, M_,
	/* 80: Jcc rel16/32 */
	/* 80 */ IMM_RELZ | CLS(X86_IC_JCC), IMM_RELZ | CLS(X86_IC_JCC), IMM_RELZ | CLS(X86_IC_JCC),
	         IMM_RELZ | CLS(X86_IC_JCC), IMM_RELZ | CLS(X86_IC_JCC), IMM_RELZ | CLS(X86_IC_JCC),
	         IMM_RELZ | CLS(X86_IC_JCC), IMM_RELZ | CLS(X86_IC_JCC), IMM_RELZ | CLS(X86_IC_JCC),
	         IMM_RELZ | CLS(X86_IC_JCC), IMM_RELZ | CLS(X86_IC_JCC), IMM_RELZ | CLS(X86_IC_JCC),
	         IMM_RELZ | CLS(X86_IC_JCC), IMM_RELZ | CLS(X86_IC_JCC), IMM_RELZ | CLS(X86_IC_JCC),
	         IMM_RELZ | CLS(X86_IC_JCC),
	/* 90: SETcc */
	/* 90 */ M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_,
	/* A0: PUSH FS, POP FS, CPUID, BT, SHLD ib, SHLD CL, VIA PadLock (XSHA*, MONTMUL; XSTORE,
	 *     XCRYPT*: reserved in Intel's map, ModRM on VIA/Zhaoxin), PUSH GS, POP GS, RSM, BTS,
	 *     SHRD ib, SHRD CL, group 15 (PTWRITE), IMUL */
	/* A0 */ N_, N_, N_, M_, MB, M_, M_, M_, N_, N_, FAR, M_, MB, M_, M_ | A_SPEC, M_,
	/* B0: CMPXCHG, LSS, BTR, LFS, LGS, MOVZX, POPCNT (F3; JMPE otherwise), UD1, group 8 ib,
	 *     BTC, BSF/TZCNT, BSR/LZCNT, MOVSX */
	/* B0 */ M_, M_, M_, M_, M_, M_, M_, M_, M_ | A_SPEC, M_, MB, M_, M_, M_, M_, M_,
	/* C0: XADD, CMPPS ib, MOVNTI, PINSRW ib, PEXTRW ib, SHUFPS ib, group 9, BSWAP */
	/* C0 */ M_, M_, MB, M_, MB, MB, MB, M_, N_, N_, N_, N_, N_, N_, N_, N_,
	/* D0 */ M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_,
	/* E0 */ M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_,
	/* F0: ..., UD0 (ModRM) */
	/* F0 */ M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_, M_,
};

_Static_assert(sizeof map_one / sizeof map_one[0] == 256, "one-byte map has 256 entries");
_Static_assert(sizeof map_0f / sizeof map_0f[0] == 256, "0F map has 256 entries");

/* EVEX map 4 (APX promoted legacy instructions): ModRM everywhere; immediates where the legacy
 * one-byte map has them (SHLD/SHRD ib, IMUL iz/ib, group 1, shifts ib, group 3). */
static uint16_t map4_attr(uint8_t op)
{
	switch (op) {
	case 0x24: case 0x2c: case 0x6b: case 0x80: case 0x83: case 0xc0: case 0xc1:
		return MB;
	case 0x69: case 0x81:
		return MZ;
	case 0xf6: case 0xf7:
		return A_MODRM | IMM_GRP3;
	default:
		return M_;
	}
}

/* VEX/EVEX map 1 (0F): ModRM except VZEROUPPER/VZEROALL (77); ib at 70-73, C2, C4-C6. */
static uint16_t vex_map1_attr(uint8_t op)
{
	switch (op) {
	case 0x77:
		return N_;
	case 0x70: case 0x71: case 0x72: case 0x73: case 0xc2: case 0xc4: case 0xc5: case 0xc6:
		return MB;
	default:
		return M_;
	}
}

/* ---- Decoding state --------------------------------------------------------------------- */

/* What the prefixes and the opcode escape said. */
struct ild_state {
	uint8_t p66;    /* operand-size override (66) seen */
	uint8_t p67;    /* address-size override (67) seen */
	uint8_t rep;    /* last of F2/F3, or 0 */
	uint8_t lock;   /* F0 seen */
	uint8_t rexw;   /* REX.W / REX2.W / VEX.W / EVEX.W effective */
	uint8_t map;    /* 0 one-byte, 1 0F, 2 0F38, 3 0F3A, 4+ VEX/EVEX/XOP map number */
	uint8_t vexlike; /* 0 legacy/REX/REX2, 1 VEX, 2 EVEX, 3 XOP */
	uint8_t rex2;   /* REX2 prefix seen */
	uint8_t rex;    /* the REX prefix right before the opcode, or 0 */
	unsigned osz;   /* operand size in bits: 16, 32 or 64 */
	unsigned asz;   /* address size in bits */
};

#define MAX_LEN 15u

/* Checks that an instruction of `need` bytes fits: 0, -PTREC_EFORMAT over 15 bytes,
 * -PTREC_ETRUNC past len. */
static inline int fits(size_t need, size_t len)
{
	if (need > MAX_LEN)
		return -PTREC_EFORMAT;
	if (need > len)
		return -PTREC_ETRUNC;
	return 0;
}

/* Displacement bytes after a ModRM byte (SDM Vol. 2 Tables 2-1 and 2-2), indexed by ModRM;
 * MT_SIB marks "a SIB byte follows" (its base 101 with mod 00 adds a disp32). */
#define MT_SIB 0x10u
#define R8(a, b, c, d, e, f, g, h) a, b, c, d, e, f, g, h
#define X8(row) row, row, row, row, row, row, row, row
static const uint8_t modrm_tail32[256] = {
	/* mod 00: rm 100 SIB, rm 101 disp32 (RIP-relative in 64-bit mode) */
	X8(R8(0, 0, 0, 0, MT_SIB, 4, 0, 0)),
	/* mod 01: disp8 */
	X8(R8(1, 1, 1, 1, MT_SIB | 1, 1, 1, 1)),
	/* mod 10: disp32 */
	X8(R8(4, 4, 4, 4, MT_SIB | 4, 4, 4, 4)),
	/* mod 11: register */
	X8(R8(0, 0, 0, 0, 0, 0, 0, 0)),
};
static const uint8_t modrm_tail16[256] = {
	/* mod 00: rm 110 disp16 */
	X8(R8(0, 0, 0, 0, 0, 0, 2, 0)),
	/* mod 01: disp8 */
	X8(R8(1, 1, 1, 1, 1, 1, 1, 1)),
	/* mod 10: disp16 */
	X8(R8(2, 2, 2, 2, 2, 2, 2, 2)),
	/* mod 11: register */
	X8(R8(0, 0, 0, 0, 0, 0, 0, 0)),
};

/* Bytes of SIB and displacement after the ModRM byte at b[i] (which must be readable) for an
 * address size of asz bits; -PTREC_E* if the SIB byte is needed but unreadable. */
static inline int modrm_tail(const uint8_t *b, size_t i, size_t len, unsigned asz)
{
	uint8_t modrm = b[i];

	if (asz == 16)
		return modrm_tail16[modrm];
	unsigned t = modrm_tail32[modrm];
	if (t & MT_SIB) {
		int e = fits(i + 2, len);
		if (e)
			return e;
		t = (t & 0x0f) + 1;
		if (modrm < 0x40 && (b[i + 1] & 7) == 5)
			t += 4; /* SIB base 101 with mod 00: disp32, no base */
	}
	return (int)t;
}

/* Sign-extends the n-byte little-endian value at p (n = 1, 2, 4 or 8). */
static inline int64_t read_signed(const uint8_t *p, unsigned n)
{
	switch (n) {
	case 1:
		return (int8_t)p[0];
	case 2:
		return (int16_t)(uint16_t)(p[0] | (unsigned)p[1] << 8);
	case 4:
		return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
		                 (uint32_t)p[3] << 24);
	default: {
		uint64_t v = 0;
		for (unsigned k = 0; k < 8; k++)
			v |= (uint64_t)p[k] << (8 * k);
		return (int64_t)v;
	}
	}
}

/* Class of 0F 01 with ModRM.mod = 11 (and its mandatory prefix: rep F2/F3 or 0, p66). */
static unsigned class_0f01(uint8_t modrm, uint8_t rep, uint8_t p66)
{
	switch (modrm) {
	case 0xc1: /* VMCALL */
	case 0xc2: /* VMLAUNCH */
	case 0xc3: /* VMRESUME */
		return X86_IC_FAR;
	case 0xca: /* F3: ERETU, F2: ERETS (FRED); no prefix: CLAC */
		return rep ? X86_IC_FAR : X86_IC_OTHER;
	case 0xec: /* F3: UIRET */
		return rep == 0xf3 ? X86_IC_FAR : X86_IC_OTHER;
	case 0xcc: /* 66: TDCALL */
	case 0xcd: /* 66: SEAMRET */
	case 0xcf: /* 66: SEAMCALL; no prefix: ENCLS */
		return p66 && !rep ? X86_IC_FAR : X86_IC_OTHER;
	default:
		return X86_IC_OTHER;
	}
}

/* ---- The decoder, one step per function ---------------------------------------------------
 * Every step is inlined into ild_decode, which is inlined once per mode, so that the mode tests
 * fold away and the state stays in registers. */
#define ILD_STEP static inline __attribute__((always_inline))

/* What an opcode step found. */
enum ild_found {
	ILD_ATTR = 0,     /* the opcode's table entry is in *attr */
	ILD_ONE_BYTE = 1, /* not an escape in this mode: a one-byte opcode */
	ILD_DONE = 2,     /* the whole instruction is decoded into insn (JMPABS) */
};

/* Legacy prefixes, in any order and number; a REX only counts when it is the last prefix
 * before the opcode (SDM Vol. 2 2.2.1).  Leaves *pi at the opcode byte. */
ILD_STEP int ild_prefixes(const uint8_t *b, size_t len, const enum ptrec_x86_mode mode,
                          struct ild_state *s, size_t *pi)
{
	int e;

	for (size_t i = 0;; i++) {
		if ((e = fits(i + 1, len)))
			return e;
		uint8_t c = b[i];
		switch (c) {
		case 0x66:
			s->p66 = 1;
			break;
		case 0x67:
			s->p67 = 1;
			break;
		case 0xf2: case 0xf3:
			s->rep = c;
			break;
		case 0xf0:
			s->lock = 1;
			break;
		case 0x26: case 0x2e: case 0x36: case 0x3e: case 0x64: case 0x65:
			break;
		default:
			if (mode == X86_MODE_64 && (c & 0xf0) == 0x40) {
				s->rex = c;
				continue;
			}
			*pi = i;
			return 0;
		}
		s->rex = 0;
	}
}

/* Operand and address size from the mode and the 66/67 prefixes; REX.W as seen so far. */
ILD_STEP void ild_sizes(struct ild_state *s, const enum ptrec_x86_mode mode)
{
	if (mode == X86_MODE_16) {
		s->osz = s->p66 ? 32 : 16;
		s->asz = s->p67 ? 32 : 16;
	} else {
		s->osz = s->p66 ? 16 : 32;
		s->asz = mode == X86_MODE_64 ? (s->p67 ? 32 : 64) : (s->p67 ? 16 : 32);
	}
	s->rexw = (s->rex >> 3) & 1;
}

/* 0F, 0F 38 and 0F 3A escapes at b[*pi]. */
ILD_STEP int ild_0f(const uint8_t *b, size_t len, struct ild_state *s, size_t *pi, uint8_t *op,
                    uint16_t *attr)
{
	size_t i = *pi;
	int e;

	if ((e = fits(i + 2, len)))
		return e;
	*op = b[++i];
	if (*op == 0x38 || *op == 0x3a) {
		if ((e = fits(i + 2, len)))
			return e;
		s->map = *op == 0x38 ? 2 : 3;
		*op = b[++i];
		*attr = s->map == 2 ? M_ : MB;
	} else {
		s->map = 1;
		*attr = map_0f[*op];
	}
	*pi = i;
	return ILD_ATTR;
}

/* REX2 (APX) at b[*pi] in 64-bit mode, and JMPABS, which it alone can encode. */
ILD_STEP int ild_rex2(const uint8_t *b, size_t len, struct ild_state *s, size_t *pi,
                      uint8_t *op, uint16_t *attr, struct ptrec_x86_insn *insn)
{
	size_t i = *pi;
	int e;

	if (s->rex)
		return -PTREC_EFORMAT; /* REX before REX2 */
	if ((e = fits(i + 3, len)))
		return e;
	uint8_t p = b[i + 1];
	s->rex2 = 1;
	s->rexw = (p >> 3) & 1;
	s->map = p >> 7;
	i += 2;
	*op = b[i];
	*pi = i;
	unsigned row = *op >> 4;
	if (s->map != 0) {
		/* Rows 3 (incl. the 0F38/0F3A escapes) and 8 of map 1 are reserved. */
		if (row == 0x3 || row == 0x8)
			return -PTREC_EFORMAT;
		*attr = map_0f[*op];
		return ILD_ATTR;
	}
	if (*op == 0xa1 && !s->rexw) {
		/* JMPABS: REX2.M0=0 REX2.W=0 A1 imm64.  Its absolute target is meant to be patched
		 * at run time (PLT), so Intel PT always sends a TIP for it (APX specification): to
		 * PT it is an indirect jump, and the flow follows the TIP, not the bytes on file. */
		if ((e = fits(i + 9, len)))
			return e;
		insn->length = (uint8_t)(i + 9);
		insn->iclass = X86_IC_JMP_IND;
		insn->flags = 0;
		insn->mode = (uint8_t)X86_MODE_64;
		insn->reserved = 0;
		insn->target = 0;
		return ILD_DONE;
	}
	/* Rows 4, 7, A and E of map 0 are reserved under REX2. */
	if (row == 0x4 || row == 0x7 || row == 0xa || row == 0xe)
		return -PTREC_EFORMAT;
	if (*op == 0x0f)
		return -PTREC_EFORMAT; /* the map comes from REX2.M0 */
	*attr = map_one[*op];
	return ILD_ATTR;
}

/* VEX (maps 1-3, 5-7) and EVEX (maps 1-3, 5-7): the table entry of op in s->map. */
ILD_STEP int ild_vex_map(const struct ild_state *s, uint8_t op, uint16_t *attr)
{
	switch (s->map) {
	case 1:
		*attr = vex_map1_attr(op);
		return ILD_ATTR;
	case 2: case 5: case 6:
		*attr = M_;
		return ILD_ATTR;
	case 3:
		*attr = MB;
		return ILD_ATTR;
	case 7: /* URDMSR/UWRMSR r64, imm32 */
		if (op != 0xf8)
			return -PTREC_EFORMAT;
		*attr = A_MODRM | IMM_D;
		return ILD_ATTR;
	default:
		return -PTREC_EFORMAT;
	}
}

/* Whether the C4/C5/62 at b[i] is a VEX/EVEX prefix (always in 64-bit mode; outside it, LES,
 * LDS or BOUND unless ModRM.mod = 11), and no legacy prefix stands before it.  Returns
 * ILD_ATTR for a prefix, ILD_ONE_BYTE, or -PTREC_E*. */
ILD_STEP int ild_vexlike_prefix(const uint8_t *b, size_t len, const enum ptrec_x86_mode mode,
                                const struct ild_state *s, size_t i)
{
	int e;

	if ((e = fits(i + 2, len)))
		return e;
	if (mode != X86_MODE_64 && (b[i + 1] & 0xc0) != 0xc0)
		return ILD_ONE_BYTE;
	if (s->p66 || s->rep || s->lock || s->rex)
		return -PTREC_EFORMAT;
	return ILD_ATTR;
}

/* VEX3 (C4) or VEX2 (C5) at b[*pi]. */
ILD_STEP int ild_vex(const uint8_t *b, size_t len, const enum ptrec_x86_mode mode,
                     struct ild_state *s, size_t *pi, uint8_t *op, uint16_t *attr)
{
	size_t i = *pi;
	int e = ild_vexlike_prefix(b, len, mode, s, i);

	if (e != ILD_ATTR)
		return e;
	s->vexlike = 1;
	if (b[i] == 0xc5) {
		if ((e = fits(i + 3, len)))
			return e;
		s->map = 1;
		i += 2;
	} else {
		if ((e = fits(i + 4, len)))
			return e;
		s->map = b[i + 1] & 0x1f;
		s->rexw = b[i + 2] >> 7;
		i += 3;
	}
	*op = b[i];
	*pi = i;
	return ild_vex_map(s, *op, attr);
}

/* EVEX (62) at b[*pi]; map 4 holds the APX promoted legacy instructions. */
ILD_STEP int ild_evex(const uint8_t *b, size_t len, const enum ptrec_x86_mode mode,
                      struct ild_state *s, size_t *pi, uint8_t *op, uint16_t *attr)
{
	size_t i = *pi;
	int e = ild_vexlike_prefix(b, len, mode, s, i);

	if (e != ILD_ATTR)
		return e;
	if ((e = fits(i + 5, len)))
		return e;
	s->vexlike = 2;
	s->map = b[i + 1] & 0x07;
	s->rexw = b[i + 2] >> 7;
	if (s->map == 4 && (b[i + 2] & 3) == 1 && !s->rexw)
		s->osz = 16; /* EVEX.pp = 01 is the 66 prefix of promoted legacy code */
	i += 4;
	*op = b[i];
	*pi = i;
	if (s->map == 4) {
		*attr = map4_attr(*op);
		return ILD_ATTR;
	}
	return ild_vex_map(s, *op, attr);
}

/* XOP (8F with a map field >= 8; POP Ev otherwise) at b[*pi]. */
ILD_STEP int ild_xop(const uint8_t *b, size_t len, struct ild_state *s, size_t *pi,
                     uint8_t *op, uint16_t *attr)
{
	size_t i = *pi;
	int e;

	if ((e = fits(i + 2, len)))
		return e;
	if ((b[i + 1] & 0x1f) < 8)
		return ILD_ONE_BYTE;
	if (s->p66 || s->rep || s->lock || s->rex)
		return -PTREC_EFORMAT;
	if ((e = fits(i + 4, len)))
		return e;
	s->vexlike = 3;
	s->map = b[i + 1] & 0x1f;
	s->rexw = b[i + 2] >> 7;
	i += 3;
	*op = b[i];
	*pi = i;
	switch (s->map) {
	case 8:
		*attr = MB;
		return ILD_ATTR;
	case 9:
		*attr = M_;
		return ILD_ATTR;
	case 10:
		*attr = A_MODRM | IMM_D;
		return ILD_ATTR;
	default:
		return -PTREC_EFORMAT;
	}
}

/* The opcode at b[*pi], after any escape or VEX-like prefix naming its map: leaves *pi at the
 * opcode byte, the opcode in *op and its table entry in *attr.  Returns ILD_ATTR, ILD_DONE
 * (JMPABS, decoded into insn) or -PTREC_E*. */
ILD_STEP int ild_opcode(const uint8_t *b, size_t len, const enum ptrec_x86_mode mode,
                        struct ild_state *s, size_t *pi, uint8_t *op, uint16_t *attr,
                        struct ptrec_x86_insn *insn)
{
	int found;

	*op = b[*pi];
	switch (*op) {
	case 0x0f:
		return ild_0f(b, len, s, pi, op, attr);
	case 0xd5: /* REX2 in 64-bit mode (APX); AAD ib otherwise */
		if (mode == X86_MODE_64)
			return ild_rex2(b, len, s, pi, op, attr, insn);
		break;
	case 0xc4: case 0xc5: /* VEX3/VEX2; LES/LDS outside 64-bit mode unless ModRM.mod = 11 */
		if ((found = ild_vex(b, len, mode, s, pi, op, attr)) != ILD_ONE_BYTE)
			return found;
		break;
	case 0x62: /* EVEX; BOUND outside 64-bit mode unless ModRM.mod = 11 */
		if ((found = ild_evex(b, len, mode, s, pi, op, attr)) != ILD_ONE_BYTE)
			return found;
		break;
	case 0x8f: /* XOP when the map field is >= 8; POP Ev otherwise */
		if ((found = ild_xop(b, len, s, pi, op, attr)) != ILD_ONE_BYTE)
			return found;
		break;
	default:
		break;
	}
	*attr = map_one[*op];
	return ILD_ATTR;
}

/* The ModRM byte at b[*pn] and the SIB and displacement after it; advances *pn past them. */
ILD_STEP int ild_modrm(const uint8_t *b, size_t len, const struct ild_state *s, uint16_t attr,
                       uint8_t op, size_t *pn, uint8_t *modrm)
{
	size_t n = *pn;
	int e, t;

	if ((e = fits(n + 1, len)))
		return e;
	*modrm = b[n];
	if ((attr & A_SPEC) && s->map == 1 && !s->vexlike && op >= 0x20 && op <= 0x26)
		t = 0; /* MOV to/from CR/DR/TR: ModRM.mod is ignored, always a register */
	else if ((t = modrm_tail(b, n, len, s->asz)) < 0)
		return t;
	*pn = n + 1 + (size_t)t;
	return 0;
}

/* The opcodes marked A_SPEC, whose class, immediate or validity depends on ModRM.reg or
 * ModRM.mod or a mandatory prefix: adjusts *iclass and *imm, or returns -PTREC_EFORMAT. */
ILD_STEP int special_op(const struct ild_state *s, uint8_t op, uint8_t modrm, unsigned *iclass,
                        unsigned *imm)
{
	unsigned reg = (modrm >> 3) & 7;

	if (s->map == 0) {
		if (op == 0xff) {
			/* group 5: INC DEC CALLN CALLF JMPN JMPF PUSH - */
			static const uint8_t grp5[8] = {
				X86_IC_OTHER, X86_IC_OTHER, X86_IC_CALL_IND, X86_IC_FAR,
				X86_IC_JMP_IND, X86_IC_FAR, X86_IC_OTHER, 0xff,
			};
			*iclass = grp5[reg];
			if (*iclass == 0xff)
				return -PTREC_EFORMAT;
		} else if (op == 0xfe && reg > 1) {
			return -PTREC_EFORMAT; /* group 4 has only INC/DEC Eb */
		}
	} else if (s->map == 1) {
		switch (op) {
		case 0x01:
			if ((modrm >> 6) == 3)
				*iclass = class_0f01(modrm, s->rep, s->p66);
			break;
		case 0xae: /* F3 0F AE /4: PTWRITE */
			if (reg == 4 && s->rep == 0xf3 && !s->p66)
				*iclass = X86_IC_PTWRITE;
			break;
		case 0x78: /* 66: EXTRQ ib ib; F2: INSERTQ ib ib; otherwise VMREAD */
			if (s->rep == 0xf2 || (s->p66 && !s->rep))
				*imm = IMM_BB;
			break;
		case 0xb8: /* F3: POPCNT; otherwise JMPE (IA-64 only) */
			if (s->rep != 0xf3)
				return -PTREC_EFORMAT;
			break;
		default:
			break;
		}
	}
	return 0;
}

/* Bytes of the immediate or branch offset: by kind and operand size (address size for moffs;
 * rel16/32 is always rel32 in 64-bit mode). */
ILD_STEP unsigned ild_imm_size(unsigned imm, const struct ild_state *s,
                               const enum ptrec_x86_mode mode, uint8_t op, uint8_t modrm)
{
	static const uint8_t imm_size[16][3] = {
		/*                 16  32  64 bits */
		[IMM_B]       = { 1, 1, 1 },
		[IMM_W]       = { 2, 2, 2 },
		[IMM_Z]       = { 2, 4, 4 },
		[IMM_V]       = { 2, 4, 8 },
		[IMM_WB]      = { 3, 3, 3 },
		[IMM_MOFFS]   = { 2, 4, 8 },
		[IMM_AP]      = { 4, 6, 6 },
		[IMM_REL8]    = { 1, 1, 1 },
		[IMM_RELZ]    = { 2, 4, 4 },
		[IMM_D]       = { 4, 4, 4 },
		[IMM_BB]      = { 2, 2, 2 },
	};
	unsigned szi = s->osz == 16 ? 0 : s->osz == 32 ? 1 : 2;

	if (imm == IMM_MOFFS)
		szi = s->asz == 16 ? 0 : s->asz == 32 ? 1 : 2;
	else if (imm == IMM_RELZ && mode == X86_MODE_64)
		szi = 1;
	if (imm == IMM_GRP3 && ((modrm >> 3) & 7) < 2)
		return (op & 1) ? imm_size[IMM_Z][szi] : 1; /* TEST Eb, ib / TEST Ev, iz */
	return imm_size[imm][szi];
}

/* The decoder proper; inlined once per mode so that the mode tests fold away. */
static inline __attribute__((always_inline)) int
ild_decode(const uint8_t *b, size_t len, uint64_t ip, const enum ptrec_x86_mode mode,
           struct ptrec_x86_insn *insn)
{
	struct ild_state s = { 0 };
	size_t i;
	uint8_t op, modrm = 0;
	uint16_t attr;
	int e;

	if ((e = ild_prefixes(b, len, mode, &s, &i)))
		return e;
	ild_sizes(&s, mode);
	if ((e = ild_opcode(b, len, mode, &s, &i, &op, &attr, insn)) < 0)
		return e;
	if (e == ILD_DONE)
		return (int)insn->length;
	if (attr & A_UD)
		return -PTREC_EFORMAT;
	if ((attr & A_INV64) && mode == X86_MODE_64)
		return -PTREC_EFORMAT;
	if (s.rexw && mode == X86_MODE_64 && !s.vexlike)
		s.osz = 64;

	/* i indexes the opcode byte. */
	size_t n = i + 1;
	unsigned iclass = A_CLASS(attr);
	unsigned imm = attr & A_IMM_MASK;

	if ((attr & A_MODRM) && (e = ild_modrm(b, len, &s, attr, op, &n, &modrm)))
		return e;
	if ((attr & A_SPEC) && (e = special_op(&s, op, modrm, &iclass, &imm)))
		return e;
	unsigned isz = ild_imm_size(imm, &s, mode, op, modrm);
	if ((e = fits(n + isz, len)))
		return e;
	n += isz;

	insn->length = (uint8_t)n;
	insn->iclass = (uint8_t)iclass;
	insn->flags = 0;
	insn->mode = (uint8_t)mode;
	insn->reserved = 0;
	insn->target = 0;
	if (imm == IMM_REL8 || imm == IMM_RELZ) {
		uint64_t t = ip + n + (uint64_t)read_signed(b + n - isz, isz);
		/* Near branches use the operand size; Intel 64 ignores 66 in 64-bit mode. */
		if (mode != X86_MODE_64)
			t &= s.osz == 16 ? 0xffffu : 0xffffffffu;
		insn->target = t;
		insn->flags = X86_INSN_HAS_TARGET;
	}
	return (int)n;
}

int ptrec_x86_ild_decode(const uint8_t *b, size_t len, uint64_t ip, enum ptrec_x86_mode mode,
                   struct ptrec_x86_insn *insn)
{
	switch (mode) {
	case X86_MODE_64:
		return ild_decode(b, len, ip, X86_MODE_64, insn);
	case X86_MODE_32:
		return ild_decode(b, len, ip, X86_MODE_32, insn);
	case X86_MODE_16:
		return ild_decode(b, len, ip, X86_MODE_16, insn);
	default:
		return -PTREC_EINVAL;
	}
}

const char *ptrec_x86_iclass_name(unsigned iclass)
{
	static const char *const names[X86_IC_COUNT_] = {
		[X86_IC_OTHER] = "other",
		[X86_IC_JCC] = "jcc",
		[X86_IC_JMP] = "jmp",
		[X86_IC_CALL] = "call",
		[X86_IC_JMP_IND] = "jmp_ind",
		[X86_IC_CALL_IND] = "call_ind",
		[X86_IC_RET] = "ret",
		[X86_IC_FAR] = "far",
		[X86_IC_PTWRITE] = "ptwrite",
	};
	return iclass < X86_IC_COUNT_ ? names[iclass] : "?";
}
