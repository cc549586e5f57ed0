/* perf_config.h — the perf_event_attr config words for the intel_pt PMU, built from its sysfs
 * format/ specs (where each field lives) and validated against its caps/ (which values the
 * CPU allows).  Pure given a struct ptrec_pmu; runs at init, not in the crash path. */
#ifndef PTREC_PERF_CONFIG_H
#define PTREC_PERF_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "platform/pmu_sysfs.h"

/* What to ask for.  ptrec_pt_request_default() fills the recorder's choice. */
struct ptrec_pt_request {
	size_t ring_size;     /* AUX ring bytes; psb_period is chosen so it holds >= 8 PSBs */
	int mtc;              /* 1: MTC timing packets when caps/mtc allows */
	unsigned mtc_period;  /* MTC period encoding wanted (the nearest allowed one is used) */
	int cyc;              /* 1: cycle-accurate mode (CYC packets) when caps/psb_cyc allows */
	unsigned cyc_thresh;  /* CycThresh encoding; must be in caps/cycle_thresholds */
	int noretcomp;        /* 1: disable return compression (a TIP per RET): the decoder can
	                         start at any PSB without knowing the call stack */
	int ptw;              /* 1: PTWRITE packets (with FUP) when caps/ptwrite allows */
};

/* Bits of ptrec_pt_config.flags: what the config enables. */
#define PTREC_PT_BRANCH    0x01u
#define PTREC_PT_TSC       0x02u
#define PTREC_PT_MTC       0x04u
#define PTREC_PT_CYC       0x08u
#define PTREC_PT_NORETCOMP 0x10u
#define PTREC_PT_PTW       0x20u
#define PTREC_PT_PSB       0x40u /* psb_period was set (else the CPU's fixed PSB rate) */

/* The result. */
struct ptrec_pt_config {
	uint64_t config;      /* perf_event_attr.config */
	uint64_t config1;     /* perf_event_attr.config1 */
	uint64_t config2;     /* perf_event_attr.config2 */
	unsigned flags;       /* PTREC_PT_* */
	unsigned mtc_period;  /* MTC period encoding used (valid with PTREC_PT_MTC) */
	unsigned cyc_thresh;  /* CycThresh encoding used (valid with PTREC_PT_CYC) */
	unsigned psb_period;  /* PSBFreq encoding used (valid with PTREC_PT_PSB): a PSB about
	                         every 2 KiB << psb_period of trace */
	char summary[256];    /* e.g. "pt branch tsc mtc mtc_period=3 noretcomp psb_period=2
	                         (8 KiB: 8 per 64 KiB ring)"; what was left out and why */
};

/* The recorder's request for a ring of ring_size bytes: branch, tsc, mtc (period 3),
 * noretcomp, ptw when available, no cyc. */
void ptrec_pt_request_default(struct ptrec_pt_request *req, size_t ring_size);

/* Puts value into the bits of mask (lowest value bit into the lowest mask bit) and ORs the
 * result into *word.  Returns 0, or -PTREC_EINVAL if value does not fit. */
int ptrec_format_deposit(uint64_t mask, uint64_t value, uint64_t *word);

/* Builds the config for pmu (an intel_pt PMU read by ptrec_pmu_read).  Features the caps do
 * not allow are left out and named in summary.  Returns 0, -PTREC_ENOSUPP (pmu absent, or a
 * required format field "branch"/"tsc" missing or unparsable; err says which), or
 * -PTREC_EINVAL (an explicit value the caps forbid, e.g. a cyc_thresh encoding not in
 * caps/cycle_thresholds). */
int ptrec_pt_config_build(const struct ptrec_pmu *pmu, const struct ptrec_pt_request *req,
                          struct ptrec_pt_config *out, char *err, size_t errlen);

/* Turns a PTREC_FILTER value into the kernel's address-filter string for
 * PERF_EVENT_IOC_SET_FILTER.  Accepted forms, several separated by ',':
 *   "filter * @ PATH"  (perf's whole-object form): one "filter OFFSET/SIZE@PATH" per
 *                      executable PT_LOAD segment of the ELF file PATH (file offsets, as the
 *                      kernel expects);
 *   anything else      is passed through (the kernel's own syntax, e.g.
 *                      "filter 0x1000/0x200@/usr/bin/server", "start 0x400@/bin/x").
 * Returns the number of filters (>= 1), or -PTREC_EINVAL (empty spec, PATH unreadable or not
 * a 64-bit ELF file, no executable segment, out too small) with the cause in err. */
int ptrec_pt_filter_build(const char *spec, char *out, size_t outlen, char *err,
                          size_t errlen);

#endif
