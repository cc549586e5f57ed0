/* test_pt_packet.c — the packet layer against the SDM's packet layouts, written by hand.
 *
 * Each case lists the bytes of one packet (built from the bit layout in the SDM's "Packet
 * Definitions" tables), the block context going in, and every field we expect, down to the
 * dump text.  Then, for every case: every truncation returns -PTREC_ETRUNC, and the packet
 * still decodes with trailing bytes after it.  Further sections: reserved encodings give
 * -PTREC_EFORMAT, the block context rules, last-IP decompression, PSB search. */
#include "config.h"

#include "check.h"
#include "ptrec.h"
#include "decode/pt_packet.h"

#define N PT_CTX_NONE
#define B4 PT_CTX_BLK4
#define B8 PT_CTX_BLK8

struct tcase {
	const char *what;       /* description */
	uint8_t len;            /* bytes used from b (the packet size) */
	uint8_t b[16];          /* packet bytes */
	enum ptrec_pt_packet_ctx in;  /* block context before */
	enum ptrec_pt_packet_ctx out; /* block context after */
	int type;               /* expected type */
	uint8_t ipbytes, tnt_count, ip_bit;
	uint32_t sub;
	uint64_t payload, payload2;
	const char *name;       /* expected ptrec_pt_packet_name */
	const char *text;       /* expected ptrec_pt_packet_format */
};

static const struct tcase cases[] = {
	{"PAD", 1, {0x00}, N, N, PT_PKT_PAD, 0, 0, 0, 0, 0, 0, "pad", ""},
	{"PAD keeps a block", 1, {0x00}, B4, B4, PT_PKT_PAD, 0, 0, 0, 0, 0, 0, "pad", ""},
	{"PSB", 16, {2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82}, B8, N,
	 PT_PKT_PSB, 0, 0, 0, 0, 0, 0, "psb", ""},
	{"PSBEND", 2, {0x02, 0x23}, N, N, PT_PKT_PSBEND, 0, 0, 0, 0, 0, 0, "psbend", ""},
	/* short TNT 0001 1100: stop bit 4, B1 (oldest) = bit 3 = 1, B2 = 1, B3 = bit 1 = 0 */
	{"TNT-8 3 bits", 1, {0x1c}, N, N, PT_PKT_TNT, 0, 3, 0, 0, 6, 0, "tnt.8", "!!."},
	/* 0000 0100: stop bit 2, one not-taken bit */
	{"TNT-8 1 bit", 1, {0x04}, N, N, PT_PKT_TNT, 0, 1, 0, 0, 0, 0, "tnt.8", "."},
	/* 1010 1010: stop bit 7, B1..B6 = 0 1 0 1 0 1 */
	{"TNT-8 6 bits", 1, {0xaa}, N, N, PT_PKT_TNT, 0, 6, 0, 0, 0x15, 0, "tnt.8", ".!.!.!"},
	/* long TNT payload 0x05: stop bit 2, B1 = bit 1 = 0, B2 = bit 0 = 1 */
	{"TNT-64 2 bits", 8, {0x02, 0xa3, 0x05, 0, 0, 0, 0, 0}, N, N, PT_PKT_TNT, 0, 2, 0, 0, 1, 0,
	 "tnt.64", ".!"},
	/* stop bit 47, 47 taken-bits except B1 */
	{"TNT-64 47 bits", 8, {0x02, 0xa3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xbf}, N, N, PT_PKT_TNT, 0,
	 47, 0, 0, 0x3fffffffffff, 0, "tnt.64", ".!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"},
	/* TIP: IPBytes in bits 7:5, 01101 */
	{"TIP ipbytes 3", 7, {0x6d, 0x00, 0x10, 0x40, 0, 0, 0}, N, N, PT_PKT_TIP, 3, 0, 0, 0,
	 0x401000, 0, "tip", "3: 0x401000"},
	{"TIP suppressed", 1, {0x0d}, N, N, PT_PKT_TIP, 0, 0, 0, 0, 0, 0, "tip", "0: suppressed"},
	{"TIP.PGE ipbytes 6", 9, {0xd1, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11}, N, N,
	 PT_PKT_TIP_PGE, 6, 0, 0, 0, 0x1122334455667788, 0, "tip.pge", "6: 0x1122334455667788"},
	{"TIP.PGD ipbytes 1", 3, {0x21, 0x34, 0x12}, N, N, PT_PKT_TIP_PGD, 1, 0, 0, 0, 0x1234, 0,
	 "tip.pgd", "1: 0x1234"},
	{"TIP ends a block", 3, {0x2d, 0x34, 0x12}, B4, N, PT_PKT_TIP, 1, 0, 0, 0, 0x1234, 0, "tip",
	 "1: 0x1234"},
	{"TIP.PGD suppressed", 1, {0x01}, N, N, PT_PKT_TIP_PGD, 0, 0, 0, 0, 0, 0, "tip.pgd",
	 "0: suppressed"},
	{"FUP ipbytes 2", 5, {0x5d, 0xef, 0xbe, 0xad, 0xde}, N, N, PT_PKT_FUP, 2, 0, 0, 0,
	 0xdeadbeef, 0, "fup", "2: 0xdeadbeef"},
	{"FUP ipbytes 4", 7, {0x9d, 1, 2, 3, 4, 5, 6}, N, N, PT_PKT_FUP, 4, 0, 0, 0, 0x060504030201,
	 0, "fup", "4: 0x60504030201"},
	{"FUP keeps a block", 1, {0x1d}, B8, B8, PT_PKT_FUP, 0, 0, 0, 0, 0, 0, "fup",
	 "0: suppressed"},
	/* MODE 1001 1001, then leaf in bits 7:5 */
	{"MODE.Exec 64-bit", 2, {0x99, 0x01}, N, N, PT_PKT_MODE_EXEC, 0, 0, 0, 1, 0, 0, "mode.exec",
	 "cs.l"},
	{"MODE.Exec 32-bit", 2, {0x99, 0x02}, N, N, PT_PKT_MODE_EXEC, 0, 0, 0, 2, 0, 0, "mode.exec",
	 "cs.d"},
	{"MODE.Exec 16-bit", 2, {0x99, 0x00}, N, N, PT_PKT_MODE_EXEC, 0, 0, 0, 0, 0, 0, "mode.exec",
	 ""},
	{"MODE.Exec 64-bit IF", 2, {0x99, 0x05}, N, N, PT_PKT_MODE_EXEC, 0, 0, 0, 5, 0, 0,
	 "mode.exec", "cs.l if"},
	{"MODE.Exec reserved bits 4:3 ignored", 2, {0x99, 0x18 | 0x02}, N, N, PT_PKT_MODE_EXEC, 0, 0,
	 0, 2, 0, 0, "mode.exec", "cs.d"},
	{"MODE.TSX in transaction", 2, {0x99, 0x21}, N, N, PT_PKT_MODE_TSX, 0, 0, 0, 1, 0, 0,
	 "mode.tsx", "intx"},
	{"MODE.TSX abort", 2, {0x99, 0x22}, N, N, PT_PKT_MODE_TSX, 0, 0, 0, 2, 0, 0, "mode.tsx",
	 "abrt"},
	{"MODE.TSX commit", 2, {0x99, 0x20}, N, N, PT_PKT_MODE_TSX, 0, 0, 0, 0, 0, 0, "mode.tsx", ""},
	/* PIP: payload bit 0 = NR, bits 47:1 = CR3[51:5]; CR3 0x12345000 -> 0x1234500 | NR */
	{"PIP NR", 8, {0x02, 0x43, 0x01, 0x45, 0x23, 0x01, 0, 0}, N, N, PT_PKT_PIP, 0, 0, 0, 0,
	 0x12345000, 1, "pip", "cr3 0x12345000, nr"},
	{"PIP high CR3", 8, {0x02, 0x43, 0x00, 0, 0, 0, 0, 0x80}, N, N, PT_PKT_PIP, 0, 0, 0, 0,
	 UINT64_C(1) << 51, 0, "pip", "cr3 0x8000000000000"},
	/* VMCS: 5 bytes = pointer bits 51:12 */
	{"VMCS", 7, {0x02, 0xc8, 0x67, 0x45, 0x23, 0x01, 0x00}, N, N, PT_PKT_VMCS, 0, 0, 0, 0,
	 0x1234567000, 0, "vmcs", "0x1234567000"},
	{"OVF", 2, {0x02, 0xf3}, B4, N, PT_PKT_OVF, 0, 0, 0, 0, 0, 0, "ovf", ""},
	{"CBR", 4, {0x02, 0x03, 0x2c, 0x00}, B4, B4, PT_PKT_CBR, 0, 0, 0, 0, 0x2c, 0, "cbr", "0x2c"},
	{"TSC", 8, {0x19, 0xbe, 0xa9, 0xe5, 0x4d, 0x5d, 0x01, 0x00}, N, N, PT_PKT_TSC, 0, 0, 0, 0,
	 0x15d4de5a9be, 0, "tsc", "0x15d4de5a9be"},
	{"TSC all bits", 8, {0x19, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, N, N, PT_PKT_TSC, 0, 0,
	 0, 0, 0xffffffffffffff, 0, "tsc", "0xffffffffffffff"},
	{"MTC", 2, {0x59, 0xa5}, B8, B8, PT_PKT_MTC, 0, 0, 0, 0, 0xa5, 0, "mtc", "0xa5"},
	/* TMA: CTC[15:0], reserved, FastCounter[7:0], FC[8] in bit 0 of the last byte */
	{"TMA", 7, {0x02, 0x73, 0x34, 0x12, 0xee, 0xff, 0xfe | 1}, N, N, PT_PKT_TMA, 0, 0, 0, 0,
	 0x1234, 0x1ff, "tma", "ctc 0x1234, fc 0x1ff"},
	/* CYC: xxxxx E 11; 0000 1011 = 1 cycle */
	{"CYC 1 byte", 1, {0x0b}, N, N, PT_PKT_CYC, 0, 0, 0, 0, 1, 0, "cyc", "0x1"},
	/* 0x1234 = 0x14 | 0x11 << 5 | 0x01 << 12: a7 (10100 1 11), 23 (0010001 1), 02 (0000001 0) */
	/* 10 bytes: 5 + 8 * 7 = 61 bits, then the last byte's 3 low payload bits make bits 63:61 */
	{"CYC 64 bits", 10, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0e}, N, N,
	 PT_PKT_CYC, 0, 0, 0, 0, ~UINT64_C(0), 0, "cyc", "0xffffffffffffffff"},
	{"CYC 3 bytes", 3, {0xa7, 0x23, 0x02}, B4, B4, PT_PKT_CYC, 0, 0, 0, 0, 0x1234, 0, "cyc",
	 "0x1234"},
	/* PTW: IP bit 7, PayloadBytes bits 6:5, 10010 */
	{"PTW 4 bytes", 6, {0x02, 0x12, 0x78, 0x56, 0x34, 0x12}, N, N, PT_PKT_PTW, 0, 0, 0, 4,
	 0x12345678, 0, "ptw", "4: 0x12345678"},
	{"PTW 8 bytes IP", 10, {0x02, 0xb2, 1, 2, 3, 4, 5, 6, 7, 8}, N, N, PT_PKT_PTW, 0, 0, 1, 8,
	 0x0807060504030201, 0, "ptw", "8: 0x807060504030201, ip"},
	{"EXSTOP", 2, {0x02, 0x62}, B4, B4, PT_PKT_EXSTOP, 0, 0, 0, 0, 0, 0, "exstop", ""},
	{"EXSTOP IP", 2, {0x02, 0xe2}, N, N, PT_PKT_EXSTOP, 0, 0, 1, 0, 0, 0, "exstop", "ip"},
	/* MWAIT: hints, 3 reserved, EXT[1:0], 3 reserved */
	{"MWAIT", 10, {0x02, 0xc2, 0x20, 0, 0, 0, 0xfd, 0, 0, 0}, N, N, PT_PKT_MWAIT, 0, 0, 0, 0x20,
	 0xfd00000020, 1, "mwait", "hints 0x20, ext 0x1"},
	/* PWRE: HW bit 7; resolved C-state 7:4, sub-state 3:0 */
	{"PWRE", 4, {0x02, 0x22, 0x80, 0x21}, B8, B8, PT_PKT_PWRE, 0, 0, 0, 0x21, 0x2180, 1, "pwre",
	 "c-state 0x2, sub 0x1, hw"},
	/* PWRX: last core C-state 7:4, deepest 3:0; wake reason 3:0 */
	{"PWRX", 7, {0x02, 0xa2, 0x62, 0x04, 0, 0, 0}, N, N, PT_PKT_PWRX, 0, 0, 0, 4, 0x0462, 0x462,
	 "pwrx", "last 0x6, deepest 0x2, wake 0x4"},
	/* BBP: SZ bit 7 (1 = 4-byte items), type 4:0 */
	{"BBP 4-byte items", 3, {0x02, 0x63, 0x81}, N, B4, PT_PKT_BBP, 0, 0, 0, 0x81, 0, 0, "bbp",
	 "type 0x01, 4-byte items"},
	{"BBP 8-byte items", 3, {0x02, 0x63, 0x12}, B4, B8, PT_PKT_BBP, 0, 0, 0, 0x12, 0, 0, "bbp",
	 "type 0x12, 8-byte items"},
	/* BIP: ID 7:3, 100; 4 or 8 payload bytes by the block's SZ */
	{"BIP 4", 5, {0x0c, 0x78, 0x56, 0x34, 0x12}, B4, B4, PT_PKT_BIP, 0, 0, 0, 1, 0x12345678, 0,
	 "bip", "id 0x01: 0x12345678"},
	{"BIP 8", 9, {0xfc, 1, 2, 3, 4, 5, 6, 7, 8}, B8, B8, PT_PKT_BIP, 0, 0, 0, 31,
	 0x0807060504030201, 0, "bip", "id 0x1f: 0x807060504030201"},
	{"BEP", 2, {0x02, 0x33}, B8, N, PT_PKT_BEP, 0, 0, 0, 0, 0, 0, "bep", ""},
	{"BEP IP", 2, {0x02, 0xb3}, B4, N, PT_PKT_BEP, 0, 0, 1, 0, 0, 0, "bep", "ip"},
	/* CFE: IP bit 7, type 4:0; vector */
	{"CFE", 4, {0x02, 0x13, 0x81, 0x20}, N, N, PT_PKT_CFE, 0, 0, 1, 1, 0x20, 0, "cfe",
	 "type 1, vector 0x20, ip"},
	/* EVD: type 5:0; 8 payload bytes */
	{"EVD", 11, {0x02, 0x53, 0x01, 0x00, 0xf0, 0xff, 0xff, 0xff, 0x7f, 0, 0}, N, N, PT_PKT_EVD,
	 0, 0, 0, 1, 0x7ffffffff000, 0, "evd", "type 1: 0x7ffffffff000"},
	/* TRIG: 1101 1001; IP bit 7, ICNTV bit 6, MULT bit 5; TRBV; ICNT[15:0] with ICNTV */
	{"TRIG", 5, {0xd9, 0xe0, 0xa1, 0x10, 0x00}, N, N, PT_PKT_TRIG, 0, 0, 1, 0x10010, 0xa1, 1,
	 "trig", "trbv 0xa1, icnt 16, mult, ip"},
	{"TRIG without ICNT", 3, {0xd9, 0x00, 0x1a}, N, N, PT_PKT_TRIG, 0, 0, 0, 0, 0x1a, 0, "trig",
	 "trbv 0x1a"},
	{"TraceStop", 2, {0x02, 0x83}, N, N, PT_PKT_TRACESTOP, 0, 0, 0, 0, 0, 0, "stop", ""},
	{"MNT", 11, {0x02, 0xc3, 0x88, 0xef, 0xcd, 0xab, 0x89, 0x67, 0x45, 0x23, 0x01}, B4, B4,
	 PT_PKT_MNT, 0, 0, 0, 0, 0x0123456789abcdef, 0, "mnt", "0x123456789abcdef"},
};

static void check_case(const struct tcase *c)
{
	struct ptrec_pt_packet pkt;
	enum ptrec_pt_packet_ctx ctx = c->in;
	uint8_t more[32];
	char buf[128];
	int before = check_failures;

	/* exact length */
	CHECK_EQ_U64(ptrec_pt_packet_decode(c->b, c->len, &ctx, &pkt), c->len);
	CHECK_EQ_U64(pkt.size, c->len);
	CHECK_EQ_U64(pkt.type, c->type);
	CHECK_EQ_U64(pkt.ipbytes, c->ipbytes);
	CHECK_EQ_U64(pkt.tnt_count, c->tnt_count);
	CHECK_EQ_U64(pkt.ip_bit, c->ip_bit);
	CHECK_EQ_U64(pkt.sub, c->sub);
	CHECK_EQ_U64(pkt.payload, c->payload);
	CHECK_EQ_U64(pkt.payload2, c->payload2);
	CHECK_EQ_U64(ctx, c->out);
	CHECK_STR(ptrec_pt_packet_name(&pkt), c->name);
	CHECK_EQ_U64(ptrec_pt_packet_format(&pkt, buf, sizeof(buf)), strlen(c->text));
	CHECK_STR(buf, c->text);

	/* with trailing bytes (a PSB-like tail, and 0xff) the packet ends at the same place */
	for (int fill = 0; fill < 2; fill++) {
		memset(more, fill ? 0xff : 0x02, sizeof(more));
		memcpy(more, c->b, c->len);
		ctx = c->in;
		CHECK_EQ_U64(ptrec_pt_packet_decode(more, sizeof(more), &ctx, &pkt), c->len);
		CHECK_EQ_U64(pkt.payload, c->payload);
	}

	/* every truncation, including the empty buffer, is ETRUNC; the context is not changed */
	for (unsigned k = 0; k < c->len; k++) {
		ctx = c->in;
		CHECK_EQ_U64(ptrec_pt_packet_decode(c->b, k, &ctx, &pkt), -PTREC_ETRUNC);
		CHECK_EQ_U64(ctx, c->in);
	}
	if (check_failures != before)
		fprintf(stderr, "  ^ case \"%s\"\n", c->what);
}

/* Bytes that are not a packet in any context. */
static const struct { const char *what; uint8_t len; uint8_t b[12]; } reserved[] = {
	{"TIP IPBytes 101", 9, {0xad, 1, 2, 3, 4, 5, 6, 7, 8}},
	{"TIP IPBytes 111", 9, {0xed, 1, 2, 3, 4, 5, 6, 7, 8}},
	{"TIP.PGE IPBytes 101", 1, {0xb1}},
	{"TIP.PGE IPBytes 111", 1, {0xf1}},
	{"TIP.PGD IPBytes 101", 1, {0xa1}},
	{"TIP.PGD IPBytes 111", 1, {0xe1}},
	{"FUP IPBytes 101", 9, {0xbd, 1, 2, 3, 4, 5, 6, 7, 8}},
	{"FUP IPBytes 111", 1, {0xfd}},
	{"header xxx00101", 1, {0x05}},
	{"header xxx01001", 1, {0x29}},
	{"header xxx10101", 1, {0xf5}},
	{"header 00111001", 1, {0x39}},
	{"header 11111001", 4, {0xf9, 0x81, 0x10, 0x00}},
	{"MODE leaf 010", 2, {0x99, 0x40}},
	{"MODE leaf 111", 2, {0x99, 0xe0}},
	{"MODE.Exec CS.L with CS.D", 2, {0x99, 0x03}},
	{"MODE.TSX InTX with TXAbort", 2, {0x99, 0x23}},
	{"PTW PayloadBytes 10", 10, {0x02, 0x52, 1, 2, 3, 4, 5, 6, 7, 8}},
	{"PTW PayloadBytes 11 IP", 2, {0x02, 0xf2}},
	{"02 then unknown opcode", 2, {0x02, 0x00}},
	{"02 02", 2, {0x02, 0x02}},
	{"02 ff", 2, {0x02, 0xff}},
	{"MNT without 88", 11, {0x02, 0xc3, 0x87, 1, 2, 3, 4, 5, 6, 7, 8}},
	{"PSB broken at byte 5", 6, {0x02, 0x82, 0x02, 0x82, 0x02, 0x83}},
	{"long TNT without stop bit", 8, {0x02, 0xa3, 0, 0, 0, 0, 0, 0}},
	{"long TNT with no branch bits", 8, {0x02, 0xa3, 1, 0, 0, 0, 0, 0}},
	{"CYC longer than 10 bytes", 10, {0x07, 1, 1, 1, 1, 1, 1, 1, 1, 1}},
	{"CYC wider than 64 bits", 10, {0x07, 1, 1, 1, 1, 1, 1, 1, 1, 0x10}},
};

static void check_reserved(void)
{
	struct ptrec_pt_packet pkt;
	int count = 0;

	for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++) {
		enum ptrec_pt_packet_ctx ctx = PT_CTX_NONE;
		int before = check_failures;

		CHECK_EQ_U64(ptrec_pt_packet_decode(reserved[i].b, reserved[i].len, &ctx, &pkt),
		             -PTREC_EFORMAT);
		CHECK_EQ_U64(ptrec_pt_packet_decode(reserved[i].b, reserved[i].len, NULL, &pkt),
		             -PTREC_EFORMAT);
		if (check_failures != before)
			fprintf(stderr, "  ^ reserved \"%s\"\n", reserved[i].what);
	}

	/* Header sweep: with a zero tail every header byte decodes except the 28 reserved
	 * single-byte headers (xxx00101, xxx01001, xxx10101, and xx111001 next to the TSC/MTC/
	 * MODE/TRIG headers xx011001), the 8 IP headers with IPBytes 101/111, and 02 00. */
	for (unsigned b = 0; b < 256; b++) {
		uint8_t buf[16] = {(uint8_t)b};
		int r = ptrec_pt_packet_decode(buf, sizeof(buf), NULL, &pkt);
		unsigned low5 = b & 0x1f, ipb = b >> 5;
		int expect_bad = ((b & 3) == 1 && (low5 == 0x05 || low5 == 0x09 || low5 == 0x15)) ||
		                 (low5 == 0x19 && (b & 0x20)) ||
		                 ((low5 == 0x01 || low5 == 0x0d || low5 == 0x11 || low5 == 0x1d) &&
		                  (ipb == 5 || ipb == 7));

		if (r == -PTREC_EFORMAT)
			count++;
		if (b == 0x02) /* 02 00: no extended opcode 00 */
			expect_bad = 1;
		CHECK_EQ_U64(r == -PTREC_EFORMAT, expect_bad);
		CHECK(r == -PTREC_EFORMAT || (r >= 1 && r <= 16 && pkt.size == r));
	}
	CHECK_EQ_U64(count, 28 + 8 + 1);
}

static void check_block_context(void)
{
	struct ptrec_pt_packet pkt;
	enum ptrec_pt_packet_ctx ctx;
	const uint8_t bip_or_tnt[9] = {0x0c, 1, 2, 3, 4, 5, 6, 7, 8};

	/* 0000 1100 is a 2-bit TNT outside a block and a BIP with ID 1 inside one */
	ctx = PT_CTX_NONE;
	CHECK_EQ_U64(ptrec_pt_packet_decode(bip_or_tnt, 9, &ctx, &pkt), 1);
	CHECK_EQ_U64(pkt.type, PT_PKT_TNT);
	CHECK_EQ_U64(pkt.tnt_count, 2);
	CHECK_EQ_U64(ptrec_pt_packet_decode(bip_or_tnt, 9, NULL, &pkt), 1);
	CHECK_EQ_U64(pkt.type, PT_PKT_TNT);
	ctx = PT_CTX_BLK4;
	CHECK_EQ_U64(ptrec_pt_packet_decode(bip_or_tnt, 9, &ctx, &pkt), 5);
	CHECK_EQ_U64(pkt.type, PT_PKT_BIP);
	ctx = PT_CTX_BLK8;
	CHECK_EQ_U64(ptrec_pt_packet_decode(bip_or_tnt, 9, &ctx, &pkt), 9);
	CHECK_EQ_U64(pkt.type, PT_PKT_BIP);
	CHECK_EQ_U64(ctx, PT_CTX_BLK8);

	/* inside a block, a TNT without the BIP pattern (xxxxx110) and a TIP end it */
	ctx = PT_CTX_BLK4;
	CHECK_EQ_U64(ptrec_pt_packet_decode((const uint8_t[]){0x06}, 1, &ctx, &pkt), 1);
	CHECK_EQ_U64(pkt.type, PT_PKT_TNT);
	CHECK_EQ_U64(ctx, PT_CTX_NONE);
	ctx = PT_CTX_BLK8;
	CHECK_EQ_U64(ptrec_pt_packet_decode((const uint8_t[]){0x0d}, 1, &ctx, &pkt), 1);
	CHECK_EQ_U64(ctx, PT_CTX_NONE);

	/* a whole block: BBP(4-byte) BIP MTC BIP BEP.IP FUP, then the same bytes are a TNT */
	{
		const uint8_t s[] = {0x02, 0x63, 0x80, 0x04, 1, 0, 0, 0, 0x59, 0x10,
		                     0x0c, 2, 0, 0, 0, 0x02, 0xb3, 0x1d, 0x0c};
		const int want[] = {PT_PKT_BBP, PT_PKT_BIP, PT_PKT_MTC, PT_PKT_BIP, PT_PKT_BEP,
		                    PT_PKT_FUP, PT_PKT_TNT};
		size_t off = 0;

		ctx = PT_CTX_NONE;
		for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
			int r = ptrec_pt_packet_decode(s + off, sizeof(s) - off, &ctx, &pkt);
			CHECK(r > 0);
			CHECK_EQ_U64(pkt.type, want[i]);
			off += r > 0 ? (size_t)r : 1;
		}
		CHECK_EQ_U64(off, sizeof(s));
		CHECK_EQ_U64(ctx, PT_CTX_NONE);
	}
}

static void check_last_ip(void)
{
	struct ptrec_pt_packet p = {0};
	uint64_t last, ip;

	/* IPBytes 1: IP[15:0], upper 48 bits from the last IP */
	p.ipbytes = 1, p.payload = 0xabcd, last = 0x00007f1234567890, ip = 0;
	CHECK_EQ_U64(ptrec_pt_last_ip_update(&last, &p, &ip), 0);
	CHECK_EQ_U64(ip, 0x00007f123456abcd);
	CHECK_EQ_U64(last, 0x00007f123456abcd);
	/* IPBytes 1 keeps even a kernel upper half */
	p.ipbytes = 1, p.payload = 0x0001, last = 0xffffffff81000000;
	CHECK_EQ_U64(ptrec_pt_last_ip_update(&last, &p, &ip), 0);
	CHECK_EQ_U64(ip, 0xffffffff81000001);
	/* IPBytes 2: IP[31:0] */
	p.ipbytes = 2, p.payload = 0xdeadbeef, last = 0x00007f1234567890;
	CHECK_EQ_U64(ptrec_pt_last_ip_update(&last, &p, &ip), 0);
	CHECK_EQ_U64(ip, 0x00007f12deadbeef);
	/* IPBytes 3: IP[47:0] sign-extended from bit 47, the last IP does not matter */
	p.ipbytes = 3, p.payload = 0x00007fffffff1000, last = ~UINT64_C(0);
	CHECK_EQ_U64(ptrec_pt_last_ip_update(&last, &p, &ip), 0);
	CHECK_EQ_U64(ip, 0x00007fffffff1000);
	p.ipbytes = 3, p.payload = 0x0000800000001000, last = 0;
	CHECK_EQ_U64(ptrec_pt_last_ip_update(&last, &p, &ip), 0);
	CHECK_EQ_U64(ip, 0xffff800000001000);
	CHECK_EQ_U64(last, 0xffff800000001000);
	/* IPBytes 4: IP[47:0], upper 16 bits from the last IP, no sign extension */
	p.ipbytes = 4, p.payload = 0x0000800000001000, last = 0xabcd000000000000;
	CHECK_EQ_U64(ptrec_pt_last_ip_update(&last, &p, &ip), 0);
	CHECK_EQ_U64(ip, 0xabcd800000001000);
	p.ipbytes = 4, p.payload = 0x0000000000401000, last = 0xffff800000000000;
	CHECK_EQ_U64(ptrec_pt_last_ip_update(&last, &p, &ip), 0);
	CHECK_EQ_U64(ip, 0xffff000000401000);
	/* IPBytes 6: the full IP */
	p.ipbytes = 6, p.payload = 0x1122334455667788, last = 0;
	CHECK_EQ_U64(ptrec_pt_last_ip_update(&last, &p, &ip), 0);
	CHECK_EQ_U64(ip, 0x1122334455667788);
	/* suppressed: no IP, last IP unchanged */
	p.ipbytes = 0, p.payload = 0, last = 0x401000, ip = 7;
	CHECK_EQ_U64(ptrec_pt_last_ip_update(&last, &p, &ip), -PTREC_ENOMAP);
	CHECK_EQ_U64(last, 0x401000);
	CHECK_EQ_U64(ip, 7);
	/* reserved IPBytes */
	p.ipbytes = 5, p.payload = 1;
	CHECK_EQ_U64(ptrec_pt_last_ip_update(&last, &p, &ip), -PTREC_EFORMAT);
	p.ipbytes = 7;
	CHECK_EQ_U64(ptrec_pt_last_ip_update(&last, &p, &ip), -PTREC_EFORMAT);
	CHECK_EQ_U64(last, 0x401000);

	/* decoded from bytes: FUP(6) then TIP(2) then TIP.PGD(1) then TIP(3, negative) */
	{
		const uint8_t s[] = {0xdd, 0x00, 0x10, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00,
		                     0x4d, 0x78, 0x56, 0x34, 0x12,
		                     0x21, 0xcd, 0xab,
		                     0x6d, 0x00, 0x00, 0x00, 0x81, 0xff, 0xff};
		const uint64_t want[] = {0x401000, 0x12345678, 0x1234abcd, 0xffffffff81000000};
		struct ptrec_pt_packet pkt;
		size_t off = 0;

		last = 0;
		for (int i = 0; i < 4; i++) {
			int r = ptrec_pt_packet_decode(s + off, sizeof(s) - off, NULL, &pkt);
			CHECK(r > 0);
			CHECK_EQ_U64(ptrec_pt_last_ip_update(&last, &pkt, &ip), 0);
			CHECK_EQ_U64(ip, want[i]);
			off += r > 0 ? (size_t)r : 1;
		}
	}
}

static void check_find_psb(void)
{
	uint8_t buf[64];
	const uint8_t psb[16] = {2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82};

	memset(buf, 0, sizeof(buf));
	CHECK_EQ_U64(ptrec_pt_packet_find_psb(buf, sizeof(buf), 0), -PTREC_ENOSYNC);
	memcpy(buf + 2, psb, 12); /* 6 pairs only: not a PSB */
	memcpy(buf + 21, psb, 16);
	buf[20] = 0x82; /* a stray 82 before the PSB does not shift it */
	CHECK_EQ_U64(ptrec_pt_packet_find_psb(buf, sizeof(buf), 0), 21);
	CHECK_EQ_U64(ptrec_pt_packet_find_psb(buf, sizeof(buf), 21), 21);
	CHECK_EQ_U64(ptrec_pt_packet_find_psb(buf, sizeof(buf), 22), -PTREC_ENOSYNC);
	CHECK_EQ_U64(ptrec_pt_packet_find_psb(buf, 36, 0), -PTREC_ENOSYNC); /* cut inside the PSB */
	CHECK_EQ_U64(ptrec_pt_packet_find_psb(buf, 37, 0), 21);
	CHECK_EQ_U64(ptrec_pt_packet_find_psb(buf, sizeof(buf), 1000), -PTREC_ENOSYNC);
	CHECK_EQ_U64(ptrec_pt_packet_find_psb(buf, 0, 0), -PTREC_ENOSYNC);
	/* an odd offset and a PSB at the very end */
	memset(buf, 0, sizeof(buf));
	memcpy(buf + 48, psb, 16);
	CHECK_EQ_U64(ptrec_pt_packet_find_psb(buf, sizeof(buf), 3), 48);
}

int main(void)
{
	size_t n = sizeof(cases) / sizeof(cases[0]);

	for (size_t i = 0; i < n; i++)
		check_case(&cases[i]);
	check_reserved();
	check_block_context();
	check_last_ip();
	check_find_psb();
	printf("%zu SDM packet cases, %zu reserved encodings\n", n,
	       sizeof(reserved) / sizeof(reserved[0]));
	return check_done();
}
