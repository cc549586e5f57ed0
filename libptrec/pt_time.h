/* pt_time.h — Intel PT timing: TSC, MTC+TMA and CYC packets turned into a TSC-domain timestamp.
 * Pure: no I/O, no allocation.
 *
 * - TSC sets the time (56 bits, as the packet carries them).
 * - TMA gives the CTC (crystal clock) and FastCounter values at the preceding TSC; each MTC then
 *   carries CTC bits [mtc_freq+7:mtc_freq] and advances the time by the CTC delta times the
 *   TSC/crystal ratio: CPUID.15H EBX/EAX when the caller knows it, else the ratio is calibrated
 *   from consecutive TSC packets with MTCs between them (until then MTC does not move time).
 * - CYC counts core cycles since the last timing packet; cycles become TSC ticks with
 *   nominal_ratio / CBR when both are known, else with a ratio calibrated between TSC/MTC
 *   updates (until then CYC does not move time).
 * A timestamp is "cycle accurate" when CYC contributed to it since the last TSC/MTC. */
#ifndef PTREC_PT_TIME_H
#define PTREC_PT_TIME_H

#include <stdint.h>

/* Only a pointer is needed here: users that also include libipt's intel-pt.h (which has its
 * own struct pt_packet) can include this header without pt_packet.h. */
struct pt_packet;

/* What the caller knows about the clocks (0 = unknown). */
struct pt_time_config {
	uint32_t ctc_den;       /* CPUID.15H:EAX, TSC/crystal ratio denominator */
	uint32_t ctc_num;       /* CPUID.15H:EBX, TSC/crystal ratio numerator */
	uint8_t mtc_freq;       /* IA32_RTIT_CTL.MTCFreq: MTC every 2^mtc_freq CTC ticks */
	uint8_t nominal_ratio;  /* max non-turbo ratio (MSR_PLATFORM_INFO[15:8]): TSC = ratio*100MHz */
};

/* Timing state. */
struct pt_time {
	struct pt_time_config cfg; /* clocks as configured */
	uint64_t tsc;              /* current time in TSC ticks */
	int have_tsc;              /* a TSC packet has been seen */
	int cycle_accurate;        /* CYC moved the time since the last TSC/MTC */
	uint32_t cbr;              /* last core:bus ratio (0 = none) */
	int have_tma;              /* a TMA followed the last TSC */
	uint64_t ctc;              /* CTC value (extended, monotonic) at the last TMA/MTC */
	uint64_t base_tsc;         /* TSC at the CTC base (last TMA, corrected by FastCounter) */
	uint64_t base_ctc;         /* CTC at base_tsc */
	double tsc_per_ctc;        /* TSC ticks per CTC tick (0 = unknown) */
	double tsc_per_cyc;        /* TSC ticks per core cycle (0 = unknown) */
	uint64_t cal_tsc;          /* calibration: TSC at the last TSC packet */
	uint64_t cal_ctc;          /* calibration: CTC at that TSC packet */
	int cal_valid;             /* calibration point is valid */
	uint64_t cyc_since;        /* cycles counted since the last TSC/MTC */
	uint64_t cyc_tsc;          /* TSC at the last TSC/MTC (CYC base) */
};

/* Resets t with the given clock knowledge (cfg may be NULL = nothing known). */
void pt_time_init(struct pt_time *t, const struct pt_time_config *cfg);

/* Forgets the current time (after an overflow or a resync); calibration is kept. */
void pt_time_lost(struct pt_time *t);

/* Applies a timing packet (TSC, TMA, MTC, CYC, CBR); other packet types are ignored. */
void pt_time_update(struct pt_time *t, const struct pt_packet *pkt);

/* Returns the PTREC_BRF_HAS_TIME / PTREC_BRF_CYCLE flags for the current time and stores the
 * timestamp in *tsc (0 when there is no time). */
unsigned pt_time_now(const struct pt_time *t, uint64_t *tsc);

#endif
