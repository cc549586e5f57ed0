/* test_pt_flow.c — the PT instruction flow decoder on hand-assembled traces over hand-assembled
 * code (raw image sections).  Each case lists the code bytes with their disassembly, the packets,
 * and the instruction sequence the SDM semantics give, written by hand.
 *
 * Listing notation (see listing()): executed instruction addresses in hex; events in brackets:
 * [enabled] [disabled] [overflow] [gap] [interrupt FROM>TO] [abort FROM>TO] [ptw PAYLOAD].
 * Branch notation (see branches()): KIND FROM>TO, "+" taken / "-" not taken, "c" compressed. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "check.h"
#include "ptrec.h"
#include "decode/branch_ring.h"
#include "decode/pt_flow.h"
#include "decode/pt_image.h"
#include "decode/pt_packet.h"
#include "decode/pt_tail.h"
#include "decode/pt_time.h"

/* ---- a tiny PT packet assembler --------------------------------------------------------- */

struct tb {
	uint8_t b[8192]; /* trace bytes */
	size_t n;        /* used */
};

static void put(struct tb *t, unsigned v)
{
	if (t->n < sizeof(t->b))
		t->b[t->n++] = (uint8_t)v;
}

static void put_le(struct tb *t, uint64_t v, unsigned bytes)
{
	for (unsigned i = 0; i < bytes; i++)
		put(t, (unsigned)(v >> (8 * i)) & 0xff);
}

static void psb(struct tb *t)
{
	for (int i = 0; i < 8; i++) {
		put(t, 0x02);
		put(t, 0x82);
	}
}

static void psbend(struct tb *t) { put(t, 0x02); put(t, 0x23); }
static void ovf(struct tb *t) { put(t, 0x02); put(t, 0xf3); }
static void cbr(struct tb *t, unsigned ratio) { put(t, 0x02); put(t, 0x03); put(t, ratio); put(t, 0); }
static void pad(struct tb *t) { put(t, 0x00); }

/* An IP packet with header opcode op (TIP 0x0d, PGE 0x11, PGD 0x01, FUP 0x1d), full 8-byte IP
 * (IPBytes 6), or suppressed when ip == 0. */
static void ippkt(struct tb *t, unsigned op, uint64_t ip)
{
	if (!ip) {
		put(t, op);
		return;
	}
	put(t, op | (6u << 5));
	put_le(t, ip, 8);
}

/* The same with a 2-byte update of the last IP (IPBytes 1). */
static void ippkt16(struct tb *t, unsigned op, uint64_t ip)
{
	put(t, op | (1u << 5));
	put_le(t, ip & 0xffff, 2);
}

static void tip(struct tb *t, uint64_t ip) { ippkt(t, 0x0d, ip); }
static void pge(struct tb *t, uint64_t ip) { ippkt(t, 0x11, ip); }
static void pgd(struct tb *t, uint64_t ip) { ippkt(t, 0x01, ip); }
static void fup(struct tb *t, uint64_t ip) { ippkt(t, 0x1d, ip); }

/* Short TNT from a string of 1..6 of 't'/'n', oldest first. */
static void tnt(struct tb *t, const char *bits)
{
	unsigned n = (unsigned)strlen(bits), v = 0;
	for (unsigned i = 0; i < n; i++)
		v = (v << 1) | (bits[i] == 't');
	put(t, (1u << (n + 1)) | (v << 1));
}

/* Long TNT from a string of 1..47 bits, oldest first. */
static void tnt_long(struct tb *t, const char *bits)
{
	unsigned n = (unsigned)strlen(bits);
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v = (v << 1) | (bits[i] == 't');
	put(t, 0x02);
	put(t, 0xa3);
	put_le(t, (1ull << n) | v, 6);
}

/* MODE.Exec: csl/csd bits. */
static void mode_exec(struct tb *t, int csl, int csd)
{
	put(t, 0x99);
	put(t, (unsigned)(csl | (csd << 1)));
}

/* MODE.Exec for 64-bit code with the IF bit (event trace). */
static void mode_exec_if(struct tb *t, int ifl) { put(t, 0x99); put(t, 1u | ((unsigned)ifl << 2)); }

static void mode_tsx(struct tb *t, int intx, int abrt)
{
	put(t, 0x99);
	put(t, 0x20u | (unsigned)intx | ((unsigned)abrt << 1));
}

/* PTW with a 4-byte payload and the IP bit. */
static void ptw4(struct tb *t, uint32_t v, int ipbit)
{
	put(t, 0x02);
	put(t, 0x12u | (ipbit ? 0x80u : 0));
	put_le(t, v, 4);
}

static void tsc(struct tb *t, uint64_t v) { put(t, 0x19); put_le(t, v, 7); }
/* MTC with CTC[N+7:N] (N: the configured MTCFreq); TMA with CTC[15:0] and FastCounter. */
static void mtc(struct tb *t, unsigned ctc) { put(t, 0x59); put(t, ctc & 0xff); }
static void tma(struct tb *t, unsigned ctc, unsigned fc)
{
	put(t, 0x02);
	put(t, 0x73);
	put_le(t, ctc & 0xffff, 2);
	put(t, 0);
	put_le(t, fc & 0x1ff, 2);
}
/* CYC with fewer than 32 cycles (one byte). */
static void cyc(struct tb *t, unsigned n) { put(t, (n << 3) | 0x3); }

/* Power and trigger packets (payloads zero), PIP (CR3). */
static void exstop(struct tb *t, int ipbit) { put(t, 0x02); put(t, ipbit ? 0xe2 : 0x62); }
static void mwait(struct tb *t) { put(t, 0x02); put(t, 0xc2); put_le(t, 0, 8); }
static void pwre(struct tb *t) { put(t, 0x02); put(t, 0x22); put_le(t, 0, 2); }
static void pwrx(struct tb *t) { put(t, 0x02); put(t, 0xa2); put_le(t, 0, 5); }
static void trig(struct tb *t, int ipbit) { put(t, 0xd9); put(t, ipbit ? 0x80 : 0); put(t, 0x01); }
/* TRIG with ICNT (ICNTV set), no IP. */
static void trig_icnt(struct tb *t, unsigned trbv, unsigned icnt)
{
	put(t, 0xd9);
	put(t, 0x40);
	put(t, trbv);
	put_le(t, icnt, 2);
}
static void pip(struct tb *t, uint64_t cr3) { put(t, 0x02); put(t, 0x43); put_le(t, cr3 >> 4, 6); }

/* ---- image and listings ----------------------------------------------------------------- */

/* The code used by most cases (64-bit unless noted):
 *
 * 0x1000: 31 c0           xor eax,eax
 * 0x1002: ff c0           inc eax
 * 0x1004: 83 f8 03        cmp eax,3
 * 0x1007: 75 f9           jne 0x1002
 * 0x1009: ff e0           jmp rax
 *
 * 0x2000: e8 0b 00 00 00  call 0x2010
 * 0x2005: e8 06 00 00 00  call 0x2010
 * 0x200a: ff e0           jmp rax
 * 0x2010: 90              nop
 * 0x2011: c3              ret
 *
 * 0x3000: ff d0           call rax
 * 0x3002: 74 02           je 0x3006
 * 0x3004: 90              nop
 * 0x3005: 90              nop
 * 0x3006: ff e0           jmp rax
 * 0x3100: 85 c0           test eax,eax
 * 0x3102: 75 01           jne 0x3105
 * 0x3104: 90              nop
 * 0x3105: c3              ret
 *
 * 0x4000: 90              nop
 * 0x4001: 90              nop
 * 0x4002: 48 8b 07        mov rax,[rdi]
 * 0x4005: 90              nop
 * 0x4006: ff e0           jmp rax
 * 0x4100: 90              nop
 * 0x4101: ff e0           jmp rax
 *
 * 0x5000: 48 ff e0        64-bit: jmp rax        32-bit: dec eax; jmp eax
 * 0x5100: ff e0           jmp rax
 * 0x6000: b8 01 00 ff e0  16-bit: mov ax,1; jmp ax
 *
 * 0x7000: 90 90 90        nop x3
 * 0x7003: ff e0           jmp rax
 * 0x7100: ff e0           jmp rax
 *
 * 0x8000: 75 fe           jne 0x8000
 * 0x8002: ff e0           jmp rax
 *
 * 0x9000: f3 0f ae e0     ptwrite eax
 * 0x9004: ff e0           jmp rax
 *
 * 0xa000: eb 02           jmp 0xa004
 * 0xa002: 90 90
 * 0xa004: e8 f7 ff ff ff  call 0xa000  (recursion through a direct jump: never ends without
 *                                       packets) */
struct code {
	uint64_t at;
	const char *hex;
};

static const struct code code[] = {
	{0x1000, "31c0 ffc0 83f803 75f9 ffe0"},
	{0x2000, "e80b000000 e806000000 ffe0"},
	{0x2010, "90 c3"},
	{0x3000, "ffd0 7402 90 90 ffe0"},
	{0x3100, "85c0 7501 90 c3"},
	{0x4000, "90 90 488b07 90 ffe0"},
	{0x4100, "90 ffe0"},
	{0x5000, "48ffe0"},
	{0x5100, "ffe0"},
	{0x6000, "b80100 ffe0"},
	{0x7000, "909090 ffe0"},
	{0x7100, "ffe0"},
	{0x8000, "75fe ffe0"},
	{0x9000, "f30faee0 ffe0"},
	{0xa000, "eb02 9090 e8f7ffffff"},
	{0xb000, "e80b000000 ffe0"},  /* call b010; jmp rax */
	{0xb010, "e800000000 c3"},    /* call $+0 (b015); ret */
	{0xb100, "0f01c2 f4"},        /* vmlaunch; hlt */
	{0xc000, "0f22d8 90 ffe0"},   /* mov cr3, rax; nop; jmp rax */
	{0xd000, "48cf"},             /* iretq */
	{0xd010, "0f01c3"},           /* vmresume */
};

static struct ptrec_pt_img *make_image(void)
{
	struct ptrec_pt_img *img = ptrec_pt_img_new();
	for (size_t i = 0; i < sizeof(code) / sizeof(code[0]); i++) {
		uint8_t bytes[64];
		size_t n = 0;
		for (const char *p = code[i].hex; *p;) {
			if (*p == ' ') {
				p++;
				continue;
			}
			unsigned v;
			sscanf(p, "%2x", &v);
			bytes[n++] = (uint8_t)v;
			p += 2;
		}
		if (ptrec_pt_img_add_bytes(img, code[i].at, bytes, n, 1))
			return NULL;
	}
	return img;
}

static struct ptrec_pt_img *image;

static void append(char *out, size_t cap, const char *s)
{
	size_t l = strlen(out);
	if (l + strlen(s) + 2 < cap) {
		if (l)
			strcat(out, " ");
		strcat(out, s);
	}
}

/* Decodes t with the instruction iterator into the listing notation. */
static const char *listing(const struct tb *t, unsigned errata)
{
	static char out[16384];
	char s[64];
	out[0] = 0;
	struct ptrec_pt_flow_config cfg = {t->b, t->n, image, errata, {0}};
	struct ptrec_pt_flow *f = ptrec_pt_flow_new(&cfg);
	struct ptrec_pt_flow_insn insn;
	struct ptrec_branch ev;
	struct ptrec_pt_flow_run run;
	int e, guard = 0;
	while ((e = ptrec_pt_flow_next_insn(f, &insn, &ev, &run)) > 0 && guard++ < 10000) {
		if (e == PT_FLOW_INSN) {
			snprintf(s, sizeof(s), "%" PRIx64, insn.ip);
		} else if (run.aux == PT_FLOW_AUX_PTW) {
			snprintf(s, sizeof(s), "[ptw %" PRIx64 "]", run.aux_payload);
		} else {
			switch (ev.kind) {
			case PTREC_BR_ENABLE: snprintf(s, sizeof(s), "[enabled]"); break;
			case PTREC_BR_DISABLE: snprintf(s, sizeof(s), "[disabled]"); break;
			case PTREC_BR_OVERFLOW: snprintf(s, sizeof(s), "[overflow]"); break;
			case PTREC_BR_GAP: snprintf(s, sizeof(s), "[gap]"); break;
			case PTREC_BR_INTERRUPT:
				snprintf(s, sizeof(s), "[interrupt %" PRIx64 ">%" PRIx64 "]", ev.from, ev.to);
				break;
			case PTREC_BR_TSX_ABORT:
				snprintf(s, sizeof(s), "[abort %" PRIx64 ">%" PRIx64 "]", ev.from, ev.to);
				break;
			default: continue;
			}
		}
		append(out, sizeof(out), s);
	}
	if (e < 0)
		append(out, sizeof(out), "ERROR");
	ptrec_pt_flow_free(f);
	return out;
}

static const char *events(const struct tb *t, unsigned errata);
static int events_event_trace; /* events() decodes with ptrec_pt_flow_config.event_trace */

/* Decodes t run by run into the branch notation. */
static const char *branches(const struct tb *t)
{
	static char out[16384];
	char s[96];
	out[0] = 0;
	struct ptrec_pt_flow_config cfg = {t->b, t->n, image, 0, {0}};
	struct ptrec_pt_flow *f = ptrec_pt_flow_new(&cfg);
	struct ptrec_pt_flow_run run;
	int guard = 0;
	while (ptrec_pt_flow_next_run(f, &run) > 0 && guard++ < 10000) {
		const struct ptrec_branch *ev = &run.ev;
		if (ev->kind == PTREC_BR_NONE)
			continue;
		snprintf(s, sizeof(s), "%s %" PRIx64 ">%" PRIx64 "%s%s", ptrec_branch_kind_name(ev->kind),
		         ev->from, ev->to,
		         ev->kind == PTREC_BR_JCC ? (ev->flags & PTREC_BRF_TAKEN ? "+" : "-") : "",
		         ev->flags & PTREC_BRF_COMPRESSED_RET ? "c" : "");
		append(out, sizeof(out), s);
	}
	ptrec_pt_flow_free(f);
	return out;
}

/* Starts a trace: PSB+, with FUP ip when ip != 0. */
static void start(struct tb *t, uint64_t ip)
{
	t->n = 0;
	psb(t);
	mode_exec(t, 1, 0);
	if (ip)
		fup(t, ip);
	psbend(t);
}

/* The same in 32-bit mode (MODE.Exec CS.L=0, CS.D=1). */
static void start32(struct tb *t, uint64_t ip)
{
	t->n = 0;
	psb(t);
	mode_exec(t, 0, 1);
	fup(t, ip);
	psbend(t);
}

/* ---- cases ------------------------------------------------------------------------------ */

static void test_tnt_loop(void)
{
	struct tb t;
	/* The loop runs three times: jne taken, taken, not taken; then jmp rax leaves tracing. */
	start(&t, 0x1000);
	tnt(&t, "ttn");
	pgd(&t, 0);
	CHECK_STR(listing(&t, 0), "1000 1002 1004 1007 1002 1004 1007 1002 1004 1007 1009 [disabled]");
	CHECK_STR(branches(&t), "jcc 1007>1002+ jcc 1007>1002+ jcc 1007>1009- disable 1009>0");

	/* TNT bits carry across packets, including a long TNT and PADs between. */
	start(&t, 0x1000);
	tnt(&t, "t");
	pad(&t);
	tnt_long(&t, "tn");
	pgd(&t, 0);
	CHECK_STR(listing(&t, 0), "1000 1002 1004 1007 1002 1004 1007 1002 1004 1007 1009 [disabled]");

	/* The trace ends after the last bit: the flow stops right after the branch it decided
	 * (nothing proves that the code after it ran). */
	start(&t, 0x1000);
	tnt(&t, "t");
	CHECK_STR(listing(&t, 0), "1000 1002 1004 1007");
}

static void test_long_tnt(void)
{
	struct tb t;
	char bits[48];
	/* 0x8000: jne self.  40 taken + 1 not taken in one long TNT after a short one. */
	start(&t, 0x8000);
	tnt(&t, "ttttt");
	memset(bits, 't', 35);
	bits[35] = 'n';
	bits[36] = 0;
	tnt_long(&t, bits);
	pgd(&t, 0);
	char want[1024] = "";
	for (int i = 0; i < 41; i++)
		append(want, sizeof(want), "8000");
	append(want, sizeof(want), "8002 [disabled]");
	CHECK_STR(listing(&t, 0), want);
}

static void test_call_ret(void)
{
	struct tb t;
	/* Compressed returns: each ret consumes a taken bit and pops the call's return address. */
	start(&t, 0x2000);
	tnt(&t, "tt");
	pgd(&t, 0);
	CHECK_STR(listing(&t, 0), "2000 2010 2011 2005 2010 2011 200a [disabled]");
	CHECK_STR(branches(&t), "call 2000>2010 ret 2011>2005c call 2005>2010 ret 2011>200ac "
	                        "disable 200a>0");

	/* Uncompressed returns take TIPs (here with 2-byte IP compression after the first). */
	start(&t, 0x2000);
	tip(&t, 0x2005);
	ippkt16(&t, 0x0d, 0x200a);
	pgd(&t, 0);
	CHECK_STR(listing(&t, 0), "2000 2010 2011 2005 2010 2011 200a [disabled]");
	CHECK_STR(branches(&t), "call 2000>2010 ret 2011>2005 call 2005>2010 ret 2011>200a "
	                        "disable 200a>0");

	/* A compressed return with a not-taken bit is inconsistent: gap, nothing more (no PSB). */
	start(&t, 0x2000);
	tnt(&t, "n");
	CHECK_STR(listing(&t, 0), "2000 2010 [gap]");

	/* A compressed return with an empty return stack (synced inside the callee). */
	start(&t, 0x2010);
	tnt(&t, "t");
	CHECK_STR(listing(&t, 0), "2010 [gap]");
}

static void test_deferred_tip(void)
{
	struct tb t;
	/* call rax's TIP comes after the TNT bits of the branches that follow it: jne at 0x3102
	 * not taken, the compressed ret, je at 0x3002 taken. */
	start(&t, 0x3000);
	tnt(&t, "ntt");
	tip(&t, 0x3100);
	pgd(&t, 0);
	CHECK_STR(listing(&t, 0), "3000 3100 3102 3104 3105 3002 3006 [disabled]");
	CHECK_STR(branches(&t), "ind-call 3000>3100 jcc 3102>3104- ret 3105>3002c jcc 3002>3006+ "
	                        "disable 3006>0");
	/* The same without deferral. */
	start(&t, 0x3000);
	tip(&t, 0x3100);
	tnt(&t, "ntt");
	pgd(&t, 0);
	CHECK_STR(listing(&t, 0), "3000 3100 3102 3104 3105 3002 3006 [disabled]");
}

static void test_async(void)
{
	struct tb t;
	/* A fault at 0x4002 with kernel tracing off: FUP(0x4002) + TIP.PGD.  The history ends at the
	 * faulting instruction, which is not executed; DISABLE.from is the faulting IP.  The signal
	 * handler then runs (TIP.PGE 0x4100). */
	start(&t, 0x4000);
	fup(&t, 0x4002);
	pgd(&t, 0);
	pge(&t, 0x4100);
	pgd(&t, 0);
	CHECK_STR(listing(&t, 0), "4000 4001 [disabled] [enabled] 4100 4101 [disabled]");
	CHECK_STR(branches(&t), "disable 4002>0 enable 0>4100 disable 4101>0");

	/* An interrupt before 0x4001: FUP(0x4001) + TIP(0x4100). */
	start(&t, 0x4000);
	fup(&t, 0x4001);
	tip(&t, 0x4100);
	pgd(&t, 0);
	CHECK_STR(listing(&t, 0), "4000 [interrupt 4001>4100] 4100 4101 [disabled]");

	/* An event at the very first instruction. */
	start(&t, 0x4000);
	fup(&t, 0x4000);
	pgd(&t, 0);
	CHECK_STR(listing(&t, 0), "[disabled]");

	/* The FUP binds only after the queued TNT bits: the loop runs to its end first. */
	start(&t, 0x1000);
	tnt(&t, "ttn");
	fup(&t, 0x1009);
	tip(&t, 0x4100);
	pgd(&t, 0);
	CHECK_STR(listing(&t, 0), "1000 1002 1004 1007 1002 1004 1007 1002 1004 1007 "
	                          "[interrupt 1009>4100] 4100 4101 [disabled]");

	/* Trace starting disabled (PSB+ without FUP), enabled by TIP.PGE. */
	start(&t, 0);
	pge(&t, 0x4100);
	pgd(&t, 0);
	CHECK_STR(listing(&t, 0), "[enabled] 4100 4101 [disabled]");
}

static void test_modes(void)
{
	struct tb t;
	/* 32-bit code: 48 is dec eax. */
	start32(&t, 0x5000);
	pgd(&t, 0);
	CHECK_STR(listing(&t, 0), "5000 5001 [disabled]");

	/* 64-bit: the same bytes are one jmp rax. */
	start(&t, 0x5000);
	pgd(&t, 0);
	CHECK_STR(listing(&t, 0), "5000 [disabled]");

	/* MODE.Exec before a TIP applies to its target only. */
	start(&t, 0x5100);
	mode_exec(&t, 0, 1);
	tip(&t, 0x5000);
	pgd(&t, 0);
	CHECK_STR(listing(&t, 0), "5100 5000 5001 [disabled]");

	/* 16-bit code: mov ax,imm16 is 3 bytes. */
	start(&t, 0x5100);
	mode_exec(&t, 0, 0);
	tip(&t, 0x6000);
	pgd(&t, 0);
	CHECK_STR(listing(&t, 0), "5100 6000 6003 [disabled]");
}

static void test_tsx(void)
{
	struct tb t;
	/* xbegin reported at 0x7001 (MODE.TSX InTX + FUP), abort at 0x7002 to 0x7100. */
	start(&t, 0x7000);
	mode_tsx(&t, 1, 0);
	fup(&t, 0x7001);
	mode_tsx(&t, 0, 1);
	fup(&t, 0x7002);
	tip(&t, 0x7100);
	pgd(&t, 0);
	CHECK_STR(listing(&t, 0), "7000 7001 [abort 7002>7100] 7100 [disabled]");
	CHECK_STR(branches(&t), "tsx-abort 7002>7100 disable 7100>0");

	/* A commit (MODE.TSX InTX=0 + FUP) changes no flow. */
	start(&t, 0x7000);
	mode_tsx(&t, 1, 0);
	fup(&t, 0x7001);
	mode_tsx(&t, 0, 0);
	fup(&t, 0x7002);
	pgd(&t, 0);
	CHECK_STR(listing(&t, 0), "7000 7001 7002 7003 [disabled]");

	/* "A transactional abort that also disables tracing: MODE.TSX (abort), FUP (the abort's
	 * IP), TIP.PGD": the abort is reported at the FUP's IP, then the disable; the
	 * instruction there is not executed. */
	start(&t, 0x7000);
	mode_tsx(&t, 1, 0);
	fup(&t, 0x7001);
	mode_tsx(&t, 0, 1);
	fup(&t, 0x7002);
	pgd(&t, 0);
	CHECK_STR(events(&t, 0), "7000 [begin@7001] ?7001 [abort@7002] [disabled]");

	/* BDM64: "an incorrect FUP IP may be recorded on a TSX abort after a branch": when the
	 * abort's IP cannot be reached from where the last branch went, the abort happened
	 * there.  Without the erratum that is a gap. */
	start(&t, 0x1000);
	tnt(&t, "n");
	mode_tsx(&t, 0, 1);
	fup(&t, 0x1002);
	tip(&t, 0x7000);
	pgd(&t, 0);
	CHECK_STR(listing(&t, PT_ERRATUM_BDM64), "1000 1002 1004 1007 [abort 1002>7000] 7000 7001 7002 7003 [disabled]");
	CHECK(strstr(listing(&t, 0), "[gap]") != NULL);
}

static void test_overflow(void)
{
	struct tb t;
	/* OVF after one taken bit; resume at FUP 0x2010.  The return stack is gone, so the ret
	 * takes a TIP. */
	start(&t, 0x1000);
	tnt(&t, "t");
	ovf(&t);
	fup(&t, 0x2010);
	tip(&t, 0x200a);
	pgd(&t, 0);
	CHECK_STR(listing(&t, 0), "1000 1002 1004 1007 [overflow] 2010 2011 200a [disabled]");
	CHECK_STR(branches(&t), "jcc 1007>1002+ overflow 1002>2010 ret 2011>200a disable 200a>0");

	/* OVF while tracing was off: TIP.PGE follows. */
	start(&t, 0x1000);
	tnt(&t, "t");
	ovf(&t);
	pge(&t, 0x4100);
	pgd(&t, 0);
	CHECK_STR(listing(&t, 0), "1000 1002 1004 1007 [overflow] [enabled] 4100 4101 [disabled]");
}

static void test_psb_refresh(void)
{
	struct tb t;
	/* A PSB+ in the middle of the loop re-states the IP (0x1002 after the taken jne) and adds
	 * timing; decoding goes on unchanged. */
	start(&t, 0x1000);
	tnt(&t, "t");
	psb(&t);
	mode_exec(&t, 1, 0);
	tsc(&t, 0x1234);
	fup(&t, 0x1002);
	psbend(&t);
	tnt(&t, "tn");
	pgd(&t, 0);
	CHECK_STR(listing(&t, 0), "1000 1002 1004 1007 1002 1004 1007 1002 1004 1007 1009 [disabled]");
}

static void test_gaps(void)
{
	struct tb t;
	/* The jne needs a TNT bit but a TIP comes: gap, resync at the next PSB.  The code up to
	 * the jne needs no packet, so the jne executed (ptxed lists it too); where it went is
	 * what the packets do not say: the gap is after it. */
	t.n = 0;
	psb(&t);
	fup(&t, 0x1000);
	psbend(&t);
	tip(&t, 0x2000);
	psb(&t);
	fup(&t, 0x2000);
	psbend(&t);
	tnt(&t, "tt");
	pgd(&t, 0);
	CHECK_STR(listing(&t, 0), "1000 1002 1004 1007 [gap] 2000 2010 2011 2005 2010 2011 200a [disabled]");

	/* A TIP outside the image, and a packet after it that the flow must reach. */
	start(&t, 0x1009);
	tip(&t, 0xdead0000);
	tnt(&t, "t");
	CHECK_STR(listing(&t, 0), "1009 [gap]");

	/* "After a decode error (no code image at an IP, a packet the code does not call for)
	 * decoding resumes at the next packet that gives an IP, not only at the next PSB, with
	 * the gap reported": TNT bits before that packet belong to unknown code and are dropped,
	 * and so a TIP after them is no resume point (deferred TIPs, test_resync_rules): tracing
	 * went off in the gap (TIP.PGD). */
	start(&t, 0x4100);
	tip(&t, 0xdead0000);
	tnt(&t, "tt");
	tip(&t, 0x7000);
	pgd(&t, 0);
	CHECK_STR(listing(&t, 0), "4100 4101 [gap] [disabled]");
	/* A TIP with no TNT packet since the error is. */
	start(&t, 0x4100);
	tip(&t, 0xdead0000);
	tip(&t, 0x7000);
	pgd(&t, 0);
	CHECK_STR(listing(&t, 0), "4100 4101 [gap] 7000 7001 7002 7003 [disabled]");
	/* The jne needs a TNT bit but a TIP comes: a gap, and that TIP's target is where
	 * execution is. */
	start(&t, 0x1000);
	tip(&t, 0x4100);
	pgd(&t, 0);
	CHECK_STR(listing(&t, 0), "1000 1002 1004 1007 [gap] 4100 4101 [disabled]");
	/* An interrupt (FUP + TIP) after the error.  SDM 36.4.2.6: "FUPs are part of compound
	 * packet events ... the FUP provides the source IP for an instruction or event, while a
	 * following TIP (or TIP.PGD) will provide any destination IP": the event is reported
	 * from the FUP's IP to the TIP's, and execution goes on at the TIP's target. */
	start(&t, 0x4100);
	tip(&t, 0xdead0000);
	fup(&t, 0x1234);
	tip(&t, 0x7000);
	pgd(&t, 0);
	CHECK_STR(listing(&t, 0), "4100 4101 [gap] [interrupt 1234>7000] 7000 7001 7002 7003 [disabled]");
	/* A TIP.PGD after the error: tracing went off in the gap; a TIP.PGE enables again. */
	start(&t, 0x4100);
	tip(&t, 0xdead0000);
	pgd(&t, 0);
	pge(&t, 0x7000);
	pgd(&t, 0);
	CHECK_STR(listing(&t, 0), "4100 4101 [gap] [disabled] [enabled] 7000 7001 7002 7003 [disabled]");
	/* The gap is counted once, and nothing before the next IP is claimed. */
	{
		struct ptrec_pt_flow_stats st;
		struct ptrec_branch slots[8];
		struct branch_ring ring;
		start(&t, 0x4100);
		tip(&t, 0xdead0000);
		tip(&t, 0x7000);
		pgd(&t, 0);
		CHECK(ptrec_branch_ring_init(&ring, slots, 8) == 0);
		CHECK(ptrec_pt_flow_decode_last(t.b, t.n, image, NULL, &ring, &st) == 1);
		CHECK_EQ_U64(st.insns, 6);
		CHECK_EQ_U64(ptrec_branch_ring_newest(&ring, 1)->kind, PTREC_BR_GAP);
		CHECK_EQ_U64(ptrec_branch_ring_newest(&ring, 1)->reason, PTREC_ENOMAP);
		CHECK_EQ_U64(ptrec_branch_ring_newest(&ring, 1)->from, 0xdead0000);
	}

	/* A reserved packet byte (the packets are out of step): the next PSB. */
	start(&t, 0x1000);
	put(&t, 0x02);
	put(&t, 0xff);
	psb(&t);
	fup(&t, 0x2000);
	psbend(&t);
	tnt(&t, "tt");
	pgd(&t, 0);
	CHECK_STR(listing(&t, 0), "1000 1002 1004 1007 [gap] 2000 2010 2011 2005 2010 2011 200a [disabled]");

	/* No PSB at all: one gap. */
	t.n = 0;
	tnt(&t, "tt");
	tip(&t, 0x2000);
	CHECK_STR(listing(&t, 0), "[gap]");

	/* Garbage before the first PSB (a ring cut mid-packet) is skipped. */
	t.n = 0;
	put(&t, 0x82);
	put(&t, 0x02);
	put(&t, 0x45);
	pad(&t);
	psb(&t);
	fup(&t, 0x2000);
	psbend(&t);
	tnt(&t, "tt");
	pgd(&t, 0);
	CHECK_STR(listing(&t, 0), "2000 2010 2011 2005 2010 2011 200a [disabled]");

	/* Code that loops by direct branches only, never reaching the TNT packet that follows:
	 * bounded, ends with a gap. */
	start(&t, 0xa000);
	tnt(&t, "t");
	{
		struct ptrec_pt_flow_config cfg = {t.b, t.n, image, 0, {0}};
		struct ptrec_pt_flow *f = ptrec_pt_flow_new(&cfg);
		struct ptrec_pt_flow_run run;
		unsigned long runs = 0, gaps = 0;
		while (ptrec_pt_flow_next_run(f, &run) > 0 && runs++ < 10000000)
			gaps += run.ev.kind == PTREC_BR_GAP;
		CHECK(runs < 10000000);
		CHECK_EQ_U64(gaps, 1);
		ptrec_pt_flow_free(f);
	}
}

static void test_ptw(void)
{
	struct tb t;
	/* PTW with IP bit: "the FUP contains the IP of the PTWRITE instruction" and is not an
	 * event; the payload is what that instruction wrote, so it comes right after it. */
	start(&t, 0x9000);
	ptw4(&t, 0x1234, 1);
	fup(&t, 0x9000);
	pgd(&t, 0);
	CHECK_STR(listing(&t, 0), "9000 [ptw 1234] 9004 [disabled]");
	/* PTW without IP bit (FUPonPTW off): the payload is what the next PTWRITE the flow
	 * executes wrote, so it comes right after that PTWRITE too, not before the code. */
	start(&t, 0x9000);
	ptw4(&t, 0x4321, 0);
	pgd(&t, 0);
	CHECK_STR(listing(&t, 0), "9000 [ptw 4321] 9004 [disabled]");
	/* While tracing is off the payload (and its IP) comes at once. */
	t.n = 0;
	psb(&t);
	psbend(&t);
	ptw4(&t, 0x5678, 1);
	fup(&t, 0x9000);
	CHECK_STR(listing(&t, 0), "[ptw 5678]");
	CHECK_STR(events(&t, 0), "[ptw 5678@9000]");
}

static void test_timing(void)
{
	struct ptrec_pt_time tm;
	struct ptrec_pt_time_config cfg = {1, 2, 0, 20, 0}; /* TSC = 2 x CTC, nominal ratio 20 */
	struct ptrec_pt_packet p;
	uint64_t now;
	ptrec_pt_time_init(&tm, &cfg);
	CHECK_EQ_U64(ptrec_pt_time_now(&tm, &now), 0);
	memset(&p, 0, sizeof(p));
	p.type = PT_PKT_TSC;
	p.payload = 10000;
	ptrec_pt_time_update(&tm, &p);
	CHECK_EQ_U64(ptrec_pt_time_now(&tm, &now), PTREC_BRF_HAS_TIME);
	CHECK_EQ_U64(now, 10000);
	p.type = PT_PKT_TMA;
	p.payload = 0x100;
	p.payload2 = 0;
	ptrec_pt_time_update(&tm, &p);
	p.type = PT_PKT_MTC;
	p.payload = 0x05; /* CTC 0x100 -> 0x105: 5 crystal ticks = 10 TSC ticks */
	ptrec_pt_time_update(&tm, &p);
	ptrec_pt_time_now(&tm, &now);
	CHECK_EQ_U64(now, 10010);
	p.type = PT_PKT_MTC;
	p.payload = 0x01; /* wraps: CTC 0x105 -> 0x201 = +252 ticks */
	ptrec_pt_time_update(&tm, &p);
	ptrec_pt_time_now(&tm, &now);
	CHECK_EQ_U64(now, 10000 + 2 * (0x201 - 0x100));
	p.type = PT_PKT_CBR;
	p.payload = 10; /* core at ratio 10, TSC at 20: one cycle = 2 TSC ticks */
	ptrec_pt_time_update(&tm, &p);
	p.type = PT_PKT_CYC;
	p.payload = 7;
	ptrec_pt_time_update(&tm, &p);
	CHECK_EQ_U64(ptrec_pt_time_now(&tm, &now), PTREC_BRF_HAS_TIME | PTREC_BRF_CYCLE);
	CHECK_EQ_U64(now, 10000 + 2 * (0x201 - 0x100) + 14);

	/* Timestamps on branch events: the TSC before the TNT packet. */
	struct tb t;
	start(&t, 0x1000);
	tsc(&t, 0x4242);
	tnt(&t, "n");
	pgd(&t, 0);
	struct ptrec_pt_flow_config fc = {t.b, t.n, image, 0, {0}};
	struct ptrec_pt_flow *f = ptrec_pt_flow_new(&fc);
	struct ptrec_pt_flow_run run;
	CHECK(ptrec_pt_flow_next_run(f, &run) == 1);
	CHECK_EQ_U64(run.ev.kind, PTREC_BR_JCC);
	CHECK_EQ_U64(run.ev.flags & PTREC_BRF_HAS_TIME, PTREC_BRF_HAS_TIME);
	CHECK_EQ_U64(run.ev.timestamp, 0x4242);
	ptrec_pt_flow_free(f);

	/* "The cycle counter counts during overflows": the OVERFLOW keeps the time; but the CBR
	 * that a frequency change sends may have been lost, so after the OVF a CYC moves time
	 * only once a CBR gives the ratio again (or the caller says it did not change). */
	start(&t, 0x7000);
	tsc(&t, 0xa000);
	cbr(&t, 2); /* nominal ratio 4: 2 TSC ticks per cycle */
	cyc(&t, 4);
	ovf(&t);
	fup(&t, 0x7000);
	cyc(&t, 4);
	fup(&t, 0x7002);
	pgd(&t, 0);
	for (int keep = 0; keep < 2; keep++) {
		struct ptrec_pt_flow_config oc = {t.b, t.n, image, 0, {0, 0, 0, 4, (uint8_t)keep}};
		f = ptrec_pt_flow_new(&oc);
		uint64_t at_ovf = 0, at_pgd = 0;
		for (int guard = 0; ptrec_pt_flow_next_run(f, &run) == 1 && guard < 100; guard++) {
			if (run.ev.kind == PTREC_BR_OVERFLOW)
				at_ovf = run.ev.timestamp;
			if (run.ev.kind == PTREC_BR_DISABLE)
				at_pgd = run.ev.timestamp;
		}
		CHECK_EQ_U64(at_ovf, 0xa008);
		CHECK_EQ_U64(at_pgd, keep ? 0xa010 : 0xa008);
		ptrec_pt_flow_free(f);
	}
}

/* The tail-first decode (what crash reports use) keeps "the last ring->cap branch events ...
 * as ptrec_pt_flow_decode_last would keep them (same options, same events in the same order)"
 * (pt_tail.h): a PTWRITE too, as a MARKER where it was written (ptrec_mark on intel_pt; a
 * watch's report finds its span by these markers). */
static void test_tail_ptw_marker(void)
{
	struct tb t;
	start(&t, 0x9000);
	ptw4(&t, 0x55, 0);
	pgd(&t, 0);
	for (int tail = 0; tail < 2; tail++) {
		struct ptrec_branch slots[4];
		struct branch_ring ring;
		CHECK(ptrec_branch_ring_init(&ring, slots, 4) == 0);
		CHECK((tail ? ptrec_pt_flow_decode_tail(t.b, t.n, image, NULL, &ring, NULL)
		            : ptrec_pt_flow_decode_last(t.b, t.n, image, NULL, &ring, NULL)) == 0);
		CHECK_EQ_U64(ptrec_branch_ring_count(&ring), 2);
		CHECK_EQ_U64(ptrec_branch_ring_get(&ring, 0)->kind, PTREC_BR_MARKER);
		CHECK_EQ_U64(ptrec_branch_ring_get(&ring, 0)->to, 0x55);
		CHECK_EQ_U64(ptrec_branch_ring_get(&ring, 1)->kind, PTREC_BR_DISABLE);
	}
}

static void test_last_n(void)
{
	struct tb t;
	struct ptrec_branch slots[3];
	struct branch_ring ring;
	struct ptrec_pt_flow_stats st;
	start(&t, 0x2000);
	tnt(&t, "tt");
	pgd(&t, 0);
	CHECK(ptrec_branch_ring_init(&ring, slots, 3) == 0);
	CHECK(ptrec_pt_flow_decode_last(t.b, t.n, image, NULL, &ring, &st) == 0);
	/* Five events (call ret call ret disable): the ring keeps the last three. */
	CHECK_EQ_U64(ring.pushed, 5);
	CHECK_EQ_U64(ptrec_branch_ring_count(&ring), 3);
	CHECK_EQ_U64(ptrec_branch_ring_get(&ring, 0)->kind, PTREC_BR_CALL);
	CHECK_EQ_U64(ptrec_branch_ring_get(&ring, 0)->from, 0x2005);
	CHECK_EQ_U64(ptrec_branch_ring_get(&ring, 1)->kind, PTREC_BR_RET);
	CHECK_EQ_U64(ptrec_branch_ring_get(&ring, 2)->kind, PTREC_BR_DISABLE);
	CHECK_EQ_U64(ptrec_branch_ring_newest(&ring, 0)->kind, PTREC_BR_DISABLE);
	CHECK_EQ_U64(st.insns, 7);
	CHECK(ptrec_branch_ring_get(&ring, 3) == NULL);

	/* A gap counts: the return value is the number of gaps. */
	start(&t, 0x1009);
	tip(&t, 0xdead0000);
	tnt(&t, "t");
	CHECK(ptrec_pt_flow_decode_last(t.b, t.n, image, NULL, &ring, NULL) == 1);
	CHECK_EQ_U64(ptrec_branch_ring_newest(&ring, 0)->kind, PTREC_BR_GAP);
	CHECK_EQ_U64(ptrec_branch_ring_newest(&ring, 0)->reason, PTREC_ENOMAP);

	/* taken_only leaves out the not-taken jne. */
	struct ptrec_pt_flow_last_opts o;
	memset(&o, 0, sizeof(o));
	o.taken_only = 1;
	start(&t, 0x1000);
	tnt(&t, "ttn");
	pgd(&t, 0);
	CHECK(ptrec_pt_flow_decode_last(t.b, t.n, image, &o, &ring, NULL) == 0);
	CHECK_EQ_U64(ring.pushed, 3);
	CHECK_EQ_U64(ptrec_branch_ring_newest(&ring, 1)->flags & PTREC_BRF_TAKEN, PTREC_BRF_TAKEN);
}

static void test_cpu(void)
{
	struct ptrec_pt_flow_cpu c;
	CHECK(ptrec_pt_flow_parse_cpu("6/78", &c) == 0);
	CHECK_EQ_U64(c.family, 6);
	CHECK_EQ_U64(c.model, 78);
	CHECK(ptrec_pt_flow_parse_cpu("6/0x4e/3", &c) == 0);
	CHECK_EQ_U64(c.stepping, 3);
	CHECK(ptrec_pt_flow_cpu_errata(&c) & PT_ERRATUM_SKL014);
	CHECK(ptrec_pt_flow_parse_cpu("6", &c) < 0);
	CHECK(ptrec_pt_flow_parse_cpu("6/x", &c) < 0);
	CHECK(ptrec_pt_flow_parse_cpu("6/1/2/3", &c) < 0);
	c.model = 0x5c;
	CHECK(ptrec_pt_flow_cpu_errata(&c) & PT_ERRATUM_APL11);
	/* Family 18 models 1 and 3 (libipt's errata table, 2025: its skd022 and bdm70 cases list
	 * cpu 18/1 and 18/3): SKD022, BDM70, APL11. */
	CHECK(ptrec_pt_flow_parse_cpu("18/3", &c) == 0);
	CHECK_EQ_U64(ptrec_pt_flow_cpu_errata(&c),
	             PT_ERRATUM_SKD022 | PT_ERRATUM_BDM70 | PT_ERRATUM_APL11);

	/* SKL014: TIP.PGD without IP after a direct jump disables after that jump only when the
	 * erratum applies; without it the jump is followed and the PGD binds at the next branch
	 * needing a packet. */
	struct tb t;
	start(&t, 0xa000);
	pgd(&t, 0);
	CHECK_STR(listing(&t, PT_ERRATUM_SKL014), "a000 [disabled]");

	/* APL11: a spurious TIP.PGD right after OVF is ignored, the FUP gives the resume IP.
	 * Without the erratum the PGD leaves tracing off and nothing more executes. */
	start(&t, 0x1000);
	tnt(&t, "t");
	ovf(&t);
	pgd(&t, 0);
	fup(&t, 0x2010);
	tip(&t, 0x200a);
	pgd(&t, 0);
	CHECK_STR(listing(&t, PT_ERRATUM_APL11),
	          "1000 1002 1004 1007 [overflow] 2010 2011 200a [disabled]");
	CHECK_STR(listing(&t, 0), "1000 1002 1004 1007 [overflow]");

	/* SKD010: the FUP after OVF is missing; the next TIP gives the resume IP.  Without the
	 * erratum the same packets are a TIP while tracing is off (no FUP after the OVF): a gap
	 * (test_context_error_32bit), and that TIP, with no TNT before it, is where execution is. */
	start(&t, 0x1000);
	tnt(&t, "t");
	ovf(&t);
	tip(&t, 0x2010);
	tip(&t, 0x200a);
	pgd(&t, 0);
	CHECK_STR(listing(&t, PT_ERRATUM_SKD010),
	          "1000 1002 1004 1007 [overflow] 2010 2011 200a [disabled]");
	CHECK_STR(listing(&t, 0), "1000 1002 1004 1007 [overflow] [gap] 2010 2011 200a [disabled]");
}

/* Deterministic mutation fuzzing: random byte changes to the traces above never crash, hang or
 * report more instructions than the bounds allow, and the totals without runs
 * (ptrec_pt_flow_count, chains) are the runs added up. */
static void test_fuzz_smoke(void)
{
	struct tb seeds[4];
	start(&seeds[0], 0x3000);
	tnt(&seeds[0], "ntt");
	tip(&seeds[0], 0x3100);
	pgd(&seeds[0], 0);
	start(&seeds[1], 0x1000);
	tnt(&seeds[1], "t");
	ovf(&seeds[1]);
	fup(&seeds[1], 0x2010);
	tip(&seeds[1], 0x200a);
	pgd(&seeds[1], 0);
	start(&seeds[2], 0x7000);
	mode_tsx(&seeds[2], 1, 0);
	fup(&seeds[2], 0x7001);
	mode_tsx(&seeds[2], 0, 1);
	fup(&seeds[2], 0x7002);
	tip(&seeds[2], 0x7100);
	psb(&seeds[2]);
	fup(&seeds[2], 0x4000);
	psbend(&seeds[2]);
	fup(&seeds[2], 0x4002);
	pgd(&seeds[2], 0);
	pge(&seeds[2], 0x4100);
	start(&seeds[3], 0x2000);
	tnt_long(&seeds[3], "tttttttttttttttttttttttttttttttttt");
	tsc(&seeds[3], 77);
	tip(&seeds[3], 0x8000);

	uint64_t x = 0x9e3779b97f4a7c15ull;
	unsigned runs_ok = 0, last_checked = 0, last_same = 0, count_same = 0;
	for (int iter = 0; iter < 20000; iter++) {
		struct tb t = seeds[iter % 4];
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		unsigned nmut = 1 + (unsigned)(x % 4);
		for (unsigned m = 0; m < nmut; m++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			size_t at = (size_t)(x % t.n);
			switch ((x >> 32) % 4) {
			case 0: t.b[at] ^= (uint8_t)(1u << ((x >> 40) % 8)); break;
			case 1: t.b[at] = (uint8_t)(x >> 48); break;
			case 2: if (t.n > 1) t.n--; break;
			default: t.b[at] = 0; break;
			}
		}
		struct ptrec_pt_flow_config cfg = {t.b, t.n, image, (unsigned)(iter & 7), {0}};
		struct ptrec_pt_flow *f = ptrec_pt_flow_new(&cfg);
		struct ptrec_pt_flow_run run;
		struct ptrec_branch newest[8]; /* the last 8 events, as a ring indexed by count */
		unsigned long nrun = 0, nev = 0;
		uint64_t insns = 0, kinds[PTREC_BR_KIND_COUNT_] = {0};
		int e;
		while ((e = ptrec_pt_flow_next_run(f, &run)) > 0 && nrun < 5000000) {
			nrun++;
			insns += run.ninsn;
			kinds[run.ev.kind < PTREC_BR_KIND_COUNT_ ? run.ev.kind : PTREC_BR_NONE]++;
			if (run.aux == PT_FLOW_AUX_RESYNC && nev) /* the ring's GAP says where it ended */
				ptrec_pt_flow_gap_resumed(&newest[(nev - 1) % 8], &run);
			if (run.ev.kind != PTREC_BR_NONE)
				newest[nev++ % 8] = run.ev;
		}
		if (e == 0 && nrun < 5000000)
			runs_ok++;
		ptrec_pt_flow_free(f);

		struct ptrec_pt_flow_counts c;
		memset(&c, 0, sizeof(c));
		f = ptrec_pt_flow_new(&cfg);
		int cnt_ok = ptrec_pt_flow_count(f, &c) == 0 && c.insns == insns;
		for (unsigned k = PTREC_BR_NONE + 1; k < PTREC_BR_KIND_COUNT_; k++)
			cnt_ok = cnt_ok && c.kind[k] == kinds[k];
		count_same += cnt_ok;
		ptrec_pt_flow_free(f);

		/* The crash report's entry point keeps exactly the newest of those events, times
		 * included. */
		if (iter % 16 == 0 && e == 0) {
			struct ptrec_branch slots[8];
			struct ptrec_pt_flow_last_opts o;
			struct branch_ring ring;
			memset(&o, 0, sizeof(o));
			o.errata = cfg.errata;
			ptrec_branch_ring_init(&ring, slots, 8);
			ptrec_pt_flow_decode_last(t.b, t.n, image, &o, &ring, NULL);
			size_t keep = nev < 8 ? nev : 8, same = ring.pushed == nev &&
			                                       ptrec_branch_ring_count(&ring) == keep;
			for (size_t k = 0; same && k < keep; k++) {
				const struct ptrec_branch *a = ptrec_branch_ring_newest(&ring, k);
				const struct ptrec_branch *b = &newest[(nev - 1 - k) % 8];
				same = a->from == b->from && a->to == b->to && a->kind == b->kind &&
				       a->flags == b->flags && a->timestamp == b->timestamp &&
				       a->reserved == b->reserved;
			}
			last_same += same;
			last_checked++;
		}
	}
	CHECK_EQ_U64(runs_ok, 20000);
	CHECK_EQ_U64(count_same, 20000);
	CHECK(last_checked > 1000);
	CHECK_EQ_U64(last_same, last_checked);
}

/* Counts cfg's trace both ways: c by ptrec_pt_flow_count, r by adding up the runs of
 * ptrec_pt_flow_next_run (instructions, events by kind, taken conditional branches, compressed
 * returns, first and last time), calling each(run, arg) on every run when each is not NULL. */
static void count_both(const struct ptrec_pt_flow_config *cfg, struct ptrec_pt_flow_counts *c,
                       struct ptrec_pt_flow_counts *r,
                       void (*each)(const struct ptrec_pt_flow_run *, void *), void *arg)
{
	struct ptrec_pt_flow_run run;
	memset(c, 0, sizeof(*c));
	memset(r, 0, sizeof(*r));
	struct ptrec_pt_flow *f = ptrec_pt_flow_new(cfg);
	while (ptrec_pt_flow_next_run(f, &run) > 0) {
		r->insns += run.ninsn;
		if (run.ev.kind != PTREC_BR_NONE) /* (auxiliary items are no events) */
			r->kind[run.ev.kind]++;
		r->jcc_taken += run.ev.kind == PTREC_BR_JCC && (run.ev.flags & PTREC_BRF_TAKEN);
		r->ret_compressed += !!(run.ev.flags & PTREC_BRF_COMPRESSED_RET);
		if (run.ev.flags & PTREC_BRF_HAS_TIME) {
			if (!r->have_time)
				r->time_first = run.ev.timestamp;
			r->have_time = 1;
			r->time_last = run.ev.timestamp;
		}
		if (each)
			each(&run, arg);
	}
	ptrec_pt_flow_free(f);
	f = ptrec_pt_flow_new(cfg);
	CHECK_EQ_U64(ptrec_pt_flow_count(f, c), 0);
	ptrec_pt_flow_free(f);
}

/* ptrec_pt_flow_count takes whole chains: through a compressed return of a call made before the
 * chain (call rax at 0x3000, its TIP taken by the chain before) and up to the indirect branch
 * that takes the TIP read behind the last TNT bit, whose target is part of the chain's key and
 * changes here every third time (jmp rax at 0x3006 to 0x3000 or to 0x2000, whose two calls
 * return compressed inside the chain).  The totals are what the code and the packets say,
 * the runs' totals and ptrec_pt_flow_count's alike. */
static void test_count_chains(void)
{
	struct tb t;
	const unsigned n = 200;
	start(&t, 0x3000);
	for (unsigned i = 0; i < n; i++) {
		tip(&t, 0x3100); /* call rax */
		tnt(&t, "ntt");  /* jne at 3102 not taken, ret to 3002 (compressed), je taken */
		if (i % 3 == 2) {
			tip(&t, 0x2000); /* jmp rax at 3006 */
			tnt(&t, "tt");   /* the two returns of 2000's calls */
			tip(&t, 0x3000); /* jmp rax at 200a */
		} else {
			tip(&t, 0x3000); /* jmp rax at 3006 */
		}
	}
	pgd(&t, 0);
	CHECK(t.n < sizeof(t.b));
	uint64_t odd = n / 3; /* iterations through 0x2000 */
	struct ptrec_pt_flow_config cfg = {t.b, t.n, image, 0, {0}};
	struct ptrec_pt_flow_counts c, r;
	count_both(&cfg, &c, &r, NULL, NULL);
	for (int k = 0; k < 2; k++) {
		const struct ptrec_pt_flow_counts *x = k ? &r : &c;
		/* per iteration: call rax; test, jne, nop, ret; je; jmp rax (7 instructions), and
		 * through 0x2000: call, nop, ret, call, nop, ret, jmp rax (7 more); and the last
		 * call rax, where tracing is disabled */
		CHECK_EQ_U64(x->insns, 7 * n + 7 * odd + 1);
		CHECK_EQ_U64(x->kind[PTREC_BR_IND_CALL], n);
		CHECK_EQ_U64(x->kind[PTREC_BR_JCC], 2 * n);
		CHECK_EQ_U64(x->kind[PTREC_BR_RET], n + 2 * odd);
		CHECK_EQ_U64(x->ret_compressed, n + 2 * odd);
		CHECK_EQ_U64(x->kind[PTREC_BR_CALL], 2 * odd);
		CHECK_EQ_U64(x->kind[PTREC_BR_IND_JMP], n + odd);
		CHECK_EQ_U64(x->kind[PTREC_BR_DISABLE], 1);
		CHECK_EQ_U64(x->kind[PTREC_BR_GAP], 0);
	}
}

/* Chains of ptrec_pt_flow_count from the same block with the same TNT bits and the same TIP
 * behind them that return to different callers (calls made before the chain: the return
 * address on the stack decides where it goes) count each caller's own code: 64 call sites,
 * each `call rax` followed by 0..3 nops and `jmp rax`, call the same function (test; jne; nop;
 * ret, whose return is compressed) and all jump on to the same `jmp rax`, which goes to the next
 * call site; the sites are visited 4 times in different orders.  Per visit: call rax, 4 in the
 * function, the site's nops and jmp rax, then jmp rax again. */
static void test_count_chain_callers(void)
{
	enum { SITES = 64, ROUNDS = 4 };
	const uint64_t fn = 0xe000, hub = 0xe100;
	struct ptrec_pt_img *img = ptrec_pt_img_new();
	CHECK(img != NULL);
	static const uint8_t fn_code[] = {0x85, 0xc0, 0x75, 0x01, 0x90, 0xc3};
	static const uint8_t hub_code[] = {0xff, 0xe0};
	CHECK_EQ_U64(ptrec_pt_img_add_bytes(img, fn, fn_code, sizeof(fn_code), 1), 0);
	CHECK_EQ_U64(ptrec_pt_img_add_bytes(img, hub, hub_code, sizeof(hub_code), 1), 0);
	for (unsigned i = 0; i < SITES; i++) {
		uint8_t site[8] = {0xff, 0xd0}; /* call rax */
		unsigned n = 2;
		for (unsigned k = 0; k < i % 4; k++)
			site[n++] = 0x90;
		site[n++] = 0xff; /* jmp rax */
		site[n++] = 0xe0;
		CHECK_EQ_U64(ptrec_pt_img_add_bytes(img, 0xd000 + 0x20 * i, site, n, 1), 0);
	}
	unsigned seq[SITES * ROUNDS + 1]; /* the sites in the order visited, from site 0 to site 0 */
	for (unsigned r = 0; r < ROUNDS; r++)
		for (unsigned j = 0; j < SITES; j++)
			seq[r * SITES + j] = (j * (2 * r + 1) + r) % SITES;
	seq[0] = seq[SITES * ROUNDS] = 0;
	struct tb t;
	uint64_t visits = SITES * ROUNDS, nops = 0;
	start(&t, 0xd000);
	for (unsigned v = 0; v < visits; v++) {
		tip(&t, fn);   /* call rax */
		tnt(&t, "nt"); /* jne not taken, ret (compressed) */
		tip(&t, hub);  /* the site's jmp rax */
		tip(&t, 0xd000 + 0x20 * seq[v + 1]); /* the hub's jmp rax */
		nops += seq[v] % 4;
	}
	pgd(&t, 0);
	CHECK(t.n < sizeof(t.b));
	struct ptrec_pt_flow_config cfg = {t.b, t.n, img, 0, {0}};
	struct ptrec_pt_flow_counts c, r;
	count_both(&cfg, &c, &r, NULL, NULL);
	for (int k = 0; k < 2; k++) {
		const struct ptrec_pt_flow_counts *x = k ? &r : &c;
		/* the last call rax is where tracing is disabled */
		CHECK_EQ_U64(x->insns, 7 * visits + nops + 1);
		CHECK_EQ_U64(x->kind[PTREC_BR_IND_CALL], visits);
		CHECK_EQ_U64(x->kind[PTREC_BR_JCC], visits);
		CHECK_EQ_U64(x->kind[PTREC_BR_RET], visits);
		CHECK_EQ_U64(x->ret_compressed, visits);
		CHECK_EQ_U64(x->kind[PTREC_BR_IND_JMP], 2 * visits);
		CHECK_EQ_U64(x->kind[PTREC_BR_DISABLE], 1);
		CHECK_EQ_U64(x->kind[PTREC_BR_GAP], 0);
	}
	ptrec_pt_img_free(img);
}

/* Checks that ptrec_pt_flow_count's totals c are the runs' r, field by field. */
static void check_same_counts(const struct ptrec_pt_flow_counts *c,
                              const struct ptrec_pt_flow_counts *r)
{
	CHECK_EQ_U64(c->insns, r->insns);
	for (unsigned k = 0; k < PTREC_BR_KIND_COUNT_; k++)
		CHECK_EQ_U64(c->kind[k], r->kind[k]);
	CHECK_EQ_U64(c->jcc_taken, r->jcc_taken);
	CHECK_EQ_U64(c->ret_compressed, r->ret_compressed);
	CHECK_EQ_U64(c->have_time, r->have_time);
	CHECK_EQ_U64(c->time_first, r->time_first);
	CHECK_EQ_U64(c->time_last, r->time_last);
}

/* Adds code at `at` to img from a hex string (spaces ignored). */
static void add_code(struct ptrec_pt_img *img, uint64_t at, const char *hex)
{
	uint8_t bytes[64];
	size_t n = 0;
	for (const char *p = hex; *p && n < sizeof(bytes);) {
		unsigned v;
		if (*p == ' ' || sscanf(p, "%2x", &v) != 1) {
			p++;
			continue;
		}
		bytes[n++] = (uint8_t)v;
		p += 2;
	}
	CHECK_EQ_U64(ptrec_pt_img_add_bytes(img, at, bytes, n, 1), 0);
}

/* ptrec_pt_flow_count takes several TNT and TIP packets in one step where the same trace bytes
 * come again at the same block (spans).  A TIP with IPBytes 1 gives only IP[15:0]; the upper
 * bits are the last IP's, so the same bytes lead elsewhere when the last IP is elsewhere:
 * A (at 0x20000 and at 0x30000: jmp C) is reached by a TIP; C (test; 20 x jne $+2; jmp rax)
 * takes 10 TNT bits, then 10 more, and its jmp rax a 2-byte TIP to 0x0200: B at 0x20200
 * (jmp rax) or at 0x30200 (nop; nop; jmp rax), by where A was; B's jmp rax goes back to A with
 * another 2-byte TIP.  From C's 11th jne on, the bytes are the same in both regions. */
static void test_count_span_last_ip(void)
{
	enum { VISITS = 8, CYCLES = 12 };
	struct ptrec_pt_img *img = ptrec_pt_img_new();
	CHECK(img != NULL);
	char c_hex[128] = "85c0";
	for (int i = 0; i < 20; i++)
		strcat(c_hex, "7500");
	strcat(c_hex, "ffe0");
	add_code(img, 0x10000, c_hex);
	add_code(img, 0x20000, "e9fbfffeff"); /* jmp 0x10000 */
	add_code(img, 0x30000, "e9fbfffdff"); /* jmp 0x10000 */
	add_code(img, 0x20200, "ffe0");
	add_code(img, 0x30200, "9090 ffe0");
	struct tb t;
	uint64_t insns = 0;
	start(&t, 0x20000);
	for (unsigned v = 0; v < VISITS; v++) {
		uint64_t region = v % 2 ? 0x30000 : 0x20000;
		for (unsigned k = 0; k < CYCLES; k++) {
			tnt_long(&t, "nnnnnnnnnn");
			tnt_long(&t, "nnnnnnnnnn");
			ippkt16(&t, 0x0d, region + 0x200); /* C's jmp rax */
			if (k + 1 < CYCLES)
				ippkt16(&t, 0x0d, region); /* B's jmp rax */
			else if (v + 1 < VISITS)
				tip(&t, v % 2 ? 0x20000 : 0x30000);
			else
				pgd(&t, 0);
			insns += 23 + (v % 2 ? 3 : 1); /* jmp; test, 20 jne, jmp rax; B */
		}
	}
	CHECK(t.n < sizeof(t.b));
	struct ptrec_pt_flow_config cfg = {t.b, t.n, img, 0, {0}};
	struct ptrec_pt_flow_counts c, r;
	count_both(&cfg, &c, &r, NULL, NULL);
	check_same_counts(&c, &r);
	CHECK_EQ_U64(c.insns, insns);
	CHECK_EQ_U64(c.kind[PTREC_BR_JMP], VISITS * CYCLES);
	CHECK_EQ_U64(c.kind[PTREC_BR_JCC], 20 * VISITS * CYCLES);
	CHECK_EQ_U64(c.kind[PTREC_BR_IND_JMP], 2 * VISITS * CYCLES - 1);
	CHECK_EQ_U64(c.kind[PTREC_BR_DISABLE], 1);
	CHECK_EQ_U64(c.kind[PTREC_BR_GAP], 0);
	ptrec_pt_img_free(img);
}

/* The return stack holds the last 64 return addresses: a compressed return needs one (SDM:
 * "the RET compression depth"), so a 65th compressed return in a row is a trace that cannot be
 * followed (a gap), also when the calls were counted several at a time.  R: test; je; call rax;
 * ret: 99 calls of R to R (je not taken, a full TIP each; after the first ones, ptrec_pt_flow_count
 * takes them three at a time, the last three too), then je taken and 99 compressed returns. */
static void test_count_span_deep(void)
{
	enum { DEPTH = 99 };
	const uint64_t rr = 0x50000;
	struct ptrec_pt_img *img = ptrec_pt_img_new();
	CHECK(img != NULL);
	add_code(img, rr, "85c0 7402 ffd0 c3");
	struct tb t;
	start(&t, rr);
	for (unsigned i = 0; i < DEPTH; i++) {
		tnt(&t, "n");
		tip(&t, rr);
	}
	char bits[48];
	memset(bits, 't', 47);
	bits[47] = 0;
	tnt_long(&t, bits); /* je, 46 returns */
	tnt_long(&t, bits);
	tnt(&t, "ttttttt" + 7 - (DEPTH + 1 - 2 * 47));
	pge(&t, rr);
	pgd(&t, 0);
	CHECK(t.n < sizeof(t.b));
	struct ptrec_pt_flow_config cfg = {t.b, t.n, img, 0, {0}};
	struct ptrec_pt_flow_counts c, r;
	count_both(&cfg, &c, &r, NULL, NULL);
	check_same_counts(&c, &r);
	CHECK_EQ_U64(c.kind[PTREC_BR_IND_CALL], DEPTH);
	CHECK_EQ_U64(c.ret_compressed, 64);
	CHECK_EQ_U64(c.kind[PTREC_BR_GAP], 1);
	ptrec_pt_img_free(img);
}

/* The times test_count_cyc expects, checked run by run: passes seen, events at a wrong time. */
struct cyc_times {
	uint64_t passes, jcc_wrong, jmp_wrong;
};

static void check_cyc_time(const struct ptrec_pt_flow_run *run, void *arg)
{
	struct cyc_times *t = arg;
	if (run->ev.kind == PTREC_BR_JCC)
		t->jcc_wrong += run->ev.timestamp != 10000 + 16 * t->passes + 6;
	if (run->ev.kind == PTREC_BR_IND_JMP)
		t->jmp_wrong += run->ev.timestamp != 10000 + 16 * ++t->passes;
}

/* CYC packets between the TNTs and TIPs of a loop move the time of the events after them,
 * also where the hot paths read them (a CYC's time: the previous CYC's plus its cycles times
 * the nominal ratio over the core:bus ratio, here 20/10: 2 TSC ticks per cycle).  Per pass of
 * 0x1000 (the TIP goes back there): CYC 3, TNT ttn (the loop's three JCCs at 6 ticks more),
 * CYC 5, TIP (the jmp rax at 10 ticks more). */
static void test_count_cyc(void)
{
	enum { PASSES = 100 };
	struct tb t;
	start(&t, 0x1000);
	tsc(&t, 10000);
	cbr(&t, 10);
	for (unsigned i = 0; i < PASSES; i++) {
		cyc(&t, 3);
		tnt(&t, "ttn");
		cyc(&t, 5);
		tip(&t, 0x1000);
	}
	pgd(&t, 0);
	CHECK(t.n < sizeof(t.b));
	struct ptrec_pt_flow_config cfg = {t.b, t.n, image, 0, {1, 2, 0, 20, 0}};
	struct ptrec_pt_flow_counts c, r;
	struct cyc_times times = {0, 0, 0};
	count_both(&cfg, &c, &r, check_cyc_time, &times);
	CHECK_EQ_U64(times.jcc_wrong, 0);
	CHECK_EQ_U64(times.jmp_wrong, 0);
	for (int k = 0; k < 2; k++) {
		const struct ptrec_pt_flow_counts *x = k ? &r : &c;
		CHECK_EQ_U64(x->kind[PTREC_BR_JCC], 3 * PASSES);
		CHECK_EQ_U64(x->kind[PTREC_BR_IND_JMP], PASSES);
		CHECK_EQ_U64(x->have_time, 1);
		CHECK_EQ_U64(x->time_first, 10006);
		CHECK_EQ_U64(x->time_last, 10000 + 16 * PASSES);
	}
}

/* A pass of the loop at 0x1000 (jne taken twice, then jmp rax back to it): TNT ttn, an MTC with
 * CTC bits ctc, a CYC of cycles (none when 0), TIP 0x1000. */
static void mtc_pass(struct tb *t, unsigned ctc, unsigned cycles)
{
	tnt(t, "ttn");
	mtc(t, ctc);
	if (cycles)
		cyc(t, cycles);
	tip(t, 0x1000);
}

/* Spans of ptrec_pt_flow_count take MTCs in them (perf's default timing: an MTC every few
 * dozen trace bytes): the same bytes but the MTC payloads are the same span, and the MTCs are
 * applied to the clock as they come ("MTC provides a periodic indication of wall-clock time",
 * its payload the crystal clock's bits MTCFreq+7..MTCFreq).  The loop at 0x1000 runs 300
 * times, each pass TNT ttn (its three JCCs), an MTC 100 crystal ticks on (ratio 2/1: 200 TSC
 * ticks), TIP back to 0x1000 (jmp rax); the time of the last event (the disable) is the TSC
 * plus 200 per pass.  (With MTCs left out where spans are taken, the crystal clock would lose
 * 256 ticks wherever three or more in a row are left out.)  Then with a CYC of 7 cycles right
 * after each MTC (2 TSC ticks per cycle: CBR 10, nominal ratio 20), which a span does not take,
 * and MTCs 5 crystal ticks apart: a CYC counts the cycles since the previous CYC, so the time
 * runs 14 ticks a pass from the first MTC on, ahead of the MTCs' 10 (a CYC is never placed
 * before the last MTC, an MTC behind the time holds it still). */
static void test_count_span_mtc(void)
{
	enum { PASSES = 300 };
	for (int with_cyc = 0; with_cyc < 2; with_cyc++) {
		struct tb t;
		t.n = 0;
		psb(&t);
		tsc(&t, 10000);
		tma(&t, 0, 0);
		cbr(&t, 10);
		mode_exec(&t, 1, 0);
		fup(&t, 0x1000);
		psbend(&t);
		for (unsigned i = 0; i < PASSES; i++)
			mtc_pass(&t, (i + 1) * (with_cyc ? 5 : 100), with_cyc ? 7 : 0);
		pgd(&t, 0);
		CHECK(t.n < sizeof(t.b));
		struct ptrec_pt_flow_counts c, r;
		count_both(&(struct ptrec_pt_flow_config){t.b, t.n, image, 0, {1, 2, 0, 20, 0}}, &c, &r,
		           NULL, NULL);
		check_same_counts(&c, &r);
		CHECK_EQ_U64(c.kind[PTREC_BR_JCC], 3 * PASSES);
		CHECK_EQ_U64(c.kind[PTREC_BR_IND_JMP], PASSES);
		CHECK_EQ_U64(c.time_first, 10000);
		CHECK_EQ_U64(c.time_last, with_cyc ? 10000 + 10 + 14 * PASSES : 10000 + 200 * PASSES);
	}
}

/* One run as ptrec_pt_flow_next_run delivered it, with its lengths copied (they are only valid until
 * the next call). */
struct run_copy {
	struct ptrec_pt_flow_run r; /* the run (len not used) */
	uint8_t len[64];      /* its first 64 lengths */
};

/* Returns 1 if a equals b in every field that has a meaning, and every length. */
static int same_run(const struct run_copy *a, const struct ptrec_pt_flow_run *b)
{
	const struct ptrec_pt_flow_run *r = &a->r;
	unsigned n = r->ninsn < 64 ? r->ninsn : 64;
	return r->ip == b->ip && r->ninsn == b->ninsn && r->mode == b->mode &&
	       r->last_iclass == b->last_iclass && r->aux == b->aux && r->ev.from == b->ev.from &&
	       r->ev.to == b->ev.to && r->ev.timestamp == b->ev.timestamp &&
	       r->ev.kind == b->ev.kind && r->ev.flags == b->ev.flags &&
	       r->ev.reason == b->ev.reason &&
	       (!r->aux || r->aux_payload == b->aux_payload) &&
	       r->offset == b->offset && (r->why == NULL) == (b->why == NULL) &&
	       (!r->why || !strcmp(r->why, b->why)) && (!n || !memcmp(a->len, b->len, n));
}

/* The batch form gives exactly the runs of the one-run form, for any batch size and when calls
 * of both forms alternate, on loops (where the cached successors make the fast paths run), with
 * PTWRITEs, and on random changes of the loops. */
static void test_batch_same(void)
{
	struct tb seed;
	start(&seed, 0x1000);
	tsc(&seed, 1000);
	tnt(&seed, "ttn");
	tip(&seed, 0x1002);
	tnt(&seed, "ttn");
	tip(&seed, 0x1002);
	tnt(&seed, "tn");
	tip(&seed, 0x8000);
	tnt_long(&seed, "ttttttttttttttttttttttttttttttttttttttttn");
	tip(&seed, 0x1000);
	tsc(&seed, 900);
	tnt(&seed, "ttn");
	tip(&seed, 0x8000);
	tnt(&seed, "ttttt");
	tnt(&seed, "tttttt");
	tnt(&seed, "ttn");
	tip(&seed, 0x2000);
	tnt(&seed, "tt");
	tip(&seed, 0x1000);
	tnt(&seed, "ttn");
	/* seed_ptw goes on with PTWRITEs (a queued PTW item takes the slow path) */
	struct tb seed_ptw = seed;
	tip(&seed, 0x8000);
	tnt(&seed, "tttn");
	pgd(&seed, 0);
	tip(&seed_ptw, 0x9000);
	ptw4(&seed_ptw, 0x1234, 0);
	tip(&seed_ptw, 0x8000);
	tnt(&seed_ptw, "tttn");
	tip(&seed_ptw, 0x1000);
	tnt(&seed_ptw, "ttn");
	tip(&seed_ptw, 0x9000);
	ptw4(&seed_ptw, 0x5678, 0);
	tip(&seed_ptw, 0x1000);
	tnt(&seed_ptw, "ttn");
	pgd(&seed_ptw, 0);

	static struct run_copy want[4096];
	static struct ptrec_pt_flow_run got[8];
	uint64_t x = 0x2545f4914f6cdd1dull;
	unsigned same = 0, compared = 0, fast = 0;
	for (int iter = 0; iter < 3000; iter++) {
		struct tb t = iter < 16 ? seed_ptw : seed; /* seed_ptw unchanged, every batch size */
		unsigned nmut = iter < 16 ? 0 : 1 + (unsigned)(x % 3);
		for (unsigned m = 0; m < nmut; m++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			size_t at = (size_t)(x % t.n);
			if ((x >> 32) & 1)
				t.b[at] ^= (uint8_t)(1u << ((x >> 40) % 8));
			else
				t.b[at] = (uint8_t)(x >> 48);
		}
		struct ptrec_pt_flow_config cfg = {t.b, t.n, image, (unsigned)(iter & 7), {0}};
		struct ptrec_pt_flow *f = ptrec_pt_flow_new(&cfg);
		size_t nwant = 0;
		while (nwant < 4096 && ptrec_pt_flow_next_run(f, &want[nwant].r) > 0) {
			struct run_copy *c = &want[nwant++];
			if (c->r.ninsn) /* len may be NULL then */
				memcpy(c->len, c->r.len, c->r.ninsn < 64 ? c->r.ninsn : 64);
		}
		ptrec_pt_flow_free(f);
		if (nwant == 4096)
			continue; /* a runaway mutation: not compared */

		f = ptrec_pt_flow_new(&cfg);
		size_t bs = 1 + (size_t)iter % 8, ngot = 0;
		int e, ok = 1;
		while (ok && (e = ptrec_pt_flow_next_runs(f, got, bs)) > 0) {
			for (int k = 0; k < e && ok; k++, ngot++)
				ok = ngot < nwant && same_run(&want[ngot], &got[k]);
		}
		ok = ok && ngot == nwant;
		compared++;
		if (!ok)
			printf("batch of %zu differs from single runs at run %zu (iteration %d)\n", bs,
			       ngot, iter);
		fast += ptrec_pt_flow_stats(f)->block_hits > 0;
		ptrec_pt_flow_free(f);

		/* Both forms on one decoder, alternating, give the same runs too. */
		f = ptrec_pt_flow_new(&cfg);
		ngot = 0;
		for (int k = 0; ok; k++) {
			e = (k & 1) ? ptrec_pt_flow_next_runs(f, got, bs) : ptrec_pt_flow_next_run(f, got);
			if (e <= 0)
				break;
			for (int j = 0; j < e && ok; j++, ngot++)
				ok = ngot < nwant && same_run(&want[ngot], &got[j]);
		}
		ok = ok && ngot == nwant;
		if (!ok)
			printf("alternating calls differ from single runs at run %zu (iteration %d)\n",
			       ngot, iter);
		ptrec_pt_flow_free(f);
		same += ok;
	}
	CHECK_EQ_U64(same, compared);
	CHECK(compared > 2900);
	CHECK(fast > 1000); /* the cached paths did run */
}

/* ---- SDM rules added with tail-first decoding ------------------------------------------- */

/* PSB+ of a trace that restates the IP. */
static void psb_at(struct tb *t, uint64_t ip)
{
	psb(t);
	mode_exec(t, 1, 0);
	fup(t, ip);
	psbend(t);
}

static void test_psb_return_stack(void)
{
	struct tb t;
	/* "A RET is compressed only if its CALL came after the last PSB": the decoder empties its
	 * return stack where execution reaches a PSB, so a compressed return to a call made
	 * before it is an error (gap), and the return is not reported. */
	start(&t, 0x2000);
	psb_at(&t, 0x2010);
	tnt(&t, "t");
	CHECK_STR(listing(&t, 0), "2000 2010 [gap]");
	/* Without the PSB the same return is compressed. */
	start(&t, 0x2000);
	tnt(&t, "tt");
	tip(&t, 0x4100);
	pgd(&t, 0);
	CHECK_STR(listing(&t, 0), "2000 2010 2011 2005 2010 2011 200a 4100 4101 [disabled]");
}

static void test_power_events(void)
{
	struct tb t;
	/* "PWRE, MWAIT, EXSTOP and PWRX report power events; they do not change the instruction
	 * flow.  An EXSTOP with IP=1 is followed by a FUP with the IP where execution stopped",
	 * which binds no event. */
	start(&t, 0x1000);
	pwre(&t);
	mwait(&t);
	tnt(&t, "t");
	exstop(&t, 1);
	fup(&t, 0x1002);
	pwrx(&t);
	tnt(&t, "tn");
	exstop(&t, 0);
	pgd(&t, 0);
	CHECK_STR(listing(&t, 0), "1000 1002 1004 1007 1002 1004 1007 1002 1004 1007 1009 [disabled]");
	/* Around TIP.PGD/TIP.PGE: tracing off in the C-state, on again at the wake-up IP. */
	start(&t, 0x1000);
	tnt(&t, "ttn");
	pgd(&t, 0);
	pwre(&t);
	exstop(&t, 0);
	pwrx(&t);
	pge(&t, 0x4100);
	pgd(&t, 0);
	CHECK_STR(listing(&t, 0), "1000 1002 1004 1007 1002 1004 1007 1002 1004 1007 1009 "
	          "[disabled] [enabled] 4100 4101 [disabled]");
}

static void test_trig_and_cr3(void)
{
	struct tb t;
	/* "A TRIG with IP=1 is followed by a FUP with the IP of the triggering instruction": the
	 * FUP belongs to the TRIG, not to an asynchronous event. */
	start(&t, 0x1000);
	tnt(&t, "t");
	trig(&t, 1);
	fup(&t, 0x1002);
	trig(&t, 0);
	tnt(&t, "tn");
	pgd(&t, 0);
	CHECK_STR(listing(&t, 0), "1000 1002 1004 1007 1002 1004 1007 1002 1004 1007 1009 [disabled]");
	/* "ICNT: the number of instructions retired from the last IP packet (or the previous
	 * TRIG) to the trigger": the trigger comes before the instruction ICNT on, also inside
	 * a block; ICNT 0 is right where the previous one fired. */
	start(&t, 0x7000);
	trig_icnt(&t, 0xa1, 2);
	trig_icnt(&t, 0xa2, 0);
	tip(&t, 0x7100);
	trig_icnt(&t, 0xa3, 0);
	pgd(&t, 0);
	CHECK_STR(events(&t, 0), "7000 7001 [trig a1@7002] [trig a2@7002] 7002 7003 "
	                         "[trig a3@7100] 7100 [disabled]");
	/* ICNT counts from the last branch the packets report, a conditional branch (TNT bit)
	 * as well as a TIP: the trigger comes ICNT instructions after the JNE that took the
	 * TNT's last bit, not after the PSB+ FUP. */
	start(&t, 0x1000);
	tnt(&t, "t");
	trig_icnt(&t, 0xa1, 1);
	tnt(&t, "n");
	trig_icnt(&t, 0xa2, 0);
	fup(&t, 0x1009);
	pgd(&t, 0);
	CHECK_STR(events(&t, 0), "1000 1002 1004 1007 1002 [trig a1@1004] 1004 1007 "
	                         "[trig a2@1009] [disabled]");
	/* One whose instruction the flow never gets to (tracing went off first) still comes,
	 * when tracing goes off. */
	start(&t, 0x7000);
	trig_icnt(&t, 0xa4, 3);
	fup(&t, 0x7001);
	pgd(&t, 0);
	CHECK_STR(events(&t, 0), "7000 [disabled] [trig a4@7003]");
	/* TIP.PGD without IP, then a CR3 change (PIP) while tracing is off, then TIP.PGE: the
	 * new context starts at the TIP.PGE's IP. */
	start(&t, 0x4100);
	pgd(&t, 0);
	pip(&t, 0x12345000);
	pge(&t, 0x4100);
	pgd(&t, 0);
	CHECK_STR(listing(&t, 0), "4100 4101 [disabled] [enabled] 4100 4101 [disabled]");
}

static void test_iflag(void)
{
	struct tb t;
	/* Event trace: "a change of RFLAGS.IF by STI, CLI or POPF gives a MODE.Exec with the new
	 * IF followed by a FUP with the IP where the change took effect": that FUP is bound to
	 * the MODE.Exec (no asynchronous event starts there) and the flow goes on; a FUP+TIP.PGD
	 * after it is still an asynchronous disable. */
	start(&t, 0x7000);
	mode_exec_if(&t, 1);
	fup(&t, 0x7001);
	mode_exec_if(&t, 0);
	fup(&t, 0x7002);
	fup(&t, 0x7002);
	pgd(&t, 0);
	CHECK_STR(listing(&t, 0), "7000 7001 [disabled]");
	CHECK_STR(events(&t, 0), "7000 [if 1@7001] 7001 [if 0@7002] [disabled]");
	/* With event trace (IA32_RTIT_CTL.EventEn) the IF bit of every MODE.Exec is meaningful:
	 * where one first gives it (tracing enabled with no MODE.Exec in PSB+, or after an OVF),
	 * the state is reported, as ptxed --event:iflags does (ptet-mode_exec-if).  Without event
	 * trace IF is 0 in every MODE.Exec and says nothing. */
	t.n = 0;
	psb(&t);
	psbend(&t);
	mode_exec(&t, 1, 0);
	pge(&t, 0x7000);
	mode_exec_if(&t, 1);
	fup(&t, 0x7001);
	mode_exec_if(&t, 0);
	fup(&t, 0x7002);
	fup(&t, 0x7002);
	pgd(&t, 0);
	events_event_trace = 1;
	CHECK_STR(events(&t, 0), "[enabled] [exec 2] [if 0@0] 7000 [if 1@7001] 7001 [if 0@7002] "
	          "[disabled]");
	ovf(&t);
	mode_exec_if(&t, 1);
	fup(&t, 0x7000);
	pgd(&t, 0);
	CHECK_STR(events(&t, 0), "[enabled] [exec 2] [if 0@0] 7000 [if 1@7001] 7001 [if 0@7002] "
	          "[disabled] [overflow] [if 1@7000] 7000 7001 7002 7003 [disabled]");
	events_event_trace = 0; /* (IF reported where it changes only) */
	CHECK_STR(events(&t, 0), "[enabled] [exec 2] 7000 [if 1@7001] 7001 [if 0@7002] [disabled] "
	          "[overflow] [if 1@7000] 7000 7001 7002 7003 [disabled]");
	/* A MODE.Exec that does not change IF before a far branch's TIP is the next TIP's mode. */
	start(&t, 0x7000);
	mode_exec(&t, 1, 0);
	tip(&t, 0x7100);
	pgd(&t, 0);
	CHECK_STR(listing(&t, 0), "7000 7001 7002 7003 7100 [disabled]");
}

/* The trace offset of the first GAP (where the error is reported), ~0 without one. */
static uint64_t first_gap_offset(const struct tb *t)
{
	struct ptrec_pt_flow_config cfg = {t->b, t->n, image, 0, {0}};
	struct ptrec_pt_flow *f = ptrec_pt_flow_new(&cfg);
	struct ptrec_pt_flow_run run;
	uint64_t off = ~0ull;
	while (off == ~0ull && ptrec_pt_flow_next_run(f, &run) > 0)
		if (run.ev.kind == PTREC_BR_GAP)
			off = run.offset;
	ptrec_pt_flow_free(f);
	return off;
}

/* Where an error is reported.  The SDM defines no decoder position; ptxed prints libipt's
 * (pt_insn_get_offset(3): "the decoder's current position"), the packet its decoder is at
 * with the next item read ahead, and so does libptrec: the packet that completes that item,
 * by the SDM's compound packets (Table "Compound Packet Event Summary").  In each case below
 * the flow fails at 0xdead0000 (no code there) with the next item read ahead. */
static void test_error_offsets(void)
{
	struct tb t;
	size_t off;

	/* "Unconditional uncompressed control-flow transfer: Beginning FUP or none ... End TIP
	 * or TIP.PGD": a FUP + TIP pair is complete at its TIP. */
	start(&t, 0x4100);
	tip(&t, 0xdead0000);
	fup(&t, 0x7000);
	off = t.n;
	tip(&t, 0x7100);
	pgd(&t, 0);
	CHECK_EQ_U64(first_gap_offset(&t), off);
	/* A TIP alone: at that TIP. */
	start(&t, 0x4100);
	tip(&t, 0xdead0000);
	off = t.n;
	tip(&t, 0x7100);
	CHECK_EQ_U64(first_gap_offset(&t), off);
	/* 36.4.2.6: "In TSX cases, the FUP is immediately preceded by a MODE.TSX, which binds to
	 * the same IP": a TSX abort (MODE.TSX + FUP) is an item of its own, complete at its FUP,
	 * before the FUP + TIP that takes execution to the abort handler. */
	start(&t, 0x4100);
	tip(&t, 0xdead0000);
	mode_tsx(&t, 0, 1);
	off = t.n;
	fup(&t, 0x7000);
	tip(&t, 0x7100);
	CHECK_EQ_U64(first_gap_offset(&t), off);
	/* 36.4.2.17 (PSB): "the decoder should interpret all following packets as 'status only',
	 * until either a PSBEND or OVF packet is encountered": a PSB+ is complete at its PSBEND. */
	start(&t, 0x4100);
	tip(&t, 0xdead0000);
	psb(&t);
	mode_exec(&t, 1, 0);
	fup(&t, 0x7000);
	off = t.n;
	psbend(&t);
	pgd(&t, 0);
	CHECK_EQ_U64(first_gap_offset(&t), off);
	/* A bad status update is found in PSB+ itself: at the MODE.Exec that says another mode
	 * (36.3.7, PSB+ packets "inform the decoder of the state of the processor at the time of
	 * the PSB"; 0x5000 is `jmp rax`, waiting for a TIP, when PSB+ says 32-bit). */
	start(&t, 0x4100);
	tip(&t, 0x5000);
	psb(&t);
	off = t.n;
	mode_exec(&t, 0, 1);
	fup(&t, 0x5000);
	psbend(&t);
	pgd(&t, 0);
	CHECK_EQ_U64(first_gap_offset(&t), off);
	/* A TNT packet and a TIP.PGD that carries no MODE.Exec are used up once read: past
	 * them (and the PADs after them; at the end of the trace, its size). */
	start(&t, 0x4100);
	tip(&t, 0xdead0000);
	tnt(&t, "tn");
	off = t.n;
	tip(&t, 0x7100);
	CHECK_EQ_U64(first_gap_offset(&t), off);
	start(&t, 0x4100);
	tip(&t, 0xdead0000);
	pgd(&t, 0);
	pad(&t);
	off = t.n;
	pge(&t, 0x7000);
	CHECK_EQ_U64(first_gap_offset(&t), off);
	start(&t, 0x4100);
	tip(&t, 0xdead0000);
	pgd(&t, 0);
	CHECK_EQ_U64(first_gap_offset(&t), t.n);
}

/* A 32-bit trace (MODE.Exec CS.L=0, CS.D=1: 0x5000 is `dec eax; jmp eax`, two instructions)
 * whose packets stop fitting the state early on: an OVF that no FUP or TIP.PGE follows says
 * tracing was off when the overflow resolved (SDM Table "Compound Packet Event Summary",
 * Overflow: "FUP if overflow resolves while ContextEn=1, else TIP.PGE"), yet a TNT comes, and
 * TNT and TIP are sent only while tracing (36.4.2.1, 36.4.2.2: "Dependencies: PacketEn").
 * libipt reports "unexpected packet context" and resyncs at the next PSB.  Tracing was on,
 * so the packets after it are in step and decoding resumes where one of them says where
 * execution is for sure: not at the TIP after the TNT (36.4.2.3, "Any number of TIP packets
 * may be accumulated this way, such that only once the TNT is filled, or once another packet
 * (e.g., FUP) is generated, the TNT will be sent, followed by all the deferred TIP packets":
 * the TNT's bits may be those of the branches after that TIP's target), at the FUP + TIP. */
static void test_context_error_32bit(void)
{
	struct tb t;
	char want[256];
	size_t ctx, fup_off;

	start32(&t, 0x5000);
	tip(&t, 0x7000);
	ovf(&t);
	ctx = t.n;
	tnt(&t, "tt");
	tip(&t, 0x8000);
	tnt(&t, "n");
	tip(&t, 0x7100);
	fup_off = t.n;
	fup(&t, 0x7100);
	tip(&t, 0x5000);
	pgd(&t, 0);
	CHECK(ctx < 0x50); /* early, like the real trace's error at 0x50 */
	snprintf(want, sizeof(want), "5000 5001 [overflow] [gap] [resync 5000@%zx+%zu] "
	         "[interrupt] 5000 5001 [disabled]", fup_off, fup_off - ctx);
	CHECK_STR(events(&t, 0), want);
	{
		struct ptrec_pt_flow_config cfg = {t.b, t.n, image, 0, {0}};
		struct ptrec_pt_flow *f = ptrec_pt_flow_new(&cfg);
		struct ptrec_pt_flow_run run;
		const char *why = NULL;
		uint64_t at = 0;
		while (!why && ptrec_pt_flow_next_run(f, &run) > 0)
			if (run.ev.kind == PTREC_BR_GAP) {
				why = run.why;
				at = run.offset;
			}
		CHECK(why && !strncmp(why, "unexpected packet context", 25));
		CHECK_EQ_U64(at, ctx);
		ptrec_pt_flow_free(f);
	}
	/* A TIP as the first packet out of context: nothing was dropped before it, so it is
	 * where execution went (libipt's SKD010 recovery resumes there too). */
	start32(&t, 0x5000);
	tip(&t, 0x7000);
	ovf(&t);
	ctx = t.n;
	tip(&t, 0x5000);
	pgd(&t, 0);
	snprintf(want, sizeof(want), "5000 5001 [overflow] [gap] [resync 5000@%zx+0] "
	         "5000 5001 [disabled]", ctx);
	CHECK_STR(events(&t, 0), want);
	/* After a TIP.PGD the same. */
	start32(&t, 0x5000);
	pgd(&t, 0);
	ctx = t.n;
	tnt(&t, "t");
	tip(&t, 0x7000);
	fup_off = t.n;
	fup(&t, 0x7003);
	pgd(&t, 0);
	snprintf(want, sizeof(want), "5000 5001 [disabled] [gap] [resync 0@%zx+%zu] [disabled]", fup_off,
	         fup_off - ctx);
	CHECK_STR(events(&t, 0), want);
}

/* Recovery after an error of the flow (issue 30): the packets are still in step, so decoding
 * resumes at the next packet that says where execution is, and what that packet says is kept.
 * The SDM sentences are from Vol. 3C, chapter "Intel Processor Trace" (36.x in the edition
 * cited). */
static void test_resync_rules(void)
{
	struct tb t;
	char want[256];
	size_t off, off2;

	/* Where the gap ended and how many trace bytes lay unused in between: the TNT packet read
	 * after the error belongs to unknown code ("[resync IP@OFFSET+BYTES]").  The TIP after
	 * it is no resume point (SDM 36.4.2.3, deferred TIPs: "only once the TNT is filled, or
	 * once another packet (e.g., FUP) is generated, the TNT will be sent, followed by all the
	 * deferred TIP packets"; the dropped bits may be those after its target); the FUP is. */
	start(&t, 0x4100);
	tip(&t, 0xdead0000);
	tnt(&t, "tt");
	off = t.n;
	tnt(&t, "tn");
	tip(&t, 0x5100);
	off2 = t.n;
	fup(&t, 0x5100);
	tip(&t, 0x7000);
	pgd(&t, 0);
	snprintf(want, sizeof(want), "4100 4101 [gap] [resync 7000@%zx+%zu] [interrupt] 7000 7001 7002 "
	         "7003 [disabled]", off2, off2 - off);
	CHECK_STR(events(&t, 0), want);
	{
		struct ptrec_pt_flow_config cfg = {t.b, t.n, image, 0, {0}};
		struct ptrec_pt_flow_counts c;
		struct ptrec_pt_flow *f = ptrec_pt_flow_new(&cfg);
		memset(&c, 0, sizeof(c)); /* ptrec_pt_flow_count adds to it */
		CHECK_EQ_U64(ptrec_pt_flow_count(f, &c), 0);
		CHECK_EQ_U64(ptrec_pt_flow_stats(f)->skipped, off2 - off); /* --stat skipped-bytes */
		CHECK_EQ_U64(c.kind[PTREC_BR_GAP], 1);
		ptrec_pt_flow_free(f);
	}
	/* In the ring of the crash reports the GAP says where decoding went on (its `to`) and
	 * the bytes skipped (reserved). */
	{
		struct ptrec_branch slots[8];
		struct branch_ring ring;
		CHECK(ptrec_branch_ring_init(&ring, slots, 8) == 0);
		CHECK(ptrec_pt_flow_decode_last(t.b, t.n, image, NULL, &ring, NULL) == 1);
		const struct ptrec_branch *g = ptrec_branch_ring_newest(&ring, 2);
		CHECK_EQ_U64(g->kind, PTREC_BR_GAP);
		CHECK_EQ_U64(g->from, 0xdead0000);
		CHECK_EQ_U64(g->to, 0x7000);
		CHECK_EQ_U64(g->reserved, off2 - off);
	}

	/* SDM 36.4.2.6: "In TSX cases, the FUP is immediately preceded by a MODE.TSX, which binds
	 * to the same IP": after an error a MODE.TSX + FUP gives where execution is, and the
	 * transaction begins there (what follows is speculative). */
	start(&t, 0x4100);
	tip(&t, 0xdead0000);
	off = t.n;
	mode_tsx(&t, 1, 0);
	off2 = t.n;
	fup(&t, 0x7000);
	pgd(&t, 0);
	snprintf(want, sizeof(want), "4100 4101 [gap] [resync 7000@%zx+0] [begin@7000] ?7000 ?7001 ?7002 ?7003 "
	         "[disabled]", off2);
	CHECK_STR(events(&t, 0), want);
	(void)off;

	/* SDM 36.4.2.21 (PTW): "The IP of the PTWRITE will be provided by a following FUP, when
	 * PTW.IP=1": after an error that FUP is where execution is; the payload is what the
	 * PTWRITE there wrote, so it comes right after that instruction. */
	start(&t, 0x4100);
	tip(&t, 0xdead0000);
	ptw4(&t, 0xabcd, 1);
	off = t.n;
	fup(&t, 0x9000);
	pgd(&t, 0);
	snprintf(want, sizeof(want), "4100 4101 [gap] [resync 9000@%zx+0] 9000 [ptw abcd@9000] 9004 [disabled]",
	         off);
	CHECK_STR(events(&t, 0), want);

	/* A PTW whose FUP gives an IP without code: decoding resumes there once, fails again,
	 * and the payload is delivered (never the same resync point over and over). */
	start(&t, 0x4100);
	tip(&t, 0xdead0000);
	ptw4(&t, 0xabcd, 1);
	off = t.n;
	fup(&t, 0xbeef000);
	off2 = t.n;
	pgd(&t, 0);
	snprintf(want, sizeof(want), "4100 4101 [gap] [resync beef000@%zx+0] [gap] [ptw abcd@beef000] "
	         "[resync 0@%zx+0] [disabled]", off, off2);
	CHECK_STR(events(&t, 0), want);

	/* SDM 36.4.2.4 (TIP.PGE): "Indicates that PacketEn has transitioned to 1": a TIP.PGE
	 * after an error says tracing was off somewhere in the gap. */
	start(&t, 0x4100);
	tip(&t, 0xdead0000);
	tnt(&t, "t"); /* (so that the flow gets to the TIP's target before the TIP.PGE) */
	off = t.n;
	pge(&t, 0x7000);
	pgd(&t, 0);
	snprintf(want, sizeof(want), "4100 4101 [gap] [resync 7000@%zx+0] [disabled] [enabled] 7000 7001 7002 "
	         "7003 [disabled]", off);
	CHECK_STR(events(&t, 0), want);

	/* SDM 36.3.7 (PSB+): the status-only packets "inform the decoder of the state of the
	 * processor at the time of the PSB"; 36.4.2.8: MODE.Exec "is generated along with other
	 * packets that result from the far transfer operation that changes the mode".  A PSB+
	 * whose mode is not the flow's (no MODE.Exec said so) means the decode went wrong before
	 * it: a gap ("bad status update"), and decoding goes on from the state PSB+ gives.
	 * 0x5000 is `jmp rax` in 64-bit code, `dec eax; jmp eax` in 32-bit code. */
	start(&t, 0x4100);
	tip(&t, 0x5000);
	off = t.n;
	psb(&t);
	mode_exec(&t, 0, 1);
	fup(&t, 0x5000);
	psbend(&t);
	pgd(&t, 0);
	snprintf(want, sizeof(want), "4100 4101 [gap] [resync 5000@%zx+0] 5000 5001 [disabled]", off);
	CHECK_STR(events(&t, 0), want);
	{
		struct ptrec_pt_flow_config cfg = {t.b, t.n, image, 0, {0}};
		struct ptrec_pt_flow *f = ptrec_pt_flow_new(&cfg);
		struct ptrec_pt_flow_run run;
		const char *why = NULL;
		while (ptrec_pt_flow_next_run(f, &run) > 0)
			if (run.ev.kind == PTREC_BR_GAP)
				why = run.why;
		CHECK_STR(why ? why : "(none)", "bad status update");
		ptrec_pt_flow_free(f);
	}
	/* The same PSB+ with the flow's own mode is the ordinary refresh. */
	start(&t, 0x4100);
	tip(&t, 0x5000);
	psb(&t);
	mode_exec(&t, 1, 0);
	fup(&t, 0x5000);
	psbend(&t);
	pgd(&t, 0);
	CHECK_STR(events(&t, 0), "4100 4101 5000 [disabled]");

	/* SDM 36.4.2.8: MODE.Exec is generated for a "far branch, interrupt, exception, ... if
	 * the mode changes. PSB+, and any scenario that can generate a TIP.PGE, such that the mode
	 * may have changed since the last MODE.Exec".  One that changes nothing known is not
	 * reported; after an OVF the mode is not known, so the next one is. */
	start(&t, 0x7000);
	mode_exec(&t, 1, 0);
	tip(&t, 0x7000);
	ovf(&t);
	mode_exec(&t, 1, 0);
	pge(&t, 0x7000);
	pgd(&t, 0);
	CHECK_STR(events(&t, 0), "7000 7001 7002 7003 [overflow] [enabled] [exec 2] 7000 7001 7002 7003 "
	          "[disabled]");
	/* The asynchronous events' packets are "FUP(NLIP), PIP?, MODE.Exec?, TIP" (SDM table of
	 * packets per event): their MODE.Exec comes after the FUP.  A MODE.Exec right before a FUP
	 * is event trace's (STI/CLI/POPF): bound to that FUP even when it changes nothing, so the
	 * FUP + TIP.PGD after it is not an asynchronous disable at 7001. */
	start(&t, 0x7000);
	mode_exec(&t, 1, 0);
	fup(&t, 0x7001);
	pgd(&t, 0);
	CHECK_STR(events(&t, 0), "7000 7001 7002 7003 [disabled]");
	/* One that changes the mode is not event trace's: after an OVF it gives the mode where
	 * the FUP resumes (0x5000 in 32-bit code: dec eax; jmp eax). */
	start(&t, 0x7000);
	ovf(&t);
	mode_exec(&t, 0, 1);
	fup(&t, 0x5000);
	pgd(&t, 0);
	CHECK_STR(events(&t, 0), "[overflow] 5000 5001 [disabled]");
}

static void test_end_of_stream(void)
{
	struct tb t;
	/* "Instructions after the last packet are not proven by the trace": once the last TNT bit
	 * is used the flow stops right after the branch it decided, and says where. */
	start(&t, 0x1000);
	tnt(&t, "ttn");
	CHECK_STR(events(&t, 0), "1000 1002 1004 1007 1002 1004 1007 1002 1004 1007 [end@1009]");
	/* Bits left over when the trace ends are not used for code that was not reached... */
	start(&t, 0x1000);
	tnt(&t, "ttnt");
	CHECK_STR(events(&t, 0), "1000 1002 1004 1007 1002 1004 1007 1002 1004 1007 [end@1009]");
	/* ... and a TIP as the last packet ends the flow at its target, before any instruction
	 * there. */
	start(&t, 0x4100);
	tip(&t, 0x7000);
	CHECK_STR(events(&t, 0), "4100 4101 [end@7000]");
	/* FUP + TIP (an interrupt) as the last packets: the handler's first instruction is not
	 * claimed. */
	start(&t, 0x7000);
	fup(&t, 0x7002);
	tip(&t, 0x4100);
	CHECK_STR(events(&t, 0), "7000 7001 [interrupt] [end@4100]");
	/* PSB+ with a FUP and nothing after it: not even the instruction at the FUP's IP. */
	start(&t, 0x1000);
	CHECK_STR(events(&t, 0), "[end@1000]");
	/* Tracing off when the trace ends: nothing to say. */
	start(&t, 0x4100);
	pgd(&t, 0);
	CHECK_STR(events(&t, 0), "4100 4101 [disabled]");
	/* A trace cut inside its last packet proves that execution went on to that packet: the
	 * flow goes on to the first instruction that needs it (not reported). */
	start(&t, 0x1000);
	tnt(&t, "t");
	tip(&t, 0x7000);
	t.n -= 2;
	CHECK_STR(events(&t, 0), "1000 1002 1004 1007 1002 1004 [end@1007]");
}

static void test_mov_cr3(void)
{
	struct tb t;
	/* "PIP is generated on MOV CR3": the PIP binds right after that instruction, not at the
	 * next far branch. */
	start(&t, 0xc000);
	pip(&t, 0xa000);
	fup(&t, 0xc004);
	pgd(&t, 0);
	CHECK_STR(events(&t, 0), "c000 [cr3 a000] c003 [disabled]");
	/* Two PIPs, two MOV CR3s: one each, in order. */
	start(&t, 0xc000);
	pip(&t, 0xa000);
	tip(&t, 0xc000);
	pip(&t, 0xb000);
	fup(&t, 0xc004);
	pgd(&t, 0);
	CHECK_STR(events(&t, 0), "c000 [cr3 a000] c003 c004 c000 [cr3 b000] c003 [disabled]");
	/* A MOV CR3 that leaves the CR3 filter: TIP.PGD without IP disables after it. */
	start(&t, 0xc000);
	pgd(&t, 0);
	CHECK_STR(events(&t, 0), "c000 [disabled]");
	/* A PIP still waiting for its MOV CR3 when the packets end proves that execution went on
	 * to it: the flow goes on. */
	start(&t, 0xc000);
	pip(&t, 0xa000);
	pip(&t, 0xb000);
	CHECK_STR(events(&t, 0), "c000 [cr3 a000] c003 [end@c004]");
}

/* ---- status events (conformance with libipt's .ptt suite, doc/conformance.md) ----------- */

static void mnt(struct tb *t, uint64_t v) { put(t, 0x02); put(t, 0xc3); put(t, 0x88); put_le(t, v, 8); }
static void vmcs(struct tb *t, uint64_t p) { put(t, 0x02); put(t, 0xc8); put_le(t, p >> 12, 5); }

/* Decodes t into instructions ("?" in front when speculative), events and status items. */
static const char *events(const struct tb *t, unsigned errata)
{
	static char out[16384];
	char s[96];
	out[0] = 0;
	struct ptrec_pt_flow_config cfg = {t->b, t->n, image, errata, {0}};
	struct ptrec_pt_flow *f = ptrec_pt_flow_new(&cfg);
	struct ptrec_pt_flow_run run;
	int guard = 0;
	ptrec_pt_flow_set_event_trace(f, events_event_trace);
	while (ptrec_pt_flow_next_run(f, &run) > 0 && guard++ < 10000) {
		uint64_t ip = run.ip;
		for (uint32_t i = 0; i < run.ninsn; i++) {
			snprintf(s, sizeof(s), "%s%" PRIx64,
			         (run.flags & PT_FLOW_RUN_SPECULATIVE) ? "?" : "", ip);
			append(out, sizeof(out), s);
			ip += run.len[i];
		}
		s[0] = 0;
		switch (run.aux) {
		case PT_FLOW_AUX_EXEC_MODE:
			if (run.aux_ip)
				snprintf(s, sizeof(s), "[exec %" PRIu64 "@%" PRIx64 "]", run.aux_payload,
				         run.aux_ip);
			else
				snprintf(s, sizeof(s), "[exec %" PRIu64 "]", run.aux_payload);
			break;
		case PT_FLOW_AUX_PAGING: snprintf(s, sizeof(s), "[cr3 %" PRIx64 "]", run.aux_payload); break;
		case PT_FLOW_AUX_VMCS: snprintf(s, sizeof(s), "[vmcs %" PRIx64 "]", run.aux_payload); break;
		case PT_FLOW_AUX_MNT: snprintf(s, sizeof(s), "[mnt %" PRIx64 "]", run.aux_payload); break;
		case PT_FLOW_AUX_CBR: snprintf(s, sizeof(s), "[cbr %" PRIx64 "]", run.aux_payload); break;
		case PT_FLOW_AUX_IFLAGS:
			snprintf(s, sizeof(s), "[if %" PRIu64 "@%" PRIx64 "]", run.aux_payload, run.aux_ip);
			break;
		case PT_FLOW_AUX_TRIG:
			snprintf(s, sizeof(s), "[trig %" PRIx64 "@%" PRIx64 "]", run.aux_payload, run.aux_ip);
			break;
		case PT_FLOW_AUX_CFE: /* type/vector@ip */
			snprintf(s, sizeof(s), "[cfe %" PRIu64 "/%" PRIu64 "@%" PRIx64 "]", run.aux_payload,
			         run.aux_arg, run.aux_ip);
			break;
		case PT_FLOW_AUX_EVD: /* type:value */
			snprintf(s, sizeof(s), "[evd %" PRIu64 ":%" PRIx64 "]", run.aux_arg, run.aux_payload);
			break;
		case PT_FLOW_AUX_PWRE: snprintf(s, sizeof(s), "[pwre]"); break;
		case PT_FLOW_AUX_PWRX: snprintf(s, sizeof(s), "[pwrx]"); break;
		case PT_FLOW_AUX_MWAIT: snprintf(s, sizeof(s), "[mwait@%" PRIx64 "]", run.aux_ip); break;
		case PT_FLOW_AUX_EXSTOP: snprintf(s, sizeof(s), "[exstop@%" PRIx64 "]", run.aux_ip); break;
		case PT_FLOW_AUX_STOP: snprintf(s, sizeof(s), "[stop]"); break;
		case PT_FLOW_AUX_END: snprintf(s, sizeof(s), "[end@%" PRIx64 "]", run.aux_ip); break;
		case PT_FLOW_AUX_RESYNC: /* where, at which packet, bytes between */
			snprintf(s, sizeof(s), "[resync %" PRIx64 "@%" PRIx64 "+%" PRIu64 "]", run.aux_ip,
			         run.aux_payload, run.aux_arg);
			break;
		case PT_FLOW_AUX_PTW:
			snprintf(s, sizeof(s), "[ptw %" PRIx64 "@%" PRIx64 "]", run.aux_payload, run.aux_ip);
			break;
		case PT_FLOW_AUX_TSX:
			if (run.aux_payload == 2 && !run.aux_ip)
				snprintf(s, sizeof(s), "[abort-off]");
			else if (run.aux_payload == 2)
				snprintf(s, sizeof(s), "[abort@%" PRIx64 "]", run.aux_ip);
			else
				snprintf(s, sizeof(s), "[%s@%" PRIx64 "]", run.aux_payload ? "begin" : "commit",
				         run.aux_ip);
			break;
		default:
			switch (run.ev.kind) {
			case PTREC_BR_ENABLE:
				snprintf(s, sizeof(s), (run.flags & PT_FLOW_RUN_RESUMED) ? "[resumed]"
				                                                         : "[enabled]");
				break;
			case PTREC_BR_DISABLE: snprintf(s, sizeof(s), "[disabled]"); break;
			case PTREC_BR_OVERFLOW: snprintf(s, sizeof(s), "[overflow]"); break;
			case PTREC_BR_GAP: snprintf(s, sizeof(s), "[gap]"); break;
			case PTREC_BR_INTERRUPT: snprintf(s, sizeof(s), "[interrupt]"); break;
			case PTREC_BR_TSX_ABORT: snprintf(s, sizeof(s), "[abort]"); break;
			default: break;
			}
		}
		if (s[0])
			append(out, sizeof(out), s);
	}
	ptrec_pt_flow_free(f);
	return out;
}

static void test_status_events(void)
{
	struct tb t;
	/* "CBR is generated after any frequency change, on C-state wake up, PSB+, and after
	 * enabling packet generation": outside PSB+ it says the core:bus ratio changed, where it
	 * is read; inside PSB+ it only restates the ratio. */
	t.n = 0;
	psb(&t);
	mode_exec(&t, 1, 0);
	cbr(&t, 0x20);
	fup(&t, 0x7000);
	psbend(&t);
	cbr(&t, 0x18);
	tip(&t, 0x7100);
	pgd(&t, 0);
	CHECK_STR(events(&t, 0), "[cbr 18] 7000 7001 7002 7003 7100 [disabled]");
	/* After an overflow whose FUP resumes tracing, a CBR between them comes before the
	 * overflow is bound; after one that leaves tracing off, after it. */
	start(&t, 0x7000);
	ovf(&t);
	cbr(&t, 0xf);
	fup(&t, 0x7100);
	pgd(&t, 0);
	CHECK_STR(events(&t, 0), "[cbr f] [overflow] 7100 [disabled]");
	start(&t, 0x7000);
	ovf(&t);
	cbr(&t, 0xf);
	pge(&t, 0x7100);
	pgd(&t, 0);
	CHECK_STR(events(&t, 0), "[overflow] [cbr f] [enabled] 7100 [disabled]");
	/* "PIP ... is generated on a MOV CR3 or a far transfer (interrupt, exception, ...) that
	 * changes CR3": with tracing on it belongs to that transfer and is reported after it; the
	 * instruction at the FUP is not executed. */
	start(&t, 0x4100);
	fup(&t, 0x4101);
	pip(&t, 0x5000);
	tip(&t, 0x7100);
	pgd(&t, 0);
	CHECK_STR(events(&t, 0), "4100 [interrupt] [cr3 5000] 7100 [disabled]");
	/* PIP/VMCS without a FUP before them: "look for the next MOV CR3, far branch, or
	 * VMRESUME/VMLAUNCH in the program binary, and apply the new CR3 to the next
	 * instruction": bound to the VMLAUNCH, they come right after it, before the TIP.PGD that
	 * ends the compound event; with a FUP they apply at the TIP.PGD's IP, after the
	 * disable (VMCS first). */
	start(&t, 0xb100);
	pip(&t, 0x5000);
	vmcs(&t, 0xa000);
	pgd(&t, 0xb104);
	CHECK_STR(events(&t, 0), "b100 [cr3 5000] [vmcs a000] [disabled]");
	start(&t, 0x4100);
	fup(&t, 0x4101);
	pip(&t, 0x5000);
	vmcs(&t, 0xa000);
	pgd(&t, 0x7100);
	CHECK_STR(events(&t, 0), "4100 [disabled] [vmcs a000] [cr3 5000]");
	/* "An overflow ... packets are lost": a PIP/VMCS that an OVF follows before its MOV CR3,
	 * far branch or VMLAUNCH was reached describes a change made before the overflow (its
	 * packets came first); it is said before the `[overflow]`, not bound to the first such
	 * instruction after it. */
	start(&t, 0x4100);
	pip(&t, 0xa000);
	ovf(&t);
	fup(&t, 0xc000);
	pgd(&t, 0);
	CHECK_STR(events(&t, 0), "[cr3 a000] [overflow] c000 [disabled]");
	start(&t, 0x4000);
	pip(&t, 0x5000);
	vmcs(&t, 0xa000);
	ovf(&t);
	fup(&t, 0xb100);
	pgd(&t, 0);
	CHECK_STR(events(&t, 0), "[cr3 5000] [vmcs a000] [overflow] b100 [disabled]");
	/* An overflow that resolves with tracing off (TIP.PGE): the same. */
	start(&t, 0x4000);
	vmcs(&t, 0xa000);
	ovf(&t);
	pge(&t, 0x4100);
	pgd(&t, 0);
	CHECK_STR(events(&t, 0), "[vmcs a000] [overflow] [enabled] 4100 4101 [disabled]");
	/* "While ContextEn or FilterEn is 0 (tracing off) PIP and VMCS are still generated": they
	 * apply at once, before the TIP.PGE that turns tracing on. */
	start(&t, 0);
	vmcs(&t, 0xa000);
	pip(&t, 0xb000);
	pge(&t, 0x4100);
	pgd(&t, 0);
	CHECK_STR(events(&t, 0), "[vmcs a000] [cr3 b000] [enabled] 4100 4101 [disabled]");
	/* "A MODE.Exec packet precedes the TIP.PGE (or the TIP of a far transfer)": the new mode
	 * takes effect at that IP; within PSB+ it only restates the state. */
	start(&t, 0);
	mode_exec(&t, 0, 1);
	pge(&t, 0x4100);
	pgd(&t, 0);
	CHECK_STR(events(&t, 0), "[enabled] [exec 1] 4100 4101 [disabled]");
	/* "MNT and PWRE/PWRX stand alone; MWAIT and an EXSTOP with IP=1 are followed by a FUP
	 * whose IP is where execution stopped": those happen when the flow reaches that IP.  A
	 * PWRE between them is the C-state entry of that MWAIT: it comes after them, there. */
	start(&t, 0x7000);
	mnt(&t, 0xa000);
	mwait(&t);
	pwre(&t);
	exstop(&t, 1);
	fup(&t, 0x7002);
	pwrx(&t);
	pgd(&t, 0);
	CHECK_STR(events(&t, 0), "[mnt a000] 7000 7001 [mwait@7002] [exstop@7002] [pwre] [pwrx] "
	          "7002 7003 [disabled]");
	/* A PWRE with no MWAIT or EXSTOP waiting stands alone, where it is read. */
	start(&t, 0x7000);
	pwre(&t);
	fup(&t, 0x7002);
	pgd(&t, 0);
	CHECK_STR(events(&t, 0), "[pwre] 7000 7001 [disabled]");
	/* "An OVF loses the FUP that MWAIT and EXSTOP wait for": only where they happened is
	 * lost, so they are reported without IP, after the PWRE, before the overflow. */
	start(&t, 0);
	mwait(&t);
	pwre(&t);
	exstop(&t, 1);
	ovf(&t);
	CHECK_STR(events(&t, 0), "[pwre] [mwait@0] [exstop@0] [overflow]");
	/* A PWRE read just before an EXSTOP with IP=1 is the C-state entry of that stop: it
	 * comes after the EXSTOP, at its FUP's IP, also with no MWAIT; and while tracing is off
	 * (a FUP with no TIP.PGE) the order is the same. */
	start(&t, 0x7000);
	pwre(&t);
	exstop(&t, 1);
	fup(&t, 0x7001);
	pwrx(&t);
	fup(&t, 0x7002);
	pgd(&t, 0);
	CHECK_STR(events(&t, 0), "7000 [exstop@7001] [pwre] [pwrx] 7001 [disabled]");
	start(&t, 0);
	mwait(&t);
	pwre(&t);
	exstop(&t, 1);
	fup(&t, 0x7002);
	pwrx(&t);
	CHECK_STR(events(&t, 0), "[mwait@7002] [exstop@7002] [pwre] [pwrx]");
	/* SDM 36.4.2.24 (PWRE): "When transitioning from C0.0 to a deeper C-state, the PWRE
	 * packet will be followed by an EXSTOP": with IP=0 too (tracing off: no FUP), the PWRE
	 * is the C-state entry of that stop and comes right after it (libipt master's order). */
	start(&t, 0);
	mwait(&t);
	pwre(&t);
	exstop(&t, 0);
	pwrx(&t);
	CHECK_STR(events(&t, 0), "[mwait@0] [exstop@0] [pwre] [pwrx]");
	/* "The FUP after an EXSTOP with IP=1 gives the IP where execution stopped": an MWAIT with
	 * no such EXSTOP after it has no FUP of its own.  It is reported where it is read, with
	 * no IP (before a PWRE read after it; an OVF does not drop it), and does not take the IP
	 * of a later FUP that belongs to something else (here an asynchronous disable). */
	start(&t, 0);
	mwait(&t);
	pwre(&t);
	ovf(&t);
	CHECK_STR(events(&t, 0), "[mwait@0] [pwre] [overflow]");
	start(&t, 0x7000);
	mwait(&t);
	fup(&t, 0x7002);
	pgd(&t, 0);
	CHECK_STR(events(&t, 0), "[mwait@0] 7000 7001 [disabled]");
	/* "MODE.TSX with InTX=1 in PSB+ says execution is in a transaction": those instructions
	 * are speculative; a MODE.TSX commit binds to its FUP's IP, after which they are not. */
	t.n = 0;
	psb(&t);
	mode_exec(&t, 1, 0);
	mode_tsx(&t, 1, 0);
	fup(&t, 0x7000);
	psbend(&t);
	mode_tsx(&t, 0, 0);
	fup(&t, 0x7002);
	pgd(&t, 0);
	CHECK_STR(events(&t, 0), "?7000 ?7001 [commit@7002] 7002 7003 [disabled]");
	/* "MODE.TSX while tracing is off has no FUP": the transaction state holds from the next
	 * TIP.PGE on, so the instructions after it are speculative. */
	start(&t, 0);
	mode_tsx(&t, 1, 0);
	pge(&t, 0x4100);
	fup(&t, 0x4101);
	pgd(&t, 0);
	mode_tsx(&t, 0, 1);
	pge(&t, 0x4100);
	fup(&t, 0x4101);
	pgd(&t, 0);
	CHECK_STR(events(&t, 0), "[begin@0] [enabled] ?4100 [disabled] [abort-off] [enabled] 4100 "
	          "[disabled]");
	/* "TraceStop is generated after the TIP.PGD that stopped tracing". */
	start(&t, 0x4100);
	pgd(&t, 0);
	put(&t, 0x02);
	put(&t, 0x83);
	CHECK_STR(events(&t, 0), "4100 4101 [disabled] [stop]");
}

/* Event trace packets: CFE (02 13, IP << 7 | Type, Vector) and EVD (02 53, Type, 8 bytes). */
static void cfe(struct tb *t, unsigned type, unsigned vector, int ipbit)
{
	put(t, 0x02);
	put(t, 0x13);
	put(t, type | (ipbit ? 0x80u : 0));
	put(t, vector);
}
static void evd(struct tb *t, unsigned type, uint64_t v) { put(t, 0x02); put(t, 0x53); put(t, type); put_le(t, v, 8); }

/* Event trace (IA32_RTIT_CTL.EventEn).  SDM, "Event Trace": it "exposes details about the
 * asynchronous events, when they are generated, and when their corresponding software event
 * handler completes execution.  These include: Interrupts, including NMI and SMI, including
 * the interrupt vector when defined.  Faults, exceptions including the fault vector.  Page
 * faults additionally include the page fault address, when in context.  Event handler
 * returns, including IRET and RSM.  VM exits and VM entries.  VM exits include the values
 * written to the 'exit reason' and 'exit qualification' VMCS fields."  Each event is a CFE
 * packet, preceded by the EVD packets of its data; with its IP bit set a FUP follows that
 * gives the event's IP. */
static void test_event_trace(void)
{
	struct tb t;
	/* An interrupt: CFE(INTR, vector) before its FUP + TIP ("the FUP provides the source IP
	 * for an instruction or event, while a following TIP (or TIP.PGD) will provide any
	 * destination IP"): the page fault with its address (EVD CR2) at the FUP's IP, before
	 * the INTERRUPT; the instruction there did not complete. */
	start(&t, 0x4000);
	evd(&t, 0, 0xf00baa);
	cfe(&t, 1, 14, 0);
	fup(&t, 0x4002);
	tip(&t, 0x4100);
	fup(&t, 0x4100);
	pgd(&t, 0);
	CHECK_STR(events(&t, 0), "4000 4001 [evd 0:f00baa] [cfe 1/14@4002] [interrupt] [disabled]");
	/* The listing without the items is the one without event trace. */
	CHECK_STR(listing(&t, 0), "4000 4001 [interrupt 4002>4100] [disabled]");
	/* "Event handler returns, including IRET": CFE(IRET) binds to the branch that takes the
	 * TIP after it; it comes right after that IRET, before the PIP of the same far transfer.
	 * With IP=1 the FUP after the CFE gives the IRET's IP and starts no event of its own
	 * (its TIP is the IRET's). */
	start(&t, 0xd000);
	cfe(&t, 2, 0, 0);
	pip(&t, 0xa000);
	tip(&t, 0x4100);
	fup(&t, 0x4100);
	pgd(&t, 0);
	CHECK_STR(events(&t, 0), "d000 [cfe 2/0@0] [cr3 a000] [disabled]");
	start(&t, 0xd000);
	cfe(&t, 2, 0, 1);
	fup(&t, 0xd000);
	tip(&t, 0x4100);
	fup(&t, 0x4100);
	pgd(&t, 0);
	CHECK_STR(events(&t, 0), "d000 [cfe 2/0@d000] [disabled]");
	/* An IRET out of the traced context (TIP.PGD): the item comes after the IRET, before the
	 * DISABLE. */
	start(&t, 0xd000);
	cfe(&t, 2, 0, 1);
	fup(&t, 0xd000);
	pgd(&t, 0);
	CHECK_STR(events(&t, 0), "d000 [cfe 2/0@d000] [disabled]");
	/* While tracing is off the event happens where it is read: RSM back into the traced code
	 * before the TIP.PGE that resumes it; an SMI whose FUP + TIP.PGD leaves it before the
	 * DISABLE. */
	start(&t, 0x4000);
	cfe(&t, 3, 0, 0);
	fup(&t, 0x4001);
	pgd(&t, 0);
	cfe(&t, 4, 0, 0);
	pge(&t, 0x4001);
	fup(&t, 0x4002);
	pgd(&t, 0);
	CHECK_STR(events(&t, 0), "4000 [cfe 3/0@4001] [disabled] [cfe 4/0@0] [resumed] 4001 "
	          "[disabled]");
	/* A VM exit with its exit qualification and reason, both EVDs before the CFE, and the
	 * VMCS/PIP of the transfer after the event; the VM entry (IP=1: the VMRESUME's IP) after
	 * the VMRESUME, before its PIP. */
	start(&t, 0x4000);
	evd(&t, 1, 0xf00);
	evd(&t, 2, 0x30);
	cfe(&t, 9, 14, 0);
	fup(&t, 0x4001);
	pip(&t, 0xa000);
	tip(&t, 0xd010);
	cfe(&t, 7, 0, 1);
	fup(&t, 0xd010);
	pip(&t, 0xb000);
	tip(&t, 0x4001);
	fup(&t, 0x4002);
	pgd(&t, 0);
	CHECK_STR(events(&t, 0), "4000 [evd 1:f00] [evd 2:30] [cfe 9/14@4001] [interrupt] [cr3 a000] "
	          "d010 [cfe 7/0@d010] [cr3 b000] 4001 [disabled]");
	/* EVDs that their CFE does not take ("Page faults additionally include the page fault
	 * address": a CR2 goes with an interrupt; a VM exit's fields with a VM exit, once each):
	 * an error where the packet that does not fit is, no instruction at fault; decoding
	 * resumes at the next PSB. */
	start(&t, 0x4000);
	evd(&t, 0, 0xf00);
	size_t at = t.n;
	cfe(&t, 2, 0, 0);
	fup(&t, 0x4002);
	tip(&t, 0x4100);
	CHECK_STR(events(&t, 0), "[gap]");
	CHECK(first_gap_offset(&t) == at);
	start(&t, 0x4000);
	evd(&t, 2, 0);
	at = t.n;
	evd(&t, 0, 0xf00);
	cfe(&t, 8, 0, 0);
	fup(&t, 0x4002);
	tip(&t, 0x4100);
	CHECK_STR(events(&t, 0), "[gap]");
	CHECK(first_gap_offset(&t) == at);
	/* "An overflow ... packets are lost": a CFE whose FUP pair or branch an OVF lost happened
	 * before the overflow (the OVF comes after it in the packets); it is said there, not at
	 * the first branch after the overflow. */
	start(&t, 0x4000);
	evd(&t, 0, 0xf00);
	cfe(&t, 1, 14, 0);
	ovf(&t);
	fup(&t, 0x4100);
	pgd(&t, 0);
	CHECK_STR(events(&t, 0), "[evd 0:f00] [cfe 1/14@0] [overflow] 4100 4101 [disabled]");
	/* A CFE type the SDM does not define is ignored, with the FUP its IP bit announces. */
	start(&t, 0x4000);
	cfe(&t, 31, 0, 1);
	fup(&t, 0x4002);
	evd(&t, 31, 5);
	fup(&t, 0x4002);
	pgd(&t, 0);
	CHECK_STR(events(&t, 0), "4000 4001 [disabled]");
	/* Event trace "provides indication of the status of the Interrupt Flag (IF)": a MODE.Exec
	 * and the FUP after it say where IF changed; when the MODE.Exec also gives another mode
	 * (a transfer that changes both, e.g. while only events are traced, BranchEn=0), the
	 * new mode is said at that IP too and is the flow's from there (it was dropped). */
	t.n = 0;
	psb(&t);
	mode_exec_if(&t, 1);
	psbend(&t);
	mode_exec(&t, 0, 1);
	fup(&t, 0x7000);
	cfe(&t, 2, 0, 1);
	fup(&t, 0x7001);
	events_event_trace = 1;
	CHECK_STR(events(&t, 0), "[exec 1@7000] [if 0@7000] [cfe 2/0@7001]");
	events_event_trace = 0;
	/* Lists of events (reports: ptrec_pt_flow_decode_last and the tail-first decode) keep
	 * each event as a PTREC_BR_EVENT where it happened: a VM exit due to interrupt 14 with
	 * its exit reason and qualification, at 0x4001, before the INTERRUPT; the VM entry after
	 * the VMRESUME. */
	start(&t, 0x4000);
	evd(&t, 1, 0xf00);
	evd(&t, 2, 0x30);
	cfe(&t, 9, 14, 0);
	fup(&t, 0x4001);
	tip(&t, 0xd010);
	cfe(&t, 7, 0, 1);
	fup(&t, 0xd010);
	tip(&t, 0x4001);
	fup(&t, 0x4002);
	pgd(&t, 0);
	for (int tail = 0; tail < 2; tail++) {
		struct ptrec_branch slots[8];
		struct branch_ring ring;
		struct ptrec_pt_tail_info ti;
		CHECK(ptrec_branch_ring_init(&ring, slots, 8) == 0);
		CHECK((tail ? ptrec_pt_flow_decode_tail(t.b, t.n, image, NULL, &ring, &ti)
		            : ptrec_pt_flow_decode_last(t.b, t.n, image, NULL, &ring, NULL)) == 0);
		CHECK_EQ_U64(ptrec_branch_ring_count(&ring), 5);
		const struct ptrec_branch *e = ptrec_branch_ring_get(&ring, 0);
		CHECK_EQ_U64(e->kind, PTREC_BR_EVENT);
		CHECK_EQ_U64(e->from, 0x4001);
		CHECK_EQ_U64(e->reason, 9u << 8 | 14);
		CHECK_EQ_U64(e->to, 0xf00);
		CHECK_EQ_U64(e->reserved, 0x30);
		CHECK_EQ_U64(e->flags, PTREC_BRF_EVENT_DATA | PTREC_BRF_EVENT_REASON);
		char text[128];
		CHECK_STR(ptrec_pt_flow_event_text(e, text, sizeof(text)),
		          "vmexit, interrupt 14, exit reason 0x30, exit qualification 0xf00");
		CHECK_EQ_U64(ptrec_branch_ring_get(&ring, 1)->kind, PTREC_BR_INTERRUPT);
		CHECK_EQ_U64(ptrec_branch_ring_get(&ring, 2)->kind, PTREC_BR_FAR);
		e = ptrec_branch_ring_get(&ring, 3);
		CHECK_EQ_U64(e->kind, PTREC_BR_EVENT);
		CHECK_EQ_U64(e->from, 0xd010);
		CHECK_STR(ptrec_pt_flow_event_text(e, text, sizeof(text)), "vmentry");
		CHECK_EQ_U64(ptrec_branch_ring_get(&ring, 4)->kind, PTREC_BR_DISABLE);
	}
	/* A page fault with its address; a type the SDM does not name. */
	char text[128];
	struct ptrec_branch pf = {.kind = PTREC_BR_EVENT, .reason = 1u << 8 | 14, .to = 0xf00baa,
	                          .flags = PTREC_BRF_EVENT_DATA};
	CHECK_STR(ptrec_pt_flow_event_text(&pf, text, sizeof(text)), "interrupt 14, cr2 0xf00baa");
	pf = (struct ptrec_branch){.kind = PTREC_BR_EVENT, .reason = 11u << 8};
	CHECK_STR(ptrec_pt_flow_event_text(&pf, text, sizeof(text)), "event type 11");
}

static void test_errata_and_edges(void)
{
	struct tb t;
	/* "RET compression: a near CALL pushes its return address" -- except CALL $+0, which
	 * position-independent code uses to read the IP and which never returns (libipt's rule):
	 * the compressed RET after it returns from the outer call. */
	start(&t, 0xb000);
	tnt(&t, "t");
	tip(&t, 0x4100);
	pgd(&t, 0);
	CHECK_STR(events(&t, 0), "b000 b010 b015 b005 4100 4101 [disabled]");
	/* "TIP.PGD is generated by the branch that makes the next IP leave the traced region",
	 * a conditional branch too: it then gets no TNT bit. */
	start(&t, 0x1000);
	pgd(&t, 0);
	CHECK_STR(events(&t, 0), "1000 1002 1004 1007 [disabled]");
	/* "An asynchronous disable (FUP + TIP.PGD) followed by TIP.PGE at the FUP's IP":
	 * execution resumes where it stopped. */
	start(&t, 0x4100);
	fup(&t, 0x4100);
	pgd(&t, 0);
	pge(&t, 0x4100);
	pgd(&t, 0);
	CHECK_STR(events(&t, 0), "[disabled] [resumed] 4100 4101 [disabled]");
	/* A branch that disables with TIP.PGD without IP (a SYSCALL into an untraced kernel)
	 * stops tracing at the instruction after it; a TIP.PGE there (the SYSRET) resumes. */
	start(&t, 0x3000);
	pgd(&t, 0);
	pge(&t, 0x3002);
	tnt(&t, "t");
	pgd(&t, 0);
	CHECK_STR(events(&t, 0), "3000 [disabled] [resumed] 3002 3006 [disabled]");
	/* ... and a TIP.PGE elsewhere is a plain enable. */
	start(&t, 0x3000);
	pgd(&t, 0);
	pge(&t, 0x4100);
	pgd(&t, 0);
	CHECK_STR(events(&t, 0), "3000 [disabled] [enabled] 4100 4101 [disabled]");
	/* "An OVF inside PSB+ ends it (no PSBEND follows)": the FUP after the OVF resumes. */
	t.n = 0;
	psb(&t);
	mode_exec(&t, 1, 0);
	fup(&t, 0x1000);
	ovf(&t);
	fup(&t, 0x4100);
	pgd(&t, 0);
	CHECK_STR(events(&t, 0), "[overflow] 4100 4101 [disabled]");
	/* SKD007: "an OVF may be issued after the first byte of a multi-byte CYC, instead of
	 * its remaining bytes" (CYC f7 with Exp=1, then 02 f3). */
	t.n = 0;
	psb(&t);
	mode_exec(&t, 1, 0);
	fup(&t, 0x1000);
	put(&t, 0xf7);
	ovf(&t);
	pad(&t);
	fup(&t, 0x4100);
	pgd(&t, 0);
	CHECK_STR(events(&t, PT_ERRATUM_SKD007), "[overflow] 4100 4101 [disabled]");
	/* SKD022: "VM entry that clears TraceEn may generate a FUP" before its TIP.PGD: the
	 * VMLAUNCH executed.  Without the erratum the FUP makes it an asynchronous disable
	 * before it. */
	start(&t, 0xb100);
	fup(&t, 0xb100);
	pgd(&t, 0);
	CHECK_STR(events(&t, PT_ERRATUM_SKD022), "b100 [disabled]");
	CHECK_STR(events(&t, 0), "[disabled]");
	/* APL12: "OVF may be followed by an unexpected FUP" while tracing is off: a TIP.PGE
	 * next says it was off, so the PIP between is not bound to a branch. */
	start(&t, 0x1000);
	tnt(&t, "ttn");
	pgd(&t, 0);
	ovf(&t);
	fup(&t, 0x7000);
	pip(&t, 0xa000);
	pge(&t, 0x4100);
	pgd(&t, 0);
	CHECK_STR(events(&t, PT_ERRATUM_APL12), "1000 1002 1004 1007 1002 1004 1007 1002 1004 1007 "
	          "1009 [disabled] [overflow] [cr3 a000] [enabled] 4100 4101 [disabled]");
	/* BDM70: "PSB+ may contain FUP and MODE.Exec although tracing is off" when a TIP.PGE
	 * follows: that enable is the only one. */
	start(&t, 0x4100);
	pgd(&t, 0);
	psb_at(&t, 0x4100);
	pge(&t, 0x4100);
	pgd(&t, 0);
	CHECK_STR(events(&t, PT_ERRATUM_BDM70), "4100 4101 [disabled] [enabled] 4100 4101 [disabled]");
	/* SKD010: "OVF may not be followed by a FUP or TIP.PGE": the next PSB+ says where
	 * execution is. */
	start(&t, 0);
	ovf(&t);
	psb_at(&t, 0x4100);
	pgd(&t, 0);
	CHECK_STR(events(&t, PT_ERRATUM_SKD010), "[overflow] 4100 4101 [disabled]");
	/* The errata by CPU: Skylake client has SKD007/SKD010/SKD022/SKL014/BDM70; Broadwell
	 * BDM64/BDM70; Goldmont APL11/APL12. */
	struct ptrec_pt_flow_cpu c = {6, 0x4e, 0};
	unsigned want = PT_ERRATUM_SKD007 | PT_ERRATUM_SKD010 | PT_ERRATUM_SKD022 |
	                PT_ERRATUM_SKL014 | PT_ERRATUM_BDM70;
	CHECK_EQ_U64(ptrec_pt_flow_cpu_errata(&c), want);
	c.model = 0x3d;
	CHECK_EQ_U64(ptrec_pt_flow_cpu_errata(&c), PT_ERRATUM_BDM64 | PT_ERRATUM_BDM70);
	c.model = 0x5c;
	CHECK_EQ_U64(ptrec_pt_flow_cpu_errata(&c), PT_ERRATUM_APL11 | PT_ERRATUM_APL12);
	c.model = 0x1a; /* Nehalem: no Intel PT, no errata */
	CHECK_EQ_U64(ptrec_pt_flow_cpu_errata(&c), 0);
	/* libipt's table of 2025 (its skd022 and bdm70 cases list these parts): 6/0xd5 and the
	 * 6/0x97 group have BDM70, SKD022, APL11 and not SKL014; 6/0x8f BDM70, SKD022. */
	c.model = 0xd5;
	CHECK_EQ_U64(ptrec_pt_flow_cpu_errata(&c), PT_ERRATUM_BDM70 | PT_ERRATUM_SKD022 | PT_ERRATUM_APL11);
	c.model = 0x97;
	CHECK_EQ_U64(ptrec_pt_flow_cpu_errata(&c), PT_ERRATUM_BDM70 | PT_ERRATUM_SKD022 | PT_ERRATUM_APL11);
	c.model = 0x8f;
	CHECK_EQ_U64(ptrec_pt_flow_cpu_errata(&c), PT_ERRATUM_BDM70 | PT_ERRATUM_SKD022);
	c = (struct ptrec_pt_flow_cpu){19, 1, 0};
	CHECK_EQ_U64(ptrec_pt_flow_cpu_errata(&c), PT_ERRATUM_BDM70 | PT_ERRATUM_SKD022);
}

/* The last n events tail-first equal the whole decode's last n, for n = 1..40. */
static void same_tail(const struct tb *t, const char *what)
{
	for (size_t n = 1; n <= 40; n++) {
		struct ptrec_branch sa[40], sb[40];
		struct branch_ring a, b;
		struct ptrec_pt_tail_info info;
		ptrec_branch_ring_init(&a, sa, n);
		ptrec_branch_ring_init(&b, sb, n);
		int ra = ptrec_pt_flow_decode_tail(t->b, t->n, image, NULL, &a, &info);
		int rb = ptrec_pt_flow_decode_last(t->b, t->n, image, NULL, &b, NULL);
		int same = ra >= 0 && rb >= 0 && ptrec_branch_ring_count(&a) == ptrec_branch_ring_count(&b);
		for (size_t k = 0; same && k < ptrec_branch_ring_count(&a); k++)
			same = !memcmp(ptrec_branch_ring_get(&a, k), ptrec_branch_ring_get(&b, k),
			               sizeof(sa[0]));
		if (!same)
			printf("tail-first differs from the whole decode: %s, n = %zu\n", what, n);
		CHECK(same);
	}
}

static void test_tail_first(void)
{
	struct tb t;
	struct ptrec_branch slot[2];
	struct branch_ring r;
	struct ptrec_pt_tail_info info;
	/* The loop in three PSB segments, each PSB+ restating the IP, then calls and returns. */
	start(&t, 0x1000);
	tnt(&t, "t");
	psb_at(&t, 0x1002);
	tnt(&t, "t");
	psb_at(&t, 0x1002);
	tnt(&t, "n");
	tip(&t, 0x2000);
	tnt(&t, "tt");
	tip(&t, 0x4100);
	pgd(&t, 0);
	same_tail(&t, "three segments");
	/* The last two events need the newest segment, and the one before it to show that its
	 * start is where the whole decode is at that PSB. */
	ptrec_branch_ring_init(&r, slot, 2);
	CHECK(ptrec_pt_flow_decode_tail(t.b, t.n, image, NULL, &r, &info) == 0);
	CHECK(!info.whole && !info.reached_start);
	CHECK_EQ_U64(info.segments, 2);
	CHECK_EQ_U64(ptrec_branch_ring_newest(&r, 0)->kind, PTREC_BR_DISABLE);
	/* A ring whose oldest bytes start in the middle of the first PSB+. */
	struct tb c = t;
	memmove(c.b, c.b + 5, c.n - 5);
	c.n -= 5;
	same_tail(&c, "cut in the first PSB");
	/* No PSB left at all: one gap (no sync), as the whole decode reports. */
	struct tb np = t;
	np.n = 20;
	memmove(np.b, t.b + 3, 20);
	same_tail(&np, "no PSB");
	/* A gap in the newest segment (a TIP where the jne needs a bit), OVF in the middle one. */
	start(&t, 0x1000);
	tnt(&t, "t");
	psb_at(&t, 0x1002);
	tnt(&t, "t");
	ovf(&t);
	fup(&t, 0x1002);
	psb_at(&t, 0x1002);
	tip(&t, 0x2000);
	psb_at(&t, 0x2000);
	tnt(&t, "tt");
	pgd(&t, 0);
	same_tail(&t, "gap and overflow");
	/* Tracing goes off without TIP.PGD (lost) and a PSB+ without FUP comes: the decoder
	 * before it is still "on" where the one after it starts "off", the segments do not join,
	 * and the whole trace is decoded instead: the same events. */
	start(&t, 0x1000);
	tnt(&t, "ttn");
	psb(&t);
	mode_exec(&t, 1, 0);
	psbend(&t);
	pge(&t, 0x4100);
	pgd(&t, 0);
	same_tail(&t, "segments that do not join");
	ptrec_branch_ring_init(&r, slot, 2);
	ptrec_pt_flow_decode_tail(t.b, t.n, image, NULL, &r, &info);
	CHECK(info.whole);
}

/* A trace with runs of PAD between its packets (real traces pad a third of their bytes: one to
 * hundreds of bytes between packets, also inside PSB+, between a FUP and its TIP and after an
 * OVF) decodes to what the same packets without PAD give.  SDM: "PAD ... has no semantic
 * meaning". */
static void pad_after(struct tb *t, size_t at, unsigned n)
{
	memmove(t->b + at + n, t->b + at, t->n - at);
	memset(t->b + at, 0, n);
	t->n += n;
}

static void test_pad_runs(void)
{
	static const unsigned run[] = {1, 3, 8, 200, 255, 256};
	struct tb t, p;
	char want_l[16384], want_b[16384];
	/* a loop, a call and return, an interrupt (FUP + TIP), PSB+ without and with FUP, tracing
	 * off and on again (TIP.PGD, TIP.PGE), an overflow and its FUP, the end */
	start(&t, 0x1000);
	tnt(&t, "ttn");
	tip(&t, 0x2000);
	tnt(&t, "t");
	fup(&t, 0x2010);
	tip(&t, 0x1000);
	tnt(&t, "ttn");
	pgd(&t, 0);
	psb(&t);
	mode_exec(&t, 1, 0);
	cbr(&t, 0x26);
	pip(&t, 0x48c90000);
	psbend(&t);
	pip(&t, 0x48c91000);
	pge(&t, 0x1000);
	tnt(&t, "n");
	ovf(&t);
	fup(&t, 0x1000);
	tnt(&t, "ttn");
	tip(&t, 0x4100);
	psb_at(&t, 0x4100);
	tip(&t, 0x7000);
	snprintf(want_l, sizeof(want_l), "%s", listing(&t, 0));
	snprintf(want_b, sizeof(want_b), "%s", branches(&t));
	CHECK(strstr(want_l, "[interrupt 2010>1000]") && strstr(want_l, "[overflow]"));
	for (size_t k = 0; k < sizeof(run) / sizeof(run[0]); k++) {
		/* PADs after every packet (packets by ptrec_pt_packet_decode), and at the end */
		p.n = 0;
		for (size_t i = 0; i < t.n;) {
			struct ptrec_pt_packet pkt;
			enum ptrec_pt_packet_ctx ctx = PT_CTX_NONE;
			int n = ptrec_pt_packet_decode(t.b + i, t.n - i, &ctx, &pkt);
			CHECK(n > 0 && p.n + (size_t)n + run[k] <= sizeof(p.b));
			if (n <= 0 || p.n + (size_t)n + run[k] > sizeof(p.b))
				break;
			memcpy(p.b + p.n, t.b + i, (size_t)n);
			p.n += (size_t)n;
			pad_after(&p, p.n, run[k]);
			i += (size_t)n;
		}
		CHECK_STR(listing(&p, 0), want_l);
		CHECK_STR(branches(&p), want_b);
	}
}

/* A direct call before a TIP.PGD that is not its own (a call into a stub whose indirect jump
 * leaves the traced region, as a call through the PLT into a library outside it): the call is
 * taken, the disable binds to the stub's branch.  The same after tracing resumes at a block
 * already decoded (TIP.PGE), and with the runs, the batch and the totals. */
static void test_call_before_pgd(void)
{
	struct tb t;
	struct ptrec_pt_flow_counts c, r;
	start(&t, 0x2000);
	pgd(&t, 0x7fff0000); /* 0x2000 calls 0x2010 (in the image); its ret leaves */
	pge(&t, 0x2000);
	pgd(&t, 0x7fff0000);
	CHECK_STR(listing(&t, 0), "2000 2010 2011 [disabled] [enabled] 2000 2010 2011 [disabled]");
	CHECK_STR(branches(&t), "call 2000>2010 disable 2011>7fff0000 enable 0>2000 call 2000>2010 "
	          "disable 2011>7fff0000");
	struct ptrec_pt_flow_config cfg = {t.b, t.n, image, 0, {0}};
	count_both(&cfg, &c, &r, NULL, NULL);
	check_same_counts(&c, &r);
	CHECK(c.kind[PTREC_BR_CALL] == 2 && c.kind[PTREC_BR_DISABLE] == 2 && c.insns == 6);
	/* the TIP.PGD gives the call's own target: the call leaves (SDM: TIP.PGD "is generated by
	 * the branch that leaves the traced region"); the second time from the cached block */
	start(&t, 0x2000);
	pgd(&t, 0x7fff0000);
	pge(&t, 0x2000);
	pgd(&t, 0x2010);
	CHECK_STR(branches(&t), "call 2000>2010 disable 2011>7fff0000 enable 0>2000 "
	          "disable 2000>2010");
	cfg.len = t.n;
	count_both(&cfg, &c, &r, NULL, NULL);
	check_same_counts(&c, &r);
	CHECK(c.kind[PTREC_BR_CALL] == 1 && c.kind[PTREC_BR_DISABLE] == 2);
}

int main(void)
{
	image = make_image();
	if (!image) {
		printf("cannot build the image\n");
		return 99;
	}
	test_tnt_loop();
	test_long_tnt();
	test_call_ret();
	test_deferred_tip();
	test_async();
	test_modes();
	test_tsx();
	test_overflow();
	test_psb_refresh();
	test_gaps();
	test_ptw();
	test_mov_cr3();
	test_timing();
	test_last_n();
	test_tail_ptw_marker();
	test_cpu();
	test_fuzz_smoke();
	test_count_chains();
	test_count_chain_callers();
	test_count_span_last_ip();
	test_count_span_deep();
	test_count_cyc();
	test_count_span_mtc();
	test_batch_same();
	test_psb_return_stack();
	test_power_events();
	test_trig_and_cr3();
	test_iflag();
	test_end_of_stream();
	test_resync_rules();
	test_error_offsets();
	test_context_error_32bit();
	test_status_events();
	test_event_trace();
	test_errata_and_edges();
	test_tail_first();
	test_pad_runs();
	test_call_before_pgd();
	ptrec_pt_img_free(image);
	return check_done();
}
