/* test_soft_decode.c — decoding the instrumented backend's 16-byte records (dump format 2):
 * each kind's event, markers in their place, returns inferred from entry-only records' stack
 * pointers (nesting, siblings, tail calls, the final stack pointer), times rebuilt from the
 * 28-bit field around the freeze TSC and markers, empty and invalid records, keeping the
 * newest events. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "decode/soft_decode.h"
#include "check.h"
#include "dump_writer.h"

#define SP(v) ((uint32_t)(((v) >> 3) & 0xfffffff)) /* x of an ENTRY record */

static void test_kinds(void)
{
	struct tbuf r = {0};
	struct ptrec_branch out[16];
	struct ptrec_bts_stats st;

	tw_soft2(&r, PTREC_SOFT_CALL, 0x401005, 0x402000, 0);
	tb_u64(&r, 0); /* never written */
	tb_u64(&r, 0);
	tw_soft2(&r, PTREC_SOFT_EDGE, 0x402010, 0, 0);
	tb_u64(&r, (uint64_t)PTREC_SOFT_MARK << 60); /* untimed marker */
	tb_u64(&r, 0xfeedfacecafebeefull);
	tw_soft2(&r, PTREC_SOFT_BRANCH, 0x402020, 0x402040, PTREC_BR_JCC);
	tw_soft2(&r, PTREC_SOFT_BRANCH, 0x402020, 0x402040, 0xfff);  /* no such branch kind */
	tw_soft2(&r, 0xf, 1, 2, 0);                                   /* no such record kind */
	tw_soft2(&r, PTREC_SOFT_RET, 0x402000, 0x401005, 0);
	size_t n = ptrec_soft_decode(r.p, r.n, r.n, NULL, out, 16, &st);
	CHECK_EQ_U64(st.records, 8);
	CHECK_EQ_U64(st.empty, 1);
	CHECK_EQ_U64(st.bad_kind, 2);
	CHECK_EQ_U64(n, 5);
	CHECK(out[0].kind == PTREC_BR_CALL && out[0].from == 0x401005 && out[0].to == 0x402000);
	CHECK(out[1].kind == PTREC_BR_EDGE && out[1].from == 0x402010 && out[1].to == 0);
	CHECK(out[2].kind == PTREC_BR_MARKER && out[2].to == 0xfeedfacecafebeefull);
	CHECK(!(out[2].flags & PTREC_BRF_HAS_TIME));
	CHECK(out[3].kind == PTREC_BR_JCC && (out[3].flags & PTREC_BRF_TAKEN));
	CHECK(out[4].kind == PTREC_BR_RET && out[4].from == 0x402000 && out[4].to == 0x401005);
	/* Untimed format: no times even though x is there. */
	CHECK(!(out[0].flags & PTREC_BRF_HAS_TIME) && out[0].timestamp == 0);

	/* More events than room: the newest are kept, oldest first. */
	free(r.p);
	memset(&r, 0, sizeof(r));
	for (uint64_t i = 1; i <= 11; i++)
		tw_soft2(&r, PTREC_SOFT_CALL, i, i + 100, 0);
	n = ptrec_soft_decode(r.p, r.n, r.n, NULL, out, 4, &st);
	CHECK_EQ_U64(n, 4);
	CHECK_EQ_U64(st.events, 11);
	for (size_t i = 0; i < 4; i++)
		CHECK_EQ_U64(out[i].from, 8 + i);

	/* A wrapped ring whose data starts 8 bytes into a record, with a partial record at the
	 * end. */
	free(r.p);
	memset(&r, 0, sizeof(r));
	tb_u64(&r, 0xaaaaaaaaaaaaaaaaull);
	tw_soft2(&r, PTREC_SOFT_CALL, 0x100, 0x200, 0);
	tb_u32(&r, 0xbbbbbbbb);
	n = ptrec_soft_decode(r.p, r.n, r.n + 1000 * 16 + 8, NULL, out, 16, &st);
	CHECK_EQ_U64(st.lead_bytes, 8);
	CHECK_EQ_U64(st.tail_bytes, 4);
	CHECK(n == 1 && out[0].from == 0x100);
	free(r.p);
}

/* main calls a (sp S-8), a calls b (S-40), b returns and a calls c (S-40 again: b must have
 * returned), c tail-calls d (d enters at c's sp), then a's caller's sibling e is entered at S
 * (c/d and a returned). The thread was frozen inside e's callee f, or after e returned. */
static void test_entry_returns(void)
{
	const uint64_t S = 0x7ffd12345670ull;
	struct tbuf r = {0};
	struct ptrec_branch out[32];
	struct ptrec_bts_stats st;
	struct ptrec_soft_ring_info info = {0, 0, 0};

	tw_soft2(&r, PTREC_SOFT_ENTRY, 0x1005, 0xa005, SP(S - 8));   /* main -> a */
	tw_soft2(&r, PTREC_SOFT_ENTRY, 0xa105, 0xb005, SP(S - 40));  /* a -> b */
	tw_soft2(&r, PTREC_SOFT_ENTRY, 0xa205, 0xc005, SP(S - 40));  /* b returned; a -> c */
	tw_soft2(&r, PTREC_SOFT_ENTRY, 0xa205, 0xd005, SP(S - 40));  /* c jumped to d */
	tw_soft2(&r, PTREC_SOFT_ENTRY, 0x1105, 0xe005, SP(S - 8));   /* d, a returned; main -> e */
	tw_soft2(&r, PTREC_SOFT_ENTRY, 0xe105, 0xf005, SP(S - 72));  /* e -> f */
	size_t n = ptrec_soft_decode(r.p, r.n, r.n, &info, out, 32, &st);
	static const struct { unsigned kind; uint64_t from, to; } want[] = {
		{PTREC_BR_CALL, 0x1005, 0xa005},
		{PTREC_BR_CALL, 0xa105, 0xb005},
		{PTREC_BR_RET, 0xb005, 0xa105},
		{PTREC_BR_CALL, 0xa205, 0xc005},
		{PTREC_BR_RET, 0xc005, 0xa205},
		{PTREC_BR_CALL, 0xa205, 0xd005},
		{PTREC_BR_RET, 0xd005, 0xa205},
		{PTREC_BR_RET, 0xa005, 0x1005},
		{PTREC_BR_CALL, 0x1105, 0xe005},
		{PTREC_BR_CALL, 0xe105, 0xf005},
	};
	CHECK_EQ_U64(n, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < n && i < sizeof(want) / sizeof(want[0]); i++) {
		if (out[i].kind != want[i].kind || out[i].from != want[i].from ||
		    out[i].to != want[i].to)
			fprintf(stderr, "event %zu: %s %#llx -> %#llx\n", i,
			        ptrec_branch_kind_name(out[i].kind), (unsigned long long)out[i].from,
			        (unsigned long long)out[i].to);
		CHECK(out[i].kind == want[i].kind && out[i].from == want[i].from &&
		      out[i].to == want[i].to);
	}

	/* Frozen in f (sp below f's entry): nothing more returned.  Frozen in e after f
	 * returned (sp above f's entry, below e's): f's return is inferred, e stays open. */
	info.final_sp = S - 200;
	CHECK_EQ_U64(ptrec_soft_decode(r.p, r.n, r.n, &info, out, 32, &st), n);
	info.final_sp = S - 72;   /* still at f's first instruction */
	CHECK_EQ_U64(ptrec_soft_decode(r.p, r.n, r.n, &info, out, 32, &st), n);
	info.final_sp = S - 48;
	CHECK_EQ_U64(ptrec_soft_decode(r.p, r.n, r.n, &info, out, 32, &st), n + 1);
	CHECK(out[n].kind == PTREC_BR_RET && out[n].from == 0xf005 && out[n].to == 0xe105);
	free(r.p);
}

/* Times: x holds (TSC >> 6) modulo 2^28; the decoder unwraps them backwards from the freeze
 * TSC, re-anchoring at markers (which hold the full TSC). */
static void test_times(void)
{
	const uint64_t base = 0x123456789abcull << 6;   /* a TSC, multiple of 64 */
	const uint64_t wrap = 1ull << (28 + 6);         /* TSC ticks per wrap of x */
	struct tbuf r = {0};
	struct ptrec_branch out[8];
	struct ptrec_bts_stats st;
	uint64_t t[4] = {base, base + 6400, base + 640000, base + 2 * wrap + 64};
	struct ptrec_soft_ring_info info = {PTREC_SOFT_FMT_TIMED | (6u << 8), t[3] + 640, 0};

	tw_soft2(&r, PTREC_SOFT_CALL, 0x10, 0x20, (uint32_t)(t[0] >> 6));
	tw_soft2(&r, PTREC_SOFT_RET, 0x20, 0x10, (uint32_t)(t[1] >> 6));
	/* More than one wrap passes after the marker: the freeze TSC places the newest record,
	 * the marker's full TSC the older ones. */
	tb_u64(&r, (uint64_t)PTREC_SOFT_MARK << 60 | t[2]);
	tb_u64(&r, 42);
	tw_soft2(&r, PTREC_SOFT_EDGE, 0x30, 0, (uint32_t)(t[3] >> 6));
	size_t n = ptrec_soft_decode(r.p, r.n, r.n, &info, out, 8, &st);
	CHECK_EQ_U64(n, 4);
	for (size_t i = 0; i < n; i++) {
		CHECK(out[i].flags & PTREC_BRF_HAS_TIME);
		CHECK_EQ_U64(out[i].timestamp, t[i]);
	}
	/* Without the freeze TSC the newest record anchors itself: times stay right relative to
	 * each other after it. */
	info.freeze_tsc = 0;
	free(r.p);
	memset(&r, 0, sizeof(r));
	tw_soft2(&r, PTREC_SOFT_CALL, 0x10, 0x20, (uint32_t)(t[0] >> 6));
	tw_soft2(&r, PTREC_SOFT_RET, 0x20, 0x10, (uint32_t)(t[1] >> 6));
	n = ptrec_soft_decode(r.p, r.n, r.n, &info, out, 8, &st);
	CHECK_EQ_U64(n, 2);
	CHECK_EQ_U64(out[1].timestamp - out[0].timestamp, 6400);
	free(r.p);
}

int main(void)
{
	test_kinds();
	test_entry_returns();
	test_times();
	return check_done();
}
