/* test_pt_time.c — pt_time.h against the SDM's timing rules ("Tracking Time", the TSC, TMA,
 * MTC, CYC and CBR packet definitions), one rule per case, values computed by hand. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "check.h"
#include "core/branch.h"
#include "decode/pt_packet.h"
#include "decode/pt_time.h"

static void pkt(struct ptrec_pt_time *t, enum ptrec_pt_packet_type type, uint64_t payload, uint64_t payload2)
{
	struct ptrec_pt_packet p;
	memset(&p, 0, sizeof(p));
	p.type = type;
	p.payload = payload;
	p.payload2 = payload2;
	ptrec_pt_time_update(t, &p);
}

static uint64_t now(const struct ptrec_pt_time *t)
{
	uint64_t v;
	ptrec_pt_time_now(t, &v);
	return v;
}

/* MTC: CTC[N+7:N], lower bits 0 at the MTC; time = TSC - FastCounter + CTC delta * ratio. */
static void test_mtc(void)
{
	struct ptrec_pt_time t;
	struct ptrec_pt_time_config cfg = {1, 2, 3, 0, 0}; /* TSC = 2 x CTC, MTCFreq 3 */
	ptrec_pt_time_init(&t, &cfg);
	pkt(&t, PT_PKT_MTC, 0x47, 0); /* before any TSC: no time */
	CHECK_EQ_U64(ptrec_pt_time_now(&t, &(uint64_t){0}), 0);
	pkt(&t, PT_PKT_TSC, 1000, 0);
	pkt(&t, PT_PKT_TMA, 0x1234, 1); /* CTC tick 0x1234 began at TSC 999 */
	CHECK_EQ_U64(now(&t), 1000);
	pkt(&t, PT_PKT_MTC, 0x47, 0); /* CTC 0x1238: 4 ticks after 0x1234 */
	CHECK_EQ_U64(now(&t), 999 + 2 * 4);
	CHECK_EQ_U64(ptrec_pt_time_now(&t, &(uint64_t){0}), PTREC_BRF_HAS_TIME);
	pkt(&t, PT_PKT_MTC, 0x46, 0); /* 255 MTC periods on (the 8-bit field wrapped) */
	CHECK_EQ_U64(now(&t), 999 + 2 * (4 + 255 * 8));
	/* The same value again: an MTC goes out only when the value changes, so this is a
	 * duplicate or 256 lost MTCs, which the SDM does not expect: no advance. */
	pkt(&t, PT_PKT_MTC, 0x46, 0);
	CHECK_EQ_U64(now(&t), 999 + 2 * (4 + 255 * 8));
}

/* MTCFreq > 8: the TMA has CTC[15:0] only, so the MTC's bits above 15 are not compared. */
static void test_mtc_high_freq(void)
{
	struct ptrec_pt_time t;
	struct ptrec_pt_time_config cfg = {1, 2, 9, 0, 0};
	ptrec_pt_time_init(&t, &cfg);
	pkt(&t, PT_PKT_TSC, 100000, 0);
	pkt(&t, PT_PKT_TMA, 0xfe00, 0); /* real CTC 0x1fe00: bit 16 is not in the TMA */
	pkt(&t, PT_PKT_MTC, 0x00, 0);   /* CTC 0x20000 >> 9 = 0x100: payload 0x00, one period */
	CHECK_EQ_U64(now(&t), 100000 + 2 * 0x200);
	pkt(&t, PT_PKT_MTC, 0x01, 0);
	CHECK_EQ_U64(now(&t), 100000 + 2 * 0x400);
}

/* CYC counts cycles since the previous CYC, also across a TSC; P1/CBR TSC ticks per cycle. */
static void test_cyc(void)
{
	struct ptrec_pt_time t;
	struct ptrec_pt_time_config cfg = {0, 0, 3, 20, 0}; /* max non-turbo ratio 20 */
	ptrec_pt_time_init(&t, &cfg);
	pkt(&t, PT_PKT_TSC, 1000, 0);
	pkt(&t, PT_PKT_CBR, 20, 0); /* core at P1: one cycle = one TSC tick */
	pkt(&t, PT_PKT_CYC, 10, 0);
	CHECK_EQ_U64(now(&t), 1010);
	CHECK_EQ_U64(ptrec_pt_time_now(&t, &(uint64_t){0}), PTREC_BRF_HAS_TIME | PTREC_BRF_CYCLE);
	pkt(&t, PT_PKT_TSC, 1050, 0); /* 40 cycles after that CYC, no CYC packet before it */
	CHECK_EQ_U64(ptrec_pt_time_now(&t, &(uint64_t){0}), PTREC_BRF_HAS_TIME);
	pkt(&t, PT_PKT_CYC, 45, 0);   /* 45 cycles since the CYC at 1010: 1055, not 1050 + 45 */
	CHECK_EQ_U64(now(&t), 1055);
	pkt(&t, PT_PKT_CBR, 10, 0);   /* core at half P1: a cycle is 2 ticks */
	pkt(&t, PT_PKT_CYC, 5, 0);
	CHECK_EQ_U64(now(&t), 1065);
	pkt(&t, PT_PKT_CBR, 40, 0);   /* a cycle is half a tick: fractions add up */
	pkt(&t, PT_PKT_CYC, 1, 0);
	pkt(&t, PT_PKT_CYC, 1, 0);
	pkt(&t, PT_PKT_CYC, 1, 0);
	CHECK_EQ_U64(now(&t), 1066);
}

/* Time never goes back: a TSC a little behind an estimate holds it; far behind is new time. */
static void test_monotonic(void)
{
	struct ptrec_pt_time t;
	struct ptrec_pt_time_config cfg = {0, 0, 3, 20, 0};
	ptrec_pt_time_init(&t, &cfg);
	pkt(&t, PT_PKT_TSC, 0x100000, 0);
	pkt(&t, PT_PKT_CBR, 10, 0);
	pkt(&t, PT_PKT_CYC, 10, 0); /* estimate 0x100000 + 20 */
	pkt(&t, PT_PKT_TSC, 0x100000 + 15, 0);
	CHECK_EQ_U64(now(&t), 0x100000 + 20);
	pkt(&t, PT_PKT_CYC, 5, 0);  /* from the last CYC, clamped to the TSC after it: 15 + 10 */
	CHECK_EQ_U64(now(&t), 0x100000 + 25);
	pkt(&t, PT_PKT_TSC, 0x100000 + 25 - PT_TIME_SLIP, 0); /* within the slip: held */
	CHECK_EQ_U64(now(&t), 0x100000 + 25);
	pkt(&t, PT_PKT_TSC, 100, 0); /* far behind: a new run */
	CHECK_EQ_U64(now(&t), 100);
	ptrec_pt_time_lost(&t);
	CHECK_EQ_U64(ptrec_pt_time_now(&t, &(uint64_t){0}), 0);
}

/* Without CPUID.15H the ratio is calibrated from two TSC+TMA pairs; cycles from exact times. */
static void test_calibration(void)
{
	struct ptrec_pt_time t;
	struct ptrec_pt_time_config cfg = {0, 0, 0, 0, 0}; /* MTCFreq 0, nothing else known */
	ptrec_pt_time_init(&t, &cfg);
	pkt(&t, PT_PKT_TSC, 1000, 0);
	pkt(&t, PT_PKT_TMA, 0, 0);
	pkt(&t, PT_PKT_MTC, 50, 0);
	pkt(&t, PT_PKT_CYC, 100, 0);
	CHECK_EQ_U64(now(&t), 1000); /* neither ratio is known yet */
	pkt(&t, PT_PKT_TSC, 1200, 0);
	pkt(&t, PT_PKT_TMA, 100, 0); /* 100 CTC ticks in 200 TSC ticks */
	pkt(&t, PT_PKT_MTC, 110, 0);
	CHECK_EQ_U64(now(&t), 1220);
	/* The first calibration took the 100 cycles in 200 ticks before TSC 1200: 2 per cycle;
	 * from the MTC at 1220 the CYCs run ahead of the next TSC, whose time is then held. */
	for (int i = 0; i < 11; i++)
		pkt(&t, PT_PKT_CYC, 100, 0); /* 1100 cycles ... */
	CHECK_EQ_U64(now(&t), 1220 + 2200);
	pkt(&t, PT_PKT_TSC, 1200 + 2 * 1100, 0); /* ... in 2200 ticks: 2 ticks per cycle */
	pkt(&t, PT_PKT_CYC, 7, 0);
	CHECK_EQ_U64(now(&t), 1220 + 2200); /* 3400 + 14 is behind: held */
	pkt(&t, PT_PKT_CYC, 10, 0);
	CHECK_EQ_U64(now(&t), 1200 + 2200 + 14 + 20);
}

/* "The cycle counter counts during overflows": an OVF loses packets, not time, so MTC and CYC
 * go on from where they were.  But "a CBR is sent after any frequency change", not again after
 * the OVF: the cycle ratio is not known after it until the next CBR or calibration, unless the
 * caller knows the clock did not change (keep_cal_on_ovf). */
static void test_overflow(void)
{
	for (int keep = 0; keep < 2; keep++) {
		struct ptrec_pt_time t;
		struct ptrec_pt_time_config cfg = {1, 4, 4, 0, (uint8_t)keep}; /* TSC = 4 x CTC */
		ptrec_pt_time_init(&t, &cfg);
		pkt(&t, PT_PKT_TSC, 0x1000, 0);
		pkt(&t, PT_PKT_TMA, 0x10, 0x40);  /* CTC tick 0x10 began at TSC 0xfc0 */
		pkt(&t, PT_PKT_MTC, 2, 0);        /* CTC 0x20: 0xfc0 + 0x10 * 4 */
		CHECK_EQ_U64(now(&t), 0x1000);
		pkt(&t, PT_PKT_CYC, 0x100, 0);    /* no ratio yet: no time */
		CHECK_EQ_U64(now(&t), 0x1000);
		/* the first calibration takes what there is: 0x100 cycles in 0x40 ticks */
		pkt(&t, PT_PKT_MTC, 3, 0);
		CHECK_EQ_U64(now(&t), 0x1040);
		pkt(&t, PT_PKT_CYC, 0x80, 0);
		CHECK_EQ_U64(now(&t), 0x1060);
		pkt(&t, PT_PKT_OVF, 0, 0);
		CHECK_EQ_U64(now(&t), 0x1060); /* the time goes on */
		pkt(&t, PT_PKT_CYC, 0x80, 0);
		CHECK_EQ_U64(now(&t), keep ? 0x1080 : 0x1060);
		pkt(&t, PT_PKT_MTC, 4, 0);     /* CTC 0x40 */
		CHECK_EQ_U64(now(&t), 0x1080);
	}
	/* The same with the ratio from CBR: after the OVF only a new CBR gives it again. */
	struct ptrec_pt_time t;
	struct ptrec_pt_time_config cfg = {0, 0, 0, 4, 0}; /* nominal ratio 4 */
	ptrec_pt_time_init(&t, &cfg);
	pkt(&t, PT_PKT_TSC, 0xa000, 0);
	pkt(&t, PT_PKT_CBR, 2, 0); /* 2 TSC ticks per cycle */
	pkt(&t, PT_PKT_CYC, 4, 0);
	CHECK_EQ_U64(now(&t), 0xa008);
	pkt(&t, PT_PKT_OVF, 0, 0);
	pkt(&t, PT_PKT_CYC, 4, 0);
	CHECK_EQ_U64(now(&t), 0xa008);
	pkt(&t, PT_PKT_CBR, 2, 0);
	pkt(&t, PT_PKT_TSC, 0xa100, 0);
	pkt(&t, PT_PKT_CYC, 4, 0);
	CHECK_EQ_U64(now(&t), 0xa108);
}

int main(void)
{
	test_mtc();
	test_mtc_high_freq();
	test_cyc();
	test_monotonic();
	test_calibration();
	test_overflow();
	return check_done();
}
