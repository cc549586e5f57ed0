/* pt_packet.c — Intel PT packet layer: one packet from bytes, names, dump formatting, PSB
 * search and last-IP decompression.
 *
 * Written from the packet descriptions of the Intel SDM (Vol. 3C, "Intel Processor Trace",
 * section "Trace Packets and Data Types") and, for the newer packets (block packets BBP/BIP/
 * BEP, event trace CFE/EVD, TRIG), from Intel's Architecture Instruction Set Extensions
 * reference.  Pure functions: no I/O, no globals, no allocation, never a read past buf[len).
 *
 * Speed: ptrec_pt_packet_decode() is on the flow decoder's hot path (one call per packet).  It
 * branches on the header byte once, reads multi-byte payloads with one unaligned 8-byte load
 * when the buffer allows it, and finds the TNT stop bit with a count-leading-zeros, never a
 * loop over bits. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "ptrec.h"
#include "decode/pt_packet.h"

/* PSB: the 2-byte pattern 02 82 repeated 8 times. */
#define PSB_SIZE 16
static const uint8_t psb_bytes[PSB_SIZE] = {0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
                                            0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82};

/* Largest CYC packet: 1 header byte (5 bits) + 9 extension bytes (7 bits each) = 68 bits,
 * enough for any 64-bit cycle count.  A 10th byte asking for more, or one whose bits would not
 * fit in 64, is malformed. */
#define CYC_MAX_SIZE 10

/* Reads n (0..8) little-endian bytes from p.  The caller guarantees p[0..n) is readable;
 * avail says how many bytes are readable from p, so that 8 can be loaded at once. */
static inline uint64_t le_bytes(const uint8_t *p, unsigned n, size_t avail)
{
	uint64_t v = 0;

	if (n == 0)
		return 0;
	if (avail >= 8) {
		memcpy(&v, p, 8); /* x86-64 is little-endian: one unaligned load */
		return n == 8 ? v : v & ((UINT64_C(1) << (8 * n)) - 1);
	}
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* Position of the highest set bit of a non-zero value. */
static inline unsigned top_bit(uint64_t v)
{
	return 63u - (unsigned)__builtin_clzll(v);
}

/* Packet bytes by IPBytes for TIP/TIP.PGE/TIP.PGD/FUP: header + 0/2/4/6/6/-/8/- bytes. */
static const int8_t ip_packet_size[8] = {1, 3, 5, 7, 7, -1, 9, -1};

/* Decodes an IP packet (header low 5 bits already matched); a decoded packet ends the block
 * context when ctx is given. */
static int decode_ip(const uint8_t *buf, size_t len, uint8_t type, enum ptrec_pt_packet_ctx *ctx,
                     struct ptrec_pt_packet *pkt)
{
	unsigned ipbytes = buf[0] >> 5;
	int size = ip_packet_size[ipbytes];

	if (size < 0)
		return -PTREC_EFORMAT; /* IPBytes 101b and 111b are reserved */
	if (len < (size_t)size)
		return -PTREC_ETRUNC;
	pkt->type = type;
	pkt->size = (uint8_t)size;
	pkt->ipbytes = (uint8_t)ipbytes;
	pkt->payload = le_bytes(buf + 1, (unsigned)size - 1, len - 1);
	if (ctx)
		*ctx = PT_CTX_NONE;
	return size;
}

/* Short TNT (TNT-8): header byte b, bit 0 clear, b not 0x00/0x02.  The highest set bit is the
 * stop bit; the bits below it down to bit 1 are the branch outcomes, oldest first. */
static inline int decode_short_tnt(uint8_t b, struct ptrec_pt_packet *pkt)
{
	unsigned stop = top_bit(b); /* 2..7 */

	pkt->type = PT_PKT_TNT;
	pkt->size = 1;
	pkt->tnt_count = (uint8_t)(stop - 1);
	pkt->payload = (uint64_t)(b >> 1) & ((1u << (stop - 1)) - 1);
	return 1;
}

/* CYC: header bits 1:0 = 11, bit 2 = Exp, bits 7:3 = cycles 4:0; each extension byte has
 * bit 0 = Exp and bits 7:1 = the next 7 bits. */
static int decode_cyc(const uint8_t *buf, size_t len, struct ptrec_pt_packet *pkt)
{
	uint64_t cycles = buf[0] >> 3;
	unsigned shift = 5;
	size_t i = 1;
	uint8_t b = buf[0];

	while (b & 4) {
		if (i >= CYC_MAX_SIZE)
			return -PTREC_EFORMAT; /* would exceed 64 bits of count */
		if (i >= len)
			return -PTREC_ETRUNC;
		b = buf[i++];
		if (shift > 57 && ((unsigned)(b >> 1) >> (64 - shift)) != 0)
			return -PTREC_EFORMAT; /* the count would need more than 64 bits */
		cycles |= (uint64_t)(b >> 1) << shift;
		shift += 7;
		b <<= 2; /* move this byte's Exp bit (bit 0) to where the loop tests it (bit 2) */
	}
	pkt->type = PT_PKT_CYC;
	pkt->size = (uint8_t)i;
	pkt->payload = cycles;
	return (int)i;
}

/* Checks that buf[0..len) is a prefix of a packet of size bytes: ETRUNC if it is shorter. */
#define NEED(size) do { if (len < (size)) return -PTREC_ETRUNC; } while (0)

/* Sets the common fields of a fixed-size packet. */
#define FIXED(t, s) do { pkt->type = (t); pkt->size = (s); } while (0)

/* Packets that begin with the 02 escape byte. */
static int decode_ext(const uint8_t *buf, size_t len, enum ptrec_pt_packet_ctx *ctx,
                      struct ptrec_pt_packet *pkt)
{
	uint8_t b1;

	NEED(2);
	b1 = buf[1];
	switch (b1) {
	case 0x82: /* PSB: 02 82 x 8 */
		if (len >= PSB_SIZE) { /* (one compare of constant size: real traces have a PSB+
		                          every few hundred bytes) */
			if (memcmp(buf, psb_bytes, PSB_SIZE))
				return -PTREC_EFORMAT;
		} else {
			for (size_t i = 2; i < len; i++)
				if (buf[i] != ((i & 1) ? 0x82 : 0x02))
					return -PTREC_EFORMAT;
		}
		NEED(PSB_SIZE);
		FIXED(PT_PKT_PSB, PSB_SIZE);
		if (ctx)
			*ctx = PT_CTX_NONE;
		return PSB_SIZE;
	case 0x23:
		FIXED(PT_PKT_PSBEND, 2);
		break;
	case 0xa3: { /* long TNT: 02 a3 + 6 bytes, stop bit in the highest set bit */
		uint64_t bits;
		unsigned stop;

		NEED(8);
		bits = le_bytes(buf + 2, 6, len - 2);
		if (bits < 2)
			return -PTREC_EFORMAT; /* no stop bit, or a stop bit with no branch bits */
		stop = top_bit(bits);
		FIXED(PT_PKT_TNT, 8);
		pkt->tnt_count = (uint8_t)stop;
		pkt->payload = bits & ((UINT64_C(1) << stop) - 1);
		break;
	}
	case 0x43: { /* PIP: bit 0 = NR, bits 47:1 = CR3[51:5] */
		uint64_t raw;

		NEED(8);
		raw = le_bytes(buf + 2, 6, len - 2);
		FIXED(PT_PKT_PIP, 8);
		pkt->payload = (raw >> 1) << 5;
		pkt->payload2 = raw & 1;
		break;
	}
	case 0x03: /* CBR: ratio, reserved byte */
		NEED(4);
		FIXED(PT_PKT_CBR, 4);
		pkt->payload = buf[2];
		return 4; /* timing: keeps the block context */
	case 0xc8: /* VMCS: 5 bytes = VMCS pointer bits 51:12 */
		NEED(7);
		FIXED(PT_PKT_VMCS, 7);
		pkt->payload = le_bytes(buf + 2, 5, len - 2) << 12;
		break;
	case 0xf3:
		FIXED(PT_PKT_OVF, 2);
		break;
	case 0x73: /* TMA: CTC[15:0], reserved, FastCounter[7:0], FC[8] in bit 0 */
		NEED(7);
		FIXED(PT_PKT_TMA, 7);
		pkt->payload = (uint64_t)buf[2] | (uint64_t)buf[3] << 8;
		pkt->payload2 = (uint64_t)buf[5] | (uint64_t)(buf[6] & 1) << 8;
		return 7; /* timing: keeps the block context */
	case 0xc3: /* MNT: 02 c3 88 + 8 bytes */
		if (len >= 3 && buf[2] != 0x88)
			return -PTREC_EFORMAT;
		NEED(11);
		FIXED(PT_PKT_MNT, 11);
		pkt->payload = le_bytes(buf + 3, 8, len - 3);
		return 11; /* keeps the block context */
	case 0x83:
		FIXED(PT_PKT_TRACESTOP, 2);
		break;
	case 0x62: case 0xe2: /* EXSTOP, bit 7 = IP */
		FIXED(PT_PKT_EXSTOP, 2);
		pkt->ip_bit = b1 >> 7;
		return 2; /* keeps the block context */
	case 0xc2: { /* MWAIT: hints[7:0], 3 reserved, EXT[1:0], 3 reserved */
		NEED(10);
		FIXED(PT_PKT_MWAIT, 10);
		pkt->payload = le_bytes(buf + 2, 8, len - 2);
		pkt->sub = buf[2];
		pkt->payload2 = buf[6] & 3;
		break;
	}
	case 0x22: /* PWRE: byte 2 bit 7 = HW; byte 3 = resolved C-state 7:4, sub-state 3:0 */
		NEED(4);
		FIXED(PT_PKT_PWRE, 4);
		pkt->payload = (uint64_t)buf[2] | (uint64_t)buf[3] << 8;
		pkt->sub = buf[3];
		pkt->payload2 = buf[2] >> 7;
		return 4; /* keeps the block context */
	case 0xa2: /* PWRX: deepest core C-state 3:0, last 7:4; wake reason 3:0; 3 reserved */
		NEED(7);
		FIXED(PT_PKT_PWRX, 7);
		pkt->payload = le_bytes(buf + 2, 5, len - 2);
		pkt->sub = buf[3] & 0xf;
		pkt->payload2 = (uint64_t)buf[2] | (uint64_t)(buf[3] & 0xf) << 8;
		return 7; /* keeps the block context */
	case 0x63: /* BBP: bit 7 = SZ (1: 4-byte items, 0: 8-byte items), bits 4:0 = type */
		NEED(3);
		FIXED(PT_PKT_BBP, 3);
		pkt->sub = buf[2] & 0x9f;
		if (ctx)
			*ctx = (buf[2] & 0x80) ? PT_CTX_BLK4 : PT_CTX_BLK8;
		return 3;
	case 0x33: case 0xb3: /* BEP, bit 7 = IP */
		FIXED(PT_PKT_BEP, 2);
		pkt->ip_bit = b1 >> 7;
		break;
	case 0x13: /* CFE: bit 7 = IP, bits 4:0 = type; vector */
		NEED(4);
		FIXED(PT_PKT_CFE, 4);
		pkt->ip_bit = buf[2] >> 7;
		pkt->sub = buf[2] & 0x1f;
		pkt->payload = buf[3];
		break;
	case 0x53: /* EVD: bits 5:0 = type; 8 bytes of payload */
		NEED(11);
		FIXED(PT_PKT_EVD, 11);
		pkt->sub = buf[2] & 0x3f;
		pkt->payload = le_bytes(buf + 3, 8, len - 3);
		break;
	case 0x12: case 0x92: /* PTW, 4-byte payload; bit 7 = IP */
		NEED(6);
		FIXED(PT_PKT_PTW, 6);
		pkt->sub = 4;
		pkt->ip_bit = b1 >> 7;
		pkt->payload = le_bytes(buf + 2, 4, len - 2);
		break;
	case 0x32: case 0xb2: /* PTW, 8-byte payload */
		NEED(10);
		FIXED(PT_PKT_PTW, 10);
		pkt->sub = 8;
		pkt->ip_bit = b1 >> 7;
		pkt->payload = le_bytes(buf + 2, 8, len - 2);
		break;
	default: /* includes PTW with PayloadBytes 10b/11b (reserved) */
		return -PTREC_EFORMAT;
	}
	/* Every other extended packet cannot occur inside a block: it ends block context. */
	if (ctx)
		*ctx = PT_CTX_NONE;
	return pkt->size;
}

int ptrec_pt_packet_decode(const uint8_t *buf, size_t len, enum ptrec_pt_packet_ctx *ctx,
                     struct ptrec_pt_packet *pkt)
{
	uint8_t b;

	*pkt = (struct ptrec_pt_packet){0};
	if (len == 0)
		return -PTREC_ETRUNC;
	b = buf[0];

	/* Inside a block, xxxxx100 is a block item, not a TNT. */
	if (ctx && *ctx != PT_CTX_NONE && (b & 7) == 4) {
		unsigned n = (unsigned)*ctx; /* 4 or 8 payload bytes */

		NEED(1 + (size_t)n);
		pkt->type = PT_PKT_BIP;
		pkt->size = (uint8_t)(1 + n);
		pkt->sub = b >> 3;
		pkt->payload = le_bytes(buf + 1, n, len - 1);
		return pkt->size;
	}

	if (!(b & 1)) {
		if (b == 0x02)
			return decode_ext(buf, len, ctx, pkt);
		if (b == 0x00) {
			pkt->type = PT_PKT_PAD;
			pkt->size = 1;
			return 1;
		}
		if (ctx)
			*ctx = PT_CTX_NONE;
		return decode_short_tnt(b, pkt);
	}
	if ((b & 3) == 3)
		return decode_cyc(buf, len, pkt);

	switch (b & 0x1f) {
	case 0x0d:
		return decode_ip(buf, len, PT_PKT_TIP, ctx, pkt);
	case 0x11:
		return decode_ip(buf, len, PT_PKT_TIP_PGE, ctx, pkt);
	case 0x01:
		return decode_ip(buf, len, PT_PKT_TIP_PGD, ctx, pkt);
	case 0x1d: /* FUP keeps the block context (a FUP may bind to a block's instruction) */
		return decode_ip(buf, len, PT_PKT_FUP, NULL, pkt);
	case 0x19:
		break;
	default:
		return -PTREC_EFORMAT; /* xxx00101, xxx01001, xxx10101: reserved headers */
	}

	switch (b) {
	case 0x19: /* TSC: 7 bytes */
		NEED(8);
		pkt->type = PT_PKT_TSC;
		pkt->size = 8;
		pkt->payload = le_bytes(buf + 1, 7, len - 1);
		return 8;
	case 0x59: /* MTC: CTC byte */
		NEED(2);
		pkt->type = PT_PKT_MTC;
		pkt->size = 2;
		pkt->payload = buf[1];
		return 2;
	case 0x99: { /* MODE: bits 7:5 of the payload byte select the leaf */
		uint8_t m;

		NEED(2);
		m = buf[1];
		pkt->size = 2;
		switch (m >> 5) {
		case 0: /* MODE.Exec: bit 0 CS.L, bit 1 CS.D, bit 2 IF */
			if ((m & 3) == 3)
				return -PTREC_EFORMAT; /* CS.L=1 with CS.D=1 is a reserved combination */
			pkt->type = PT_PKT_MODE_EXEC;
			pkt->sub = m & 7;
			break;
		case 1: /* MODE.TSX: bit 0 InTX, bit 1 TXAbort */
			if ((m & 3) == 3)
				return -PTREC_EFORMAT; /* InTX=1 with TXAbort=1 is reserved */
			pkt->type = PT_PKT_MODE_TSX;
			pkt->sub = m & 3;
			break;
		default:
			pkt->size = 0;
			return -PTREC_EFORMAT; /* reserved MODE leaf */
		}
		if (ctx)
			*ctx = PT_CTX_NONE;
		return 2;
	}
	case 0xd9: /* TRIG: byte 1 bit 7 IP, bit 6 ICNTV, bit 5 MULT; byte 2 TRBV; ICNT[15:0]
	            * in bytes 3-4 only with ICNTV */
		NEED(3);
		if (buf[1] & 0x40)
			NEED(5);
		pkt->type = PT_PKT_TRIG;
		pkt->size = (buf[1] & 0x40) ? 5 : 3;
		pkt->ip_bit = buf[1] >> 7;
		pkt->payload = buf[2];
		pkt->payload2 = (buf[1] >> 5) & 1;
		pkt->sub = (buf[1] & 0x40) ? 0x10000u | (uint32_t)buf[3] | (uint32_t)buf[4] << 8 : 0;
		if (ctx)
			*ctx = PT_CTX_NONE;
		return pkt->size;
	default:
		return -PTREC_EFORMAT; /* 0x39, 0x79, 0xb9, 0xf9: reserved headers */
	}
}

const char *ptrec_pt_cfe_name(unsigned type)
{
	static const char *const names[16] = {
		[PT_CFE_INTR] = "interrupt", [PT_CFE_IRET] = "iret", [PT_CFE_SMI] = "smi",
		[PT_CFE_RSM] = "rsm", [PT_CFE_SIPI] = "sipi", [PT_CFE_INIT] = "init",
		[PT_CFE_VMENTRY] = "vmentry", [PT_CFE_VMEXIT] = "vmexit",
		[PT_CFE_VMEXIT_INTR] = "vmexit", [PT_CFE_SHUTDOWN] = "shutdown",
		[PT_CFE_UINTR] = "uintr", [PT_CFE_UIRET] = "uiret", [PT_CFE_SWINTR] = "swintr",
		[PT_CFE_SYSCALL] = "syscall",
	};
	return type < 16 ? names[type] : NULL;
}

int ptrec_pt_cfe_has_vector(unsigned type)
{
	return type == PT_CFE_INTR || type == PT_CFE_SIPI || type == PT_CFE_VMEXIT_INTR ||
	       type == PT_CFE_UINTR || type == PT_CFE_SWINTR;
}

const char *ptrec_pt_packet_name(const struct ptrec_pt_packet *pkt)
{
	switch ((enum ptrec_pt_packet_type)pkt->type) {
	case PT_PKT_PAD: return "pad";
	case PT_PKT_PSB: return "psb";
	case PT_PKT_PSBEND: return "psbend";
	case PT_PKT_TNT: return pkt->size == 1 ? "tnt.8" : "tnt.64";
	case PT_PKT_TIP: return "tip";
	case PT_PKT_TIP_PGE: return "tip.pge";
	case PT_PKT_TIP_PGD: return "tip.pgd";
	case PT_PKT_FUP: return "fup";
	case PT_PKT_MODE_EXEC: return "mode.exec";
	case PT_PKT_MODE_TSX: return "mode.tsx";
	case PT_PKT_PIP: return "pip";
	case PT_PKT_VMCS: return "vmcs";
	case PT_PKT_OVF: return "ovf";
	case PT_PKT_CBR: return "cbr";
	case PT_PKT_TSC: return "tsc";
	case PT_PKT_MTC: return "mtc";
	case PT_PKT_TMA: return "tma";
	case PT_PKT_CYC: return "cyc";
	case PT_PKT_PTW: return "ptw";
	case PT_PKT_EXSTOP: return "exstop";
	case PT_PKT_MWAIT: return "mwait";
	case PT_PKT_PWRE: return "pwre";
	case PT_PKT_PWRX: return "pwrx";
	case PT_PKT_BBP: return "bbp";
	case PT_PKT_BIP: return "bip";
	case PT_PKT_BEP: return "bep";
	case PT_PKT_CFE: return "cfe";
	case PT_PKT_EVD: return "evd";
	case PT_PKT_TRIG: return "trig";
	case PT_PKT_TRACESTOP: return "stop";
	case PT_PKT_MNT: return "mnt";
	case PT_PKT_INVALID:
	case PT_PKT_TYPE_COUNT_:
		break;
	}
	return "?";
}

/* Writes "!" (taken) or "." (not taken) per TNT bit, oldest first. */
static int format_tnt(const struct ptrec_pt_packet *pkt, char *buf, size_t len)
{
	char bits[48];
	unsigned n = pkt->tnt_count < 47 ? pkt->tnt_count : 47;

	for (unsigned i = 0; i < n; i++)
		bits[i] = (pkt->payload >> (n - 1 - i)) & 1 ? '!' : '.';
	bits[n] = '\0';
	return snprintf(buf, len, "%s", bits);
}

int ptrec_pt_packet_format(const struct ptrec_pt_packet *pkt, char *buf, size_t len)
{
	const char *ip = pkt->ip_bit ? ", ip" : "";
	unsigned long long p = pkt->payload, p2 = pkt->payload2;

	switch ((enum ptrec_pt_packet_type)pkt->type) {
	case PT_PKT_TNT:
		return format_tnt(pkt, buf, len);
	case PT_PKT_TIP:
	case PT_PKT_TIP_PGE:
	case PT_PKT_TIP_PGD:
	case PT_PKT_FUP:
		if (pkt->ipbytes == 0)
			return snprintf(buf, len, "0: suppressed");
		return snprintf(buf, len, "%u: 0x%llx", pkt->ipbytes, p);
	case PT_PKT_MODE_EXEC:
		return snprintf(buf, len, "%s%s%s%s", (pkt->sub & 1) ? "cs.l" : "",
		                (pkt->sub & 2) ? "cs.d" : "",
		                (pkt->sub & 4) && (pkt->sub & 3) ? " " : "",
		                (pkt->sub & 4) ? "if" : "");
	case PT_PKT_MODE_TSX:
		return snprintf(buf, len, "%s", (pkt->sub & 1) ? "intx" : (pkt->sub & 2) ? "abrt" : "");
	case PT_PKT_PIP:
		return snprintf(buf, len, "cr3 0x%llx%s", p, p2 ? ", nr" : "");
	case PT_PKT_VMCS:
	case PT_PKT_TSC:
	case PT_PKT_CYC:
	case PT_PKT_CBR:
	case PT_PKT_MNT:
		return snprintf(buf, len, "0x%llx", p);
	case PT_PKT_MTC:
		return snprintf(buf, len, "0x%02llx", p);
	case PT_PKT_TMA:
		return snprintf(buf, len, "ctc 0x%04llx, fc 0x%03llx", p, p2);
	case PT_PKT_PTW:
		return snprintf(buf, len, "%u: 0x%llx%s", pkt->sub, p, ip);
	case PT_PKT_EXSTOP:
	case PT_PKT_BEP:
		return snprintf(buf, len, "%s", pkt->ip_bit ? "ip" : "");
	case PT_PKT_MWAIT:
		return snprintf(buf, len, "hints 0x%02x, ext 0x%llx", pkt->sub, p2);
	case PT_PKT_PWRE:
		return snprintf(buf, len, "c-state 0x%x, sub 0x%x%s", pkt->sub >> 4, pkt->sub & 0xf,
		                p2 ? ", hw" : "");
	case PT_PKT_PWRX:
		return snprintf(buf, len, "last 0x%llx, deepest 0x%llx, wake 0x%x", (p2 >> 4) & 0xf,
		                p2 & 0xf, pkt->sub);
	case PT_PKT_BBP:
		return snprintf(buf, len, "type 0x%02x, %u-byte items", pkt->sub & 0x1f,
		                (pkt->sub & 0x80) ? 4 : 8);
	case PT_PKT_BIP:
		return snprintf(buf, len, "id 0x%02x: 0x%llx", pkt->sub, p);
	case PT_PKT_CFE:
		return snprintf(buf, len, "type %u, vector 0x%02llx%s", pkt->sub, p, ip);
	case PT_PKT_EVD:
		return snprintf(buf, len, "type %u: 0x%llx", pkt->sub, p);
	case PT_PKT_TRIG:
		if (pkt->sub & 0x10000u)
			return snprintf(buf, len, "trbv 0x%llx, icnt %u%s%s", p, pkt->sub & 0xffffu,
			                p2 ? ", mult" : "", ip);
		return snprintf(buf, len, "trbv 0x%llx%s%s", p, p2 ? ", mult" : "", ip);
	case PT_PKT_PAD:
	case PT_PKT_PSB:
	case PT_PKT_PSBEND:
	case PT_PKT_OVF:
	case PT_PKT_TRACESTOP:
	case PT_PKT_INVALID:
	case PT_PKT_TYPE_COUNT_:
		break;
	}
	return snprintf(buf, len, "%s", "");
}

long ptrec_pt_packet_find_psb(const uint8_t *buf, size_t len, size_t from)
{
	/* memmem skips by the whole pattern; a search for its first byte stops at every 0x02,
	 * the first byte of every long TNT (7x slower on a 16 MB trace). */
	if (len < PSB_SIZE || from > len - PSB_SIZE)
		return -PTREC_ENOSYNC;
	const uint8_t *p = memmem(buf + from, len - from, psb_bytes, PSB_SIZE);
	return p ? (long)(p - buf) : -PTREC_ENOSYNC;
}

long ptrec_pt_packet_find_psb_before(const uint8_t *buf, size_t len, size_t before)
{
	if (!buf || len < PSB_SIZE)
		return -PTREC_ENOSYNC;
	size_t i = before < len - PSB_SIZE + 1 ? before : len - PSB_SIZE + 1;
	while (i > 0) {
		i--;
		if (buf[i] == 0x02 && buf[i + 1] == 0x82) {
			size_t k = 2;
			while (k < PSB_SIZE && buf[i + k] == (k & 1 ? 0x82 : 0x02))
				k++;
			if (k == PSB_SIZE)
				return (long)i;
		}
	}
	return -PTREC_ENOSYNC;
}

int ptrec_pt_last_ip_update(uint64_t *last_ip, const struct ptrec_pt_packet *pkt, uint64_t *ip)
{
	uint64_t v = pkt->payload, last = *last_ip;

	switch (pkt->ipbytes) {
	case 0:
		return -PTREC_ENOMAP;
	case 1: /* IP[15:0], upper bits from the last IP */
		v = (last & ~UINT64_C(0xffff)) | (v & 0xffff);
		break;
	case 2: /* IP[31:0], upper bits from the last IP */
		v = (last & ~UINT64_C(0xffffffff)) | (v & 0xffffffff);
		break;
	case 3: /* IP[47:0], sign-extended from bit 47 */
		v &= UINT64_C(0xffffffffffff);
		if (v & (UINT64_C(1) << 47))
			v |= UINT64_C(0xffff000000000000);
		break;
	case 4: /* IP[47:0], upper 16 bits from the last IP */
		v = (last & UINT64_C(0xffff000000000000)) | (v & UINT64_C(0xffffffffffff));
		break;
	case 6: /* full IP */
		break;
	default:
		return -PTREC_EFORMAT;
	}
	*last_ip = v;
	*ip = v;
	return 0;
}
