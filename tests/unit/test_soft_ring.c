/* test_soft_ring.c — the instrumented backend's per-thread ring: what each hook records,
 * append and wrap (records straddling the end of the ring), the oldest-first view that drops
 * the partly overwritten oldest record, and freeze/thaw. */
#include "config.h"

#include "core/branch.h"
#include "check.h"
#include "capture/backend_soft.h"
#include "runtime/recorder.h"

void __cyg_profile_func_enter(void *fn, void *call_site);
void __cyg_profile_func_exit(void *fn, void *call_site);
void __sanitizer_cov_trace_pc(void);

/* Copies the view's pieces into out (oldest first) and returns the record count. */
static size_t records(const struct ptrec_ring_view *v, struct ptrec_bts_record *out, size_t max)
{
	uint8_t *p = (uint8_t *)out;
	size_t n = v->len[0] + v->len[1];
	CHECK(n % sizeof(struct ptrec_bts_record) == 0);
	CHECK(n <= max * sizeof(*out));
	if (n > max * sizeof(*out))
		return 0;
	memcpy(p, v->part[0], v->len[0]);
	if (v->len[1])
		memcpy(p + v->len[0], v->part[1], v->len[1]);
	return n / sizeof(*out);
}

int main(void)
{
	struct ptrec_config cfg;
	struct ptrec_ring ring;
	struct ptrec_ring_view v;
	struct ptrec_bts_record rec[256];
	char reason[PTREC_REASON_MAX];
	const struct ptrec_backend_ops *ops = &ptrec_backend_instrumented;

	ptrec_config_init(&cfg);
	cfg.backend = PTREC_BACKEND_INSTRUMENTED;
	CHECK(ops->id == PTREC_BACKEND_INSTRUMENTED);
	CHECK(ops->probe(&cfg, reason, sizeof(reason)) == 0);
	CHECK(ops->open(&ring, 3 * 4096, &cfg, reason, sizeof(reason)) == -PTREC_EINVAL);
	CHECK(ops->open(&ring, 4096, &cfg, reason, sizeof(reason)) == 0);
	CHECK(ring.size == 4096 && ring.head == 0 && ring.data != NULL);

	/* Each hook appends one 24-byte record: CALL from the call site to the function, RET
	 * from the function back to the call site, EDGE at the instrumented site. */
	__cyg_profile_func_enter((void *)0x401000, (void *)0x402222);
	__cyg_profile_func_exit((void *)0x401000, (void *)0x402222);
	__sanitizer_cov_trace_pc();
	CHECK_EQ_U64(ring.head, 3 * 24);
	ops->view(&ring, &v);
	CHECK(!v.wrapped);
	CHECK(records(&v, rec, 256) == 3);
	CHECK_EQ_U64(rec[0].from, 0x402222);
	CHECK_EQ_U64(rec[0].to, 0x401000);
	CHECK_EQ_U64(rec[0].flags, PTREC_BTS_SOFT | PTREC_BR_CALL);
	CHECK_EQ_U64(rec[1].from, 0x401000);
	CHECK_EQ_U64(rec[1].to, 0x402222);
	CHECK_EQ_U64(rec[1].flags, PTREC_BTS_SOFT | PTREC_BR_RET);
	CHECK(rec[2].from != 0 && rec[2].to == 0);
	CHECK_EQ_U64(rec[2].flags, PTREC_BTS_SOFT | PTREC_BR_EDGE);

	/* 200 records in a 4096-byte ring: 4800 bytes written, so the ring wrapped.  The oldest
	 * whole record still there starts at byte 720 (= 30 * 24, the first record boundary after
	 * 4800 - 4096 = 704): records 30..199 (170 of them) remain, in order, including the ones
	 * that straddle the end of the ring. */
	ring.head = 0;
	for (unsigned i = 0; i < 200; i++)
		ptrec_soft_append(i, 1000 + i, PTREC_BR_JMP);
	CHECK_EQ_U64(ring.head, 4800);
	ops->view(&ring, &v);
	CHECK(v.wrapped);
	CHECK_EQ_U64(v.head, 4800);
	CHECK(v.part[0] == ring.data + 720);
	CHECK_EQ_U64(v.len[0], 4096 - 720);
	CHECK(v.part[1] == ring.data);
	CHECK_EQ_U64(v.len[1], 4800 - 4096);
	size_t n = records(&v, rec, 256);
	CHECK_EQ_U64(n, 170);
	int in_order = 1;
	for (size_t i = 0; i < n; i++)
		if (rec[i].from != 30 + i || rec[i].to != 1030 + i ||
		    rec[i].flags != (PTREC_BTS_SOFT | PTREC_BR_JMP))
			in_order = 0;
	CHECK(in_order);

	/* The pure view (heads are whole records): not yet wrapped, wrapped with a partial
	 * oldest record dropped. */
	ptrec_soft_view_make(ring.data, 4096, 170 * 24, &v);
	CHECK(!v.wrapped && v.part[0] == ring.data && v.len[0] == 4080 && v.len[1] == 0);
	ptrec_soft_view_make(ring.data, 4096, 180 * 24, &v); /* oldest byte 224: starts at 240 */
	CHECK(v.wrapped);
	CHECK(v.part[0] == ring.data + 240);
	CHECK_EQ_U64(v.len[0] + v.len[1], 180 * 24 - 240);
	ptrec_soft_view_make(ring.data, 4096, 171 * 24, &v);  /* oldest byte 8: starts at 24 */
	CHECK(v.part[0] == ring.data + 24);
	CHECK_EQ_U64(v.len[0] + v.len[1], 170 * 24);
	ptrec_soft_view_make(NULL, 0, 0, &v);
	CHECK(v.len[0] == 0 && v.part[0] == NULL);

	/* Frozen rings take no records; thawed ones go on. */
	ring.head = 0;
	ops->freeze(&ring);
	ptrec_soft_append(1, 2, PTREC_BR_CALL);
	CHECK_EQ_U64(ring.head, 0);
	ops->thaw(&ring);
	ptrec_soft_append(1, 2, PTREC_BR_CALL);
	CHECK_EQ_U64(ring.head, 24);

	/* After close the hooks find no ring and record nothing (and do not crash). */
	ops->close(&ring);
	CHECK(ring.data == NULL);
	__cyg_profile_func_enter((void *)1, (void *)2);
	CHECK(ptrec_soft_hooks_seen == 1);
	return check_done();
}
