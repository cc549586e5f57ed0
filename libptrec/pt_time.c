/* pt_time.c — TSC, MTC+TMA and CYC into a TSC-domain timestamp. */
#include "config.h"

#include <string.h>

#include "branch.h"
#include "pt_packet.h"
#include "pt_time.h"

void pt_time_init(struct pt_time *t, const struct pt_time_config *cfg)
{
	memset(t, 0, sizeof(*t));
	if (cfg)
		t->cfg = *cfg;
	if (t->cfg.ctc_den && t->cfg.ctc_num)
		t->tsc_per_ctc = (double)t->cfg.ctc_num / (double)t->cfg.ctc_den;
}

void pt_time_lost(struct pt_time *t)
{
	t->have_tsc = 0;
	t->have_tma = 0;
	t->cal_valid = 0;
	t->cycle_accurate = 0;
	t->cyc_since = 0;
}

/* n ticks times per, saturated (a corrupt trace must not overflow the conversion). */
static uint64_t scale(uint64_t n, double per)
{
	double v = (double)n * per;
	if (!(v >= 0))
		return 0;
	if (v >= 9.0e18)
		return (uint64_t)9.0e18;
	return (uint64_t)v;
}

/* Moves the CYC base to the current time and, if nothing better is known, calibrates cycles to
 * TSC ticks from the cycles counted since the previous base. */
static void cyc_rebase(struct pt_time *t)
{
	if (t->cyc_since && t->tsc > t->cyc_tsc && !(t->cfg.nominal_ratio && t->cbr))
		t->tsc_per_cyc = (double)(t->tsc - t->cyc_tsc) / (double)t->cyc_since;
	t->cyc_since = 0;
	t->cyc_tsc = t->tsc;
	t->cycle_accurate = 0;
}

static void on_tsc(struct pt_time *t, uint64_t tsc)
{
	t->tsc = tsc;
	t->have_tsc = 1;
	t->have_tma = 0;
	cyc_rebase(t);
}

static void on_tma(struct pt_time *t, uint64_t ctc16, uint64_t fc)
{
	if (!t->have_tsc)
		return;
	/* Calibrate TSC per CTC from the previous TSC packet if the ratio is not configured. */
	uint64_t ctc = ctc16 & 0xffff;
	if (t->have_tma || t->cal_valid) {
		/* Extend the 16-bit CTC against the running CTC to keep it monotonic. */
		uint64_t prev = t->ctc;
		uint64_t ext = (prev & ~0xffffull) | ctc;
		if (ext < prev)
			ext += 0x10000;
		ctc = ext;
	}
	if (!(t->cfg.ctc_den && t->cfg.ctc_num) && t->cal_valid && ctc > t->cal_ctc &&
	    t->tsc > t->cal_tsc)
		t->tsc_per_ctc = (double)(t->tsc - t->cal_tsc) / (double)(ctc - t->cal_ctc);
	t->ctc = ctc;
	t->base_ctc = ctc;
	/* The TSC packet's value is CTC * ratio + FastCounter: the CTC tick started fc earlier. */
	t->base_tsc = t->tsc >= fc ? t->tsc - fc : 0;
	t->have_tma = 1;
	t->cal_tsc = t->tsc;
	t->cal_ctc = ctc;
	t->cal_valid = 1;
}

static void on_mtc(struct pt_time *t, uint64_t payload)
{
	if (!t->have_tma)
		return;
	unsigned shift = t->cfg.mtc_freq;
	uint64_t unit = 1ull << shift;
	uint64_t window = unit << 8;
	uint64_t ctc = (t->ctc & ~(window - 1)) | ((payload & 0xff) << shift);
	if (ctc < t->ctc) /* the 8-bit field wrapped */
		ctc += window;
	t->ctc = ctc;
	if (t->tsc_per_ctc > 0) {
		uint64_t tsc = t->base_tsc + scale(ctc - t->base_ctc, t->tsc_per_ctc);
		if (tsc > t->tsc)
			t->tsc = tsc;
		cyc_rebase(t);
	}
}

static void on_cyc(struct pt_time *t, uint64_t cycles)
{
	if (!t->have_tsc)
		return;
	t->cyc_since += cycles;
	double per = t->tsc_per_cyc;
	if (t->cfg.nominal_ratio && t->cbr)
		per = (double)t->cfg.nominal_ratio / (double)t->cbr;
	if (per <= 0)
		return;
	uint64_t tsc = t->cyc_tsc + scale(t->cyc_since, per);
	if (tsc > t->tsc)
		t->tsc = tsc;
	t->cycle_accurate = 1;
}

void pt_time_update(struct pt_time *t, const struct pt_packet *pkt)
{
	switch (pkt->type) {
	case PT_PKT_TSC:
		on_tsc(t, pkt->payload);
		break;
	case PT_PKT_TMA:
		on_tma(t, pkt->payload, pkt->payload2);
		break;
	case PT_PKT_MTC:
		on_mtc(t, pkt->payload);
		break;
	case PT_PKT_CYC:
		on_cyc(t, pkt->payload);
		break;
	case PT_PKT_CBR:
		t->cbr = (uint32_t)pkt->payload;
		break;
	default:
		break;
	}
}

unsigned pt_time_now(const struct pt_time *t, uint64_t *tsc)
{
	if (!t->have_tsc) {
		*tsc = 0;
		return 0;
	}
	*tsc = t->tsc;
	return PTREC_BRF_HAS_TIME | (t->cycle_accurate ? PTREC_BRF_CYCLE : 0u);
}
