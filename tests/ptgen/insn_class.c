/* insn_class.c — ptgen's branch classifier (see insn_class.h).  Written from the SDM's opcode
 * map (Vol. 2, Appendix A) for the encodings compilers emit in 64-bit user code. */
#include "insn_class.h"

/* Length of a ModRM operand (ModRM byte, optional SIB, displacement) in 64-bit mode, given the
 * bytes starting at the ModRM byte; -1 if avail is too short. */
static int modrm_len(const uint8_t *b, size_t avail)
{
	if (avail < 1)
		return -1;
	unsigned mod = b[0] >> 6, rm = b[0] & 7;
	int len = 1;
	if (mod == 3)
		return len;
	if (rm == 4) {
		if (avail < 2)
			return -1;
		len++; /* SIB */
		if (mod == 0 && (b[1] & 7) == 5)
			len += 4; /* no base: disp32 */
	} else if (mod == 0 && rm == 5) {
		len += 4; /* RIP-relative disp32 */
	}
	if (mod == 1)
		len += 1;
	else if (mod == 2)
		len += 4;
	return len;
}

static int32_t rd32(const uint8_t *b)
{
	return (int32_t)((uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
	                 (uint32_t)b[3] << 24);
}

int ic_classify(const uint8_t *b, size_t avail, struct ic_insn *out)
{
	size_t p = 0;
	out->kind = IC_OTHER;
	out->len = 0;
	out->rep = 0;
	out->pad_ = 0;
	out->disp = 0;

	/* Legacy prefixes and REX, in any order (a REX not right before the opcode is ignored by
	 * the CPU; skipping it is harmless here). */
	for (;;) {
		if (p >= avail)
			return -1;
		uint8_t c = b[p];
		if (c == 0xf2 || c == 0xf3) {
			out->rep = 1;
			p++;
		} else if (c == 0x26 || c == 0x2e || c == 0x36 || c == 0x3e || c == 0x64 ||
		           c == 0x65 || c == 0x66 || c == 0x67 || c == 0xf0 ||
		           (c >= 0x40 && c <= 0x4f)) {
			p++;
		} else {
			break;
		}
		if (p > 14)
			return 0; /* too many prefixes: not something we classify */
	}

	uint8_t op = b[p];
	size_t need;
	switch (op) {
	case 0x70: case 0x71: case 0x72: case 0x73: case 0x74: case 0x75: case 0x76: case 0x77:
	case 0x78: case 0x79: case 0x7a: case 0x7b: case 0x7c: case 0x7d: case 0x7e: case 0x7f:
	case 0xe0: case 0xe1: case 0xe2: case 0xe3: /* LOOPNE, LOOPE, LOOP, JrCXZ */
	case 0xeb:
		need = p + 2;
		if (avail < need)
			return -1;
		out->kind = op == 0xeb ? IC_JMP : IC_JCC;
		out->len = (uint8_t)need;
		out->disp = (int8_t)b[p + 1];
		return 0;
	case 0xe8:
	case 0xe9:
		need = p + 5;
		if (avail < need)
			return -1;
		out->kind = op == 0xe8 ? IC_CALL : IC_JMP;
		out->len = (uint8_t)need;
		out->disp = rd32(b + p + 1);
		return 0;
	case 0xc3:
		out->kind = IC_RET;
		out->len = (uint8_t)(p + 1);
		return 0;
	case 0xc2:
		out->kind = IC_RET;
		out->len = (uint8_t)(p + 3);
		return 0;
	case 0xca: case 0xcb: case 0xcf: /* far RET, IRET */
		out->kind = IC_FAR;
		out->len = (uint8_t)(p + (op == 0xca ? 3 : 1));
		return 0;
	case 0xcc: case 0xf1: /* INT3, INT1 */
		out->kind = IC_SYSCALL;
		out->len = (uint8_t)(p + 1);
		return 0;
	case 0xcd: /* INT n */
		out->kind = IC_SYSCALL;
		out->len = (uint8_t)(p + 2);
		return 0;
	case 0xff: {
		int m = modrm_len(b + p + 1, avail - p - 1);
		if (m < 0)
			return -1;
		unsigned reg = (b[p + 1] >> 3) & 7;
		if (reg == 2)
			out->kind = IC_CALL_IND;
		else if (reg == 4)
			out->kind = IC_JMP_IND;
		else if (reg == 3 || reg == 5)
			out->kind = IC_FAR;
		else
			return 0; /* INC/DEC/PUSH: not a branch */
		out->len = (uint8_t)(p + 1 + (size_t)m);
		return 0;
	}
	case 0x0f:
		if (p + 1 >= avail)
			return -1;
		op = b[p + 1];
		if (op >= 0x80 && op <= 0x8f) {
			need = p + 6;
			if (avail < need)
				return -1;
			out->kind = IC_JCC;
			out->len = (uint8_t)need;
			out->disp = rd32(b + p + 2);
		} else if (op == 0x05 || op == 0x34) { /* SYSCALL, SYSENTER */
			out->kind = IC_SYSCALL;
			out->len = (uint8_t)(p + 2);
		} else if (op == 0x07 || op == 0x35) { /* SYSRET, SYSEXIT */
			out->kind = IC_FAR;
			out->len = (uint8_t)(p + 2);
		}
		return 0;
	default:
		return 0;
	}
}

const char *ic_kind_name(unsigned kind)
{
	static const char *const names[IC_KIND_COUNT_] = {
		"other", "jcc", "jmp", "call", "jmp.ind", "call.ind", "ret", "syscall", "far",
	};
	return kind < IC_KIND_COUNT_ ? names[kind] : "?";
}
