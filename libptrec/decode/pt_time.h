/* pt_time.h — Intel PT timing: TSC, MTC+TMA, CYC and CBR packets turned into a TSC-domain
 * timestamp.  Pure: no I/O, no allocation.  Semantics from the SDM ("Tracking Time"):
 *
 * - TSC carries TSC[55:0] and is exact.  It is the base for what follows.
 * - TMA follows the TSC: CTC[15:0], the crystal clock (ART) at that TSC, and FastCounter, how far
 *   (in TSC ticks) the TSC was into that crystal tick.  So CTC tick TMA.CTC began at TSC - FC.
 * - MTC carries CTC[MTCFreq+7:MTCFreq]; the bits below are 0 at the MTC.  The CTC advance since
 *   the previous MTC (or the TMA) is the 8-bit payload difference modulo 256 (several MTCs may
 *   be lost, never 256 in a row); right after a TMA with MTCFreq > 8 only CTC[15:MTCFreq] are
 *   known from the TMA, so the difference is taken modulo 2^(16-MTCFreq).  An MTC's time is
 *   TMA-TSC - FC + (CTC at the MTC - TMA.CTC) * CPUID.15H EBX/EAX; without the ratio it is
 *   calibrated from consecutive TSC+TMA pairs (until then MTC does not move time).
 * - CYC counts core cycles since the previous CYC packet (not since the last TSC/MTC): the
 *   first CYC after a TSC or MTC also holds cycles from before it.  A CYC's time is therefore
 *   the previous CYC's time plus cycles * (max non-turbo ratio / CBR) TSC ticks, never before
 *   the last TSC/MTC.  Without those ratios cycles are calibrated against TSC/MTC times.
 * - OVF: packets were lost, not time: TSC and CTC keep counting (MTC deltas assume fewer
 *   than 256 lost MTCs, as everywhere) and "the cycle counter counts during overflows" (its
 *   next CYC holds the overflow's cycles).  But a CBR is sent after a frequency change, not
 *   again after the OVF, so one may have been lost: the cycle ratio (CBR and calibration) is
 *   not known again until the next CBR or calibration, unless cfg.keep_cal_on_ovf.
 * - Reported time never goes back while the time is known: an estimate that ran ahead of a
 *   later exact value holds still until the exact clock catches up (a TSC more than
 *   PT_TIME_SLIP ticks behind is taken as it is: a new run, or a lost stretch of trace).
 * A timestamp is "cycle accurate" when CYC moved it since the last TSC/MTC. */
#ifndef PTREC_PT_TIME_H
#define PTREC_PT_TIME_H

#include <stdint.h>

#include "core/branch.h"

/* Only a pointer is needed here: users that also include libipt's intel-pt.h (which has its
 * own struct ptrec_pt_packet) can include this header without pt_packet.h. */
struct ptrec_pt_packet;

/* How far (TSC ticks) a TSC packet may lie behind the current estimate and still be taken as
 * "the estimate ran ahead" rather than as a new time. */
#define PT_TIME_SLIP 0x10000u

/* What the caller knows about the clocks (0 = unknown, except mtc_freq: see there). */
struct ptrec_pt_time_config {
	uint32_t ctc_den;       /* CPUID.15H:EAX, TSC/crystal ratio denominator */
	uint32_t ctc_num;       /* CPUID.15H:EBX, TSC/crystal ratio numerator */
	uint8_t mtc_freq;       /* IA32_RTIT_CTL.MTCFreq (perf mtc_period), 0..15, taken as given */
	uint8_t nominal_ratio;  /* max non-turbo ratio (MSR_PLATFORM_INFO[15:8]): TSC = ratio*100MHz */
	uint8_t keep_cal_on_ovf; /* the core clock did not change while an overflow lost packets:
	                            keep the cycle ratio across OVF (see OVF above) */
};

/* Timing state. */
struct ptrec_pt_time {
	struct ptrec_pt_time_config cfg; /* clocks as configured */
	uint64_t tsc;              /* reported time in TSC ticks (monotonic while have_tsc) */
	int have_tsc;              /* a TSC packet has been seen (time is known) */
	int cycle_accurate;        /* CYC moved the time since the last TSC/MTC */
	uint32_t cbr;              /* last core:bus ratio (0 = none) */
	uint64_t base_tsc;         /* exact time of the last TSC or MTC */
	int have_ctc;              /* a TMA related the CTC to the TSC (MTCs usable) */
	int ctc_from_tma;          /* the last CTC value came from the TMA, not an MTC */
	uint64_t ctc;              /* CTC (extended past 16 bits) at the last TMA/MTC */
	uint64_t ctc_base;         /* extended CTC of the last TMA */
	uint64_t ctc_base_tsc;     /* TSC at which CTC tick ctc_base began (TSC - FastCounter) */
	int ctc_valid;             /* ctc/ctc_base are a valid extended CTC (for the next TMA) */
	uint8_t mtc_last;          /* payload of the last MTC (valid unless ctc_from_tma) */
	double tsc_per_ctc;        /* TSC ticks per CTC tick, calibrated (ratio not configured) */
	double tsc_per_cyc;        /* TSC ticks per core cycle, calibrated (0 = unknown) */
	uint64_t cal_tsc;          /* cycle calibration: exact time at its start */
	uint64_t cal_cyc;          /* cycles counted since cal_tsc */
	int cal_cyc_valid;         /* cal_tsc is valid */
	int cyc_ref_valid;         /* the time of the last CYC packet is known */
	uint64_t cyc_ref;          /* time of the last CYC packet (whole TSC ticks) */
	double cyc_frac;           /* and the fraction of a tick */
	int calib_dep;             /* a time depended on a calibrated ratio (or on its absence):
	                              the times then depend on trace before the last PSB */
};

/* Resets t with the given clock knowledge (cfg may be NULL = nothing known). */
void ptrec_pt_time_init(struct ptrec_pt_time *t, const struct ptrec_pt_time_config *cfg);

/* Forgets the current time (after an overflow or a resync); calibration is kept. */
void ptrec_pt_time_lost(struct ptrec_pt_time *t);

/* At a PSB: forgets the time of the run so far (the TSC in PSB+ sets it again), keeping the clock
 * calibration.  Times after a PSB then depend only on the packets from that PSB on (and, when
 * a ratio is not configured, on the calibration: see calib_dep), so a decoder that starts at
 * that PSB computes the same times as one that has decoded everything before it. */
void ptrec_pt_time_psb(struct ptrec_pt_time *t);

/* 1 if a and b will compute the same times from the same packets: the same run state (the
 * calibration is left out: it is covered by calib_dep). */
int ptrec_pt_time_same_run(const struct ptrec_pt_time *a, const struct ptrec_pt_time *b);

/* Applies a timing packet (TSC, TMA, MTC, CYC, CBR) or an OVF; other packet types are
 * ignored. */
void ptrec_pt_time_update(struct ptrec_pt_time *t, const struct ptrec_pt_packet *pkt);

/* Largest advance (TSC ticks) one packet may cause: a corrupt payload must not wrap time. */
#define PT_TIME_MAX_STEP (1ull << 52)

/* ptrec_pt_time_update for an MTC with that payload (CTC byte) and for a CYC with that cycle
 * count, for decoders that read them without the packet decoder.  The CYC is inline (with the
 * helpers below): with cycle-accurate tracing the flow decoder meets one before most TNT and
 * TIP packets. */
void ptrec_pt_time_mtc(struct ptrec_pt_time *t, uint64_t payload);

/* A CYC packet's cycles: this CYC's time is the previous CYC's plus the cycles times TSC ticks
 * per core cycle (P1/CBR when both are known, else the calibrated value, noted in calib_dep),
 * and not before the last TSC/MTC; the fraction of a tick is carried to the next CYC. */
static inline void ptrec_pt_time_cyc(struct ptrec_pt_time *t, uint64_t cycles)
{
	if (!t->have_tsc)
		return;
	if (t->cal_cyc_valid)
		t->cal_cyc += cycles;
	double per;
	if (t->cfg.nominal_ratio && t->cbr) {
		per = (double)t->cfg.nominal_ratio / (double)t->cbr;
	} else {
		t->calib_dep = 1;
		per = t->tsc_per_cyc;
	}
	if (!(per > 0)) {
		t->cyc_ref_valid = 0;
		return;
	}
	uint64_t from = t->cyc_ref_valid ? t->cyc_ref : t->base_tsc;
	double frac = t->cyc_ref_valid ? t->cyc_frac : 0;
	double adv = (double)cycles * per + frac;
	uint64_t whole; /* ptrec_pt_time_scale(1, adv) */
	if (!(adv >= 0))
		whole = 0;
	else if (adv >= (double)PT_TIME_MAX_STEP)
		whole = PT_TIME_MAX_STEP;
	else
		whole = (uint64_t)adv;
	uint64_t at = from + whole;
	if (at < from) /* saturate */
		at = UINT64_MAX;
	frac = whole < PT_TIME_MAX_STEP ? adv - (double)whole : 0;
	if (at < t->base_tsc) {
		at = t->base_tsc;
		frac = 0;
	}
	t->cyc_ref = at;
	t->cyc_frac = frac;
	t->cyc_ref_valid = 1;
	if (at > t->tsc)
		t->tsc = at;
	t->cycle_accurate = 1;
}

/* Returns the PTREC_BRF_HAS_TIME / PTREC_BRF_CYCLE flags for the current time and stores the
 * timestamp in *tsc (0 when there is no time).  Inline: the flow decoder reads the clock at
 * every TNT and TIP packet. */
static inline unsigned ptrec_pt_time_now(const struct ptrec_pt_time *t, uint64_t *tsc)
{
	if (!t->have_tsc) {
		*tsc = 0;
		return 0;
	}
	*tsc = t->tsc;
	return PTREC_BRF_HAS_TIME | (t->cycle_accurate ? PTREC_BRF_CYCLE : 0u);
}

/* The ordering of event times: events come in execution order, so a stamp tsc taken at an
 * earlier packet that lies at most PT_TIME_SLIP behind the previous timed event's (ordered)
 * stamp *last is raised to it; a stamp further behind is a new time (lost trace, a new run)
 * and is kept.  Returns the ordered stamp and stores it in *last (0 at the start). */
static inline uint64_t ptrec_pt_time_order(uint64_t *last, uint64_t tsc)
{
	if (tsc < *last && *last - tsc <= PT_TIME_SLIP)
		tsc = *last;
	*last = tsc;
	return tsc;
}

#endif
