/* test_bts_callstack.c — BTS/soft record decoding (record alignment from the ring head, empty
 * and invalid records, hardware records classified from their instruction bytes, keeping the
 * newest events) and call stacks rebuilt from branch events (nesting, returns that skip
 * frames, returns past the start of the history, gaps), checked against an unwound stack
 * (frames a jump left without returns). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "decode/bts_decode.h"
#include "report/callstack.h"
#include "check.h"
#include "dump_writer.h"
#include "ptrec.h"

static void test_classify(void)
{
	static const struct {
		uint8_t b[8];
		size_t len;
		unsigned kind;
	} cases[] = {
		{{0x74, 0x05}, 2, PTREC_BR_JCC},                        /* je rel8 */
		{{0x0f, 0x85, 1, 0, 0, 0}, 6, PTREC_BR_JCC},            /* jne rel32 */
		{{0xe3, 0x00}, 2, PTREC_BR_JCC},                        /* jrcxz */
		{{0xe2, 0xfe}, 2, PTREC_BR_JCC},                        /* loop */
		{{0xe8, 0, 0, 0, 0}, 5, PTREC_BR_CALL},                 /* call rel32 */
		{{0xe9, 0, 0, 0, 0}, 5, PTREC_BR_JMP},                  /* jmp rel32 */
		{{0xeb, 0x10}, 2, PTREC_BR_JMP},                        /* jmp rel8 */
		{{0xc3}, 1, PTREC_BR_RET},                              /* ret */
		{{0xf3, 0xc3}, 2, PTREC_BR_RET},                        /* rep ret */
		{{0xc2, 0x08, 0x00}, 3, PTREC_BR_RET},                  /* ret 8 */
		{{0xff, 0xd0}, 2, PTREC_BR_IND_CALL},                   /* call *%rax */
		{{0x41, 0xff, 0xd3}, 3, PTREC_BR_IND_CALL},             /* call *%r11 */
		{{0xff, 0x15, 0, 0, 0, 0}, 6, PTREC_BR_IND_CALL},       /* call *disp(%rip) */
		{{0xff, 0xe0}, 2, PTREC_BR_IND_JMP},                    /* jmp *%rax */
		{{0xf2, 0xff, 0x25, 0, 0, 0, 0}, 7, PTREC_BR_IND_JMP},  /* bnd jmp *disp(%rip) */
		{{0x3e, 0xff, 0xe0}, 3, PTREC_BR_IND_JMP},              /* notrack jmp *%rax */
		{{0x0f, 0x05}, 2, PTREC_BR_FAR},                        /* syscall */
		{{0xcd, 0x80}, 2, PTREC_BR_FAR},                        /* int 0x80 */
		{{0x48, 0xcf}, 2, PTREC_BR_FAR},                        /* iretq */
		{{0x89, 0xc0}, 2, PTREC_BR_INTERRUPT},                  /* mov: not a branch */
		{{0x66}, 1, PTREC_BR_NONE},                             /* prefix only: too short */
		{{0x0f}, 1, PTREC_BR_NONE},
		{{0xff}, 1, PTREC_BR_NONE},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unsigned k = ptrec_bts_classify(cases[i].b, cases[i].len);
		if (k != cases[i].kind)
			fprintf(stderr, "case %zu: kind %u, want %u\n", i, k, cases[i].kind);
		CHECK_EQ_U64(k, cases[i].kind);
	}
}

/* Code bytes for hardware records: a call at 0x1000, a ret at 0x2000, a jcc at 0x3000. */
static size_t fake_code(void *ctx, uint64_t addr, void *buf, size_t len)
{
	static const uint8_t call[] = {0xe8, 1, 2, 3, 4}, ret[] = {0xc3}, jcc[] = {0x75, 0x02};
	const uint8_t *src = addr == 0x1000 ? call : addr == 0x2000 ? ret : addr == 0x3000 ? jcc
	                                                                                  : NULL;
	size_t n = addr == 0x1000 ? 5 : addr == 0x2000 ? 1 : 2;
	(void)ctx;
	if (!src)
		return 0;
	if (n > len)
		n = len;
	memcpy(buf, src, n);
	return n;
}

static void put_hw(struct tbuf *b, uint64_t from, uint64_t to)
{
	tb_u64(b, from);
	tb_u64(b, to);
	tb_u64(b, PTREC_BTS_PREDICTED);
}

static void test_decode(void)
{
	struct tbuf r = {0};
	struct ptrec_branch out[8];
	struct ptrec_bts_stats st;
	size_t n;

	/* Soft records, with an empty (never written) one and an invalid kind. */
	tw_soft(&r, 0x10, 0x20, PTREC_BR_CALL);
	tb_u64(&r, 0);
	tb_u64(&r, 0);
	tb_u64(&r, 0);
	tw_soft(&r, 0x30, 0x40, 0x7f);
	tw_soft(&r, 0x20, 0x10, PTREC_BR_RET);
	n = ptrec_bts_decode(r.p, r.n, r.n, NULL, NULL, out, 8, &st);
	CHECK_EQ_U64(n, 2);
	CHECK_EQ_U64(st.records, 4);
	CHECK_EQ_U64(st.empty, 1);
	CHECK_EQ_U64(st.bad_kind, 1);
	CHECK(out[0].kind == PTREC_BR_CALL && out[0].from == 0x10 && out[0].to == 0x20);
	CHECK(out[1].kind == PTREC_BR_RET && out[1].from == 0x20);

	/* A wrapped ring: head - data_size = 100 bytes of records were overwritten, so the data
	 * starts 20 bytes into a record (100 % 24 = 4; the next boundary is 20 bytes on). */
	{
		struct tbuf w = {0};
		uint8_t junk[20];
		memset(junk, 0xaa, sizeof(junk));
		tb_put(&w, junk, sizeof(junk));
		tw_soft(&w, 0x100, 0x200, PTREC_BR_CALL);
		tw_soft(&w, 0x300, 0x400, PTREC_BR_CALL);
		tb_put(&w, junk, 5); /* a partial record at the end */
		n = ptrec_bts_decode(w.p, w.n, 100 + w.n, NULL, NULL, out, 8, &st);
		CHECK_EQ_U64(st.lead_bytes, 20);
		CHECK_EQ_U64(st.tail_bytes, 5);
		CHECK_EQ_U64(n, 2);
		CHECK(out[0].from == 0x100 && out[1].from == 0x300);
		free(w.p);
	}

	/* Hardware records: kind from the instruction at `from`; unreadable ones count. */
	free(r.p);
	memset(&r, 0, sizeof(r));
	put_hw(&r, 0x1000, 0x5000);
	put_hw(&r, 0x2000, 0x1005);
	put_hw(&r, 0x3000, 0x3004);
	put_hw(&r, 0x9000, 0x9100);
	n = ptrec_bts_decode(r.p, r.n, r.n, fake_code, NULL, out, 8, &st);
	CHECK_EQ_U64(n, 4);
	CHECK_EQ_U64(out[0].kind, PTREC_BR_CALL);
	CHECK_EQ_U64(out[1].kind, PTREC_BR_RET);
	CHECK_EQ_U64(out[2].kind, PTREC_BR_JCC);
	CHECK(out[2].flags & PTREC_BRF_TAKEN);
	CHECK_EQ_U64(out[3].kind, PTREC_BR_JMP);
	CHECK_EQ_U64(st.unclassified, 1);

	/* More events than room: the newest ones are kept, oldest first. */
	free(r.p);
	memset(&r, 0, sizeof(r));
	for (uint64_t i = 1; i <= 11; i++)
		tw_soft(&r, i, i + 100, PTREC_BR_JMP);
	n = ptrec_bts_decode(r.p, r.n, r.n, NULL, NULL, out, 4, &st);
	CHECK_EQ_U64(n, 4);
	CHECK_EQ_U64(st.events, 11);
	for (size_t i = 0; i < 4; i++)
		CHECK_EQ_U64(out[i].from, 8 + i);
	free(r.p);
}

static struct ptrec_branch ev(unsigned kind, uint64_t from, uint64_t to)
{
	struct ptrec_branch b;
	memset(&b, 0, sizeof(b));
	b.kind = (uint8_t)kind;
	b.from = from;
	b.to = to;
	return b;
}

static void test_callstack(void)
{
	struct ptrec_frame f[8];
	struct ptrec_callstack_info info;
	size_t n;

	/* Hardware conventions: call sites are call instructions; a return lands 2..15 bytes
	 * after one.  main -> a -> b, b returns, a -> c: stack c, a, main. */
	{
		struct ptrec_branch b[] = {
			ev(PTREC_BR_CALL, 0x1000, 0xa000),   /* main calls a */
			ev(PTREC_BR_CALL, 0xa010, 0xb000),   /* a calls b */
			ev(PTREC_BR_JCC, 0xb004, 0xb010),
			ev(PTREC_BR_RET, 0xb020, 0xa015),    /* b returns into a */
			ev(PTREC_BR_IND_CALL, 0xa030, 0xc000), /* a calls c */
		};
		n = ptrec_callstack_rebuild(b, 5, 0, f, 8, &info);
		CHECK_EQ_U64(n, 2);
		CHECK(f[0].site == 0xa030 && f[0].func == 0xc000);
		CHECK(f[1].site == 0x1000 && f[1].func == 0xa000);
		CHECK_EQ_U64(info.resync, 0);
	}
	/* A longjmp-like return that skips two frames. */
	{
		struct ptrec_branch b[] = {
			ev(PTREC_BR_CALL, 0x1000, 0xa000),
			ev(PTREC_BR_CALL, 0xa010, 0xb000),
			ev(PTREC_BR_CALL, 0xb010, 0xc000),
			ev(PTREC_BR_RET, 0xc020, 0x1005),    /* back into main directly */
		};
		n = ptrec_callstack_rebuild(b, 4, 0, f, 8, &info);
		CHECK_EQ_U64(n, 0);
		CHECK_EQ_U64(info.resync, 1);
	}
	/* Returns past the start of the history reveal the callers; a gap is counted. */
	{
		struct ptrec_branch b[] = {
			ev(PTREC_BR_RET, 0xc020, 0xb015),    /* returned into b (caller unknown) */
			ev(PTREC_BR_GAP, 0, 0),
			ev(PTREC_BR_CALL, 0xb030, 0xd000),   /* b calls d */
		};
		n = ptrec_callstack_rebuild(b, 3, 0, f, 8, &info);
		CHECK_EQ_U64(n, 2);
		CHECK(f[0].site == 0xb030 && !f[0].resumed);
		CHECK(f[1].site == 0xb015 && f[1].resumed && f[1].site_is_return_address);
		CHECK_EQ_U64(info.unmatched_returns, 1);
		CHECK_EQ_U64(info.gaps, 1);
	}
	/* Instrumented conventions: CALL.from and RET.to are the same return address. */
	{
		struct ptrec_branch b[] = {
			ev(PTREC_BR_CALL, 0x1005, 0xa000),
			ev(PTREC_BR_CALL, 0xa015, 0xb000),
			ev(PTREC_BR_RET, 0xb000, 0xa015),
			ev(PTREC_BR_CALL, 0xa025, 0xc000),
		};
		n = ptrec_callstack_rebuild(b, 4, 1, f, 8, &info);
		CHECK_EQ_U64(n, 2);
		CHECK(f[0].site == 0xa025 && f[0].site_is_return_address);
		CHECK(f[1].site == 0x1005);
	}
	/* Deep recursion: only max frames written, the rest counted. */
	{
		struct ptrec_branch *b = calloc(100, sizeof(*b));
		for (int i = 0; i < 100; i++)
			b[i] = ev(PTREC_BR_CALL, 0x1000 + (uint64_t)i * 16, 0x5000);
		n = ptrec_callstack_rebuild(b, 100, 0, f, 8, &info);
		CHECK_EQ_U64(n, 8);
		CHECK_EQ_U64(f[0].site, 0x1000 + 99 * 16);
		CHECK_EQ_U64(info.dropped, 92);
		free(b);
	}
}

static struct ptrec_unwind_frame uw(uint64_t pc, unsigned how, int signal_frame)
{
	struct ptrec_unwind_frame u;
	memset(&u, 0, sizeof(u));
	u.pc = pc;
	u.how = (uint8_t)how;
	u.return_address = how != PTREC_UNWIND_CONTEXT;
	u.signal_frame = (uint8_t)signal_frame;
	return u;
}

/* A jump skips returns: main -> a -> b, b -> c -> d, d longjmps back into b, b -> e, which
 * crashes.  The calls leave e, d, c, b, main open; the unwound stack (e's pc, then return
 * addresses in b, a, main, found by CFI) shows c and d are gone. */
static void test_callstack_confirm(void)
{
	struct ptrec_branch b[] = {
		ev(PTREC_BR_CALL, 0x1000, 0xa000),   /* main calls a (returns to 0x1005) */
		ev(PTREC_BR_CALL, 0xa010, 0xb000),   /* a calls b (0xa015) */
		ev(PTREC_BR_CALL, 0xb010, 0xc000),   /* b calls c */
		ev(PTREC_BR_CALL, 0xc010, 0xd000),   /* c calls d; d longjmps into b: no return */
		ev(PTREC_BR_CALL, 0xb040, 0xe000),   /* b calls e (0xb045) */
	};
	struct ptrec_unwind_frame u[] = {
		uw(0xe008, PTREC_UNWIND_CONTEXT, 0), uw(0xb045, PTREC_UNWIND_CFI, 0),
		uw(0xa015, PTREC_UNWIND_CFI, 0), uw(0x1005, PTREC_UNWIND_CFI, 0),
	};
	struct ptrec_frame f[8];
	struct ptrec_callstack_info info;
	size_t n = ptrec_callstack_rebuild(b, 5, 0, f, 8, &info);
	CHECK_EQ_U64(n, 5);
	n = ptrec_callstack_confirm(f, n, u, 4, &info);
	CHECK_EQ_U64(n, 3);
	CHECK_EQ_U64(info.skipped, 2);
	CHECK(f[0].site == 0xb040 && f[1].site == 0xa010 && f[2].site == 0x1000);

	/* The crash comes in b itself after the jump: the skipped frames are the innermost. */
	struct ptrec_unwind_frame in_b[] = {
		uw(0xb050, PTREC_UNWIND_CONTEXT, 0), uw(0xa015, PTREC_UNWIND_CFI, 0),
		uw(0x1005, PTREC_UNWIND_CFI, 0),
	};
	n = ptrec_callstack_rebuild(b, 4, 0, f, 8, &info);
	n = ptrec_callstack_confirm(f, n, in_b, 3, &info);
	CHECK_EQ_U64(n, 2);
	CHECK_EQ_U64(info.skipped, 2);
	CHECK(f[0].site == 0xa010 && f[1].site == 0x1000);

	/* Not on a straight CFI walk: a signal frame between (d is a signal handler, called by
	 * the kernel) or a frame found by scanning keeps what is not confirmed. */
	struct ptrec_unwind_frame sig[] = {
		uw(0xe008, PTREC_UNWIND_CONTEXT, 0), uw(0xb045, PTREC_UNWIND_CFI, 0),
		uw(0x7000, PTREC_UNWIND_CFI, 1), uw(0xa015, PTREC_UNWIND_SIGNAL, 0),
		uw(0x1005, PTREC_UNWIND_CFI, 0),
	};
	n = ptrec_callstack_rebuild(b, 5, 0, f, 8, &info);
	n = ptrec_callstack_confirm(f, n, sig, 5, &info);
	CHECK_EQ_U64(n, 5);
	CHECK_EQ_U64(info.skipped, 0);
	u[0].pc = 0xe008;
	u[2].how = PTREC_UNWIND_SCAN;
	n = ptrec_callstack_rebuild(b, 5, 0, f, 8, &info);
	n = ptrec_callstack_confirm(f, n, u, 4, &info);
	CHECK_EQ_U64(n, 5);

	/* Instrumented records: sites are return addresses; an inlined call repeats its
	 * container's return address and stays. */
	struct ptrec_branch s[] = {
		ev(PTREC_BR_CALL, 0x1005, 0xa000),
		ev(PTREC_BR_CALL, 0xa015, 0xb000),
		ev(PTREC_BR_CALL, 0xa015, 0xb800),   /* inlined into b: same return address */
		ev(PTREC_BR_CALL, 0xb015, 0xc000),   /* c: left by a jump */
		ev(PTREC_BR_CALL, 0xb045, 0xe000),
	};
	u[2].how = PTREC_UNWIND_CFI;
	n = ptrec_callstack_rebuild(s, 5, 1, f, 8, &info);
	n = ptrec_callstack_confirm(f, n, u, 4, &info);
	CHECK_EQ_U64(n, 4);
	CHECK_EQ_U64(info.skipped, 1);
	CHECK(f[0].site == 0xb045 && f[1].func == 0xb800 && f[2].func == 0xb000 && f[3].site == 0x1005);
}

int main(void)
{
	test_classify();
	test_decode();
	test_callstack();
	test_callstack_confirm();
	return check_done();
}
