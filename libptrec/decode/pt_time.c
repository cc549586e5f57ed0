/* pt_time.c — TSC, MTC+TMA, CYC and CBR into a TSC-domain timestamp (see pt_time.h for the
 * SDM rules followed here). */
#include "config.h"

#include <string.h>

#include "core/branch.h"
#include "decode/pt_packet.h"
#include "decode/pt_time.h"

/* Cycles needed before a cycle calibration replaces an earlier one (the edges of an interval
 * are off by the cycles between a CYC and the next TSC/MTC, a few per interval); the first
 * takes any interval with cycles: a rough ratio beats none. */
#define CYC_CAL_MIN 1024u

void ptrec_pt_time_init(struct ptrec_pt_time *t, const struct ptrec_pt_time_config *cfg)
{
	memset(t, 0, sizeof(*t));
	if (cfg)
		t->cfg = *cfg;
	if (t->cfg.mtc_freq > 15)
		t->cfg.mtc_freq = 15;
}

void ptrec_pt_time_lost(struct ptrec_pt_time *t)
{
	t->have_tsc = 0;
	t->have_ctc = 0;
	t->ctc_valid = 0;
	t->cycle_accurate = 0;
	t->cyc_ref_valid = 0;
	t->cal_cyc_valid = 0;
}

void ptrec_pt_time_psb(struct ptrec_pt_time *t)
{
	t->have_tsc = 0;
	t->tsc = 0;
	t->base_tsc = 0;
	t->cycle_accurate = 0;
	t->cyc_ref_valid = 0;
	t->cyc_ref = 0;
	t->cyc_frac = 0;
	t->have_ctc = 0;
	t->ctc_from_tma = 0;
	t->mtc_last = 0;
}

int ptrec_pt_time_same_run(const struct ptrec_pt_time *a, const struct ptrec_pt_time *b)
{
	return a->tsc == b->tsc && a->have_tsc == b->have_tsc &&
	       a->cycle_accurate == b->cycle_accurate && a->cbr == b->cbr &&
	       a->base_tsc == b->base_tsc && a->have_ctc == b->have_ctc &&
	       a->ctc_from_tma == b->ctc_from_tma && a->ctc - a->ctc_base == b->ctc - b->ctc_base &&
	       (a->ctc & 0xffff) == (b->ctc & 0xffff) && a->ctc_base_tsc == b->ctc_base_tsc &&
	       a->mtc_last == b->mtc_last && a->cyc_ref_valid == b->cyc_ref_valid &&
	       a->cyc_ref == b->cyc_ref && a->cyc_frac == b->cyc_frac &&
	       a->cfg.ctc_den == b->cfg.ctc_den && a->cfg.ctc_num == b->cfg.ctc_num &&
	       a->cfg.mtc_freq == b->cfg.mtc_freq && a->cfg.nominal_ratio == b->cfg.nominal_ratio &&
	       a->cfg.keep_cal_on_ovf == b->cfg.keep_cal_on_ovf;
}

/* n ticks times per, saturated at PT_TIME_MAX_STEP. */
static uint64_t scale(uint64_t n, double per)
{
	double v = (double)n * per;
	if (!(v >= 0))
		return 0;
	if (v >= (double)PT_TIME_MAX_STEP)
		return PT_TIME_MAX_STEP;
	return (uint64_t)v;
}

static int ctc_ratio_known(const struct ptrec_pt_time *t)
{
	return t->cfg.ctc_num && t->cfg.ctc_den;
}

/* CTC ticks to TSC ticks (0 when the ratio is neither configured nor calibrated). */
static uint64_t ctc_to_tsc(const struct ptrec_pt_time *t, uint64_t n)
{
	if (ctc_ratio_known(t)) {
		uint64_t num = t->cfg.ctc_num, den = t->cfg.ctc_den, prod;
		/* the same quotient in 64 bits when the product fits (a 128-bit division is a
		 * libgcc call, at every MTC) */
		unsigned __int128 v = __builtin_mul_overflow(n, num, &prod) ?
		                      (unsigned __int128)n * num / den : prod / den;
		return v >= PT_TIME_MAX_STEP ? PT_TIME_MAX_STEP : (uint64_t)v;
	}
	return scale(n, t->tsc_per_ctc);
}

/* An exact time v from a TSC (is_tsc) or an MTC packet: the new base for CYC, a cycle
 * calibration point, and the reported time unless an estimate is already past it. */
static void exact_time(struct ptrec_pt_time *t, uint64_t v, int is_tsc)
{
	int cal = t->cal_cyc_valid && t->cal_cyc && v > t->cal_tsc &&
	          (t->cal_cyc >= CYC_CAL_MIN || !(t->tsc_per_cyc > 0));
	if (cal)
		t->tsc_per_cyc = (double)(v - t->cal_tsc) / (double)t->cal_cyc;
	if (!t->cal_cyc_valid || cal || t->cal_cyc >= CYC_CAL_MIN || v < t->cal_tsc) {
		t->cal_tsc = v;
		t->cal_cyc = 0;
		t->cal_cyc_valid = 1;
	}
	if (!t->have_tsc || v >= t->tsc || (is_tsc && t->tsc - v > PT_TIME_SLIP))
		t->tsc = v;
	/* The last CYC came before this TSC packet (an MTC can follow its CYC by part of a
	 * crystal tick: its time is the tick's start, so a CYC just before may be later). */
	if (is_tsc && t->cyc_ref_valid && t->cyc_ref > v) {
		t->cyc_ref = v;
		t->cyc_frac = 0;
	}
	t->base_tsc = v;
	t->have_tsc = 1;
	t->cycle_accurate = 0;
}

static void on_tsc(struct ptrec_pt_time *t, uint64_t v)
{
	if (!t->have_tsc)
		t->cyc_ref_valid = 0;
	exact_time(t, v, 1);
	t->have_ctc = 0; /* until its TMA */
}

static void on_tma(struct ptrec_pt_time *t, uint64_t ctc16, uint64_t fc)
{
	if (!t->have_tsc)
		return;
	uint64_t ext = ctc16 & 0xffff;
	if (t->ctc_valid) {
		/* Extend the 16-bit CTC against the running CTC (it only moves forward). */
		ext |= t->ctc & ~0xffffull;
		if (ext < t->ctc)
			ext += 0x10000;
	}
	uint64_t start = t->base_tsc >= fc ? t->base_tsc - fc : 0;
	if (!ctc_ratio_known(t) && t->ctc_valid && ext > t->ctc_base && start > t->ctc_base_tsc)
		t->tsc_per_ctc = (double)(start - t->ctc_base_tsc) / (double)(ext - t->ctc_base);
	t->ctc = ext;
	t->ctc_base = ext;
	t->ctc_base_tsc = start;
	t->have_ctc = 1;
	t->ctc_from_tma = 1;
	t->ctc_valid = 1;
}

void ptrec_pt_time_mtc(struct ptrec_pt_time *t, uint64_t payload)
{
	if (!t->have_ctc)
		return;
	unsigned n = t->cfg.mtc_freq;
	uint8_t p = (uint8_t)payload;
	uint64_t ctc;
	if (t->ctc_from_tma) {
		/* The TMA knows CTC[15:0]: with MTCFreq > 8 only the payload's low 16-MTCFreq bits
		 * can be compared with it. */
		uint64_t mask = n > 8 ? (1ull << (16 - n)) - 1 : 0xff;
		uint64_t units = t->ctc >> n;
		ctc = (units + ((p - units) & mask)) << n;
	} else {
		ctc = t->ctc + ((uint64_t)(uint8_t)(p - t->mtc_last) << n);
	}
	t->ctc = ctc;
	t->mtc_last = p;
	t->ctc_from_tma = 0;
	if (!ctc_ratio_known(t))
		t->calib_dep = 1;
	if (!ctc_ratio_known(t) && !(t->tsc_per_ctc > 0))
		return; /* the CTC is tracked, but cannot be turned into time yet */
	uint64_t d = ctc > t->ctc_base ? ctc - t->ctc_base : 0;
	exact_time(t, t->ctc_base_tsc + ctc_to_tsc(t, d), 0);
}

void ptrec_pt_time_update(struct ptrec_pt_time *t, const struct ptrec_pt_packet *pkt)
{
	switch (pkt->type) {
	case PT_PKT_TSC:
		on_tsc(t, pkt->payload);
		break;
	case PT_PKT_TMA:
		on_tma(t, pkt->payload, pkt->payload2);
		break;
	case PT_PKT_MTC:
		ptrec_pt_time_mtc(t, pkt->payload);
		break;
	case PT_PKT_CYC:
		ptrec_pt_time_cyc(t, pkt->payload);
		break;
	case PT_PKT_CBR:
		t->cbr = (uint32_t)pkt->payload;
		break;
	case PT_PKT_OVF:
		if (!t->cfg.keep_cal_on_ovf) { /* a CBR may have been lost with the packets */
			t->cbr = 0;
			t->tsc_per_cyc = 0;
			t->cal_cyc_valid = 0;
		}
		break;
	default:
		break;
	}
}
