/* arm_sysfs.h — what an arm64 Linux kernel says about its CPU and its branch-trace hardware,
 * read under a root prefix like pmu_sysfs.h (so `ptrec info --root DIR` and the tests read a
 * tree built to order, and an x86-64 build reads an arm64 machine's tree):
 *
 *   the CPU:  ROOT/sys/devices/system/cpu/cpuN/regs/identification/midr_el1 ("0x%016llx",
 *             Documentation/ABI/testing/sysfs-devices-system-cpu), else ROOT/proc/cpuinfo's
 *             "CPU implementer/variant/part/revision" lines (arch/arm64/kernel/cpuinfo.c);
 *   CoreSight: ROOT/sys/bus/event_source/devices/cs_etm (the perf PMU of the ETM/ETE trace
 *             units: type, format/, sinks/), ROOT/sys/bus/coresight/devices/{etmN,eteN,trbeN}
 *             (ETMv4 and ETE sources, TRBE per-CPU sinks: Documentation/trace/coresight/,
 *             Documentation/ABI/testing/sysfs-bus-coresight-devices-trbe);
 *   BRBE:     caps/branches of an arm CPU PMU (ROOT/sys/bus/event_source/devices/armv8_* or
 *             armv9_*), shown by drivers/perf/arm_pmuv3.c only where BRBE was probed: the
 *             number of branch records.
 *
 * MIDR_EL1 (Arm ARM D23.2): Implementer [31:24], Variant [23:20], Architecture [19:16]
 * (0xF on every Armv8/v9 core: "defined by the ID registers"), PartNum [15:4], Revision [3:0].
 * Not async-signal-safe (opendir, stdio); runs in the tool. */
#ifndef PTREC_ARM_SYSFS_H
#define PTREC_ARM_SYSFS_H

#include <stddef.h>
#include <stdint.h>

#include "platform/pmu_sysfs.h"

/* One MIDR_EL1 value and its fields. */
struct ptrec_midr {
	uint64_t value;         /* the register (bits 63:32 are RES0) */
	unsigned implementer;   /* [31:24], e.g. 0x41 Arm, 0xc0 Ampere */
	unsigned variant;       /* [23:20] major revision ("r" of rNpM) */
	unsigned architecture;  /* [19:16] */
	unsigned part;          /* [15:4], e.g. 0xd0c Neoverse N1 */
	unsigned revision;      /* [3:0] minor revision ("p" of rNpM) */
};

/* Splits v into its fields.  Pure. */
void ptrec_midr_decode(uint64_t v, struct ptrec_midr *m);

/* The implementer's name ("Arm", "Ampere", ...) or NULL; the part's name ("Neoverse N1") or
 * NULL, for the parts of server and VM hosts this table knows. */
const char *ptrec_midr_implementer_name(unsigned implementer);
const char *ptrec_midr_part_name(unsigned implementer, unsigned part);

/* Parses an arm64 /proc/cpuinfo text: the MIDR of each "processor" block, composed from its
 * CPU implementer, variant, part and revision lines (Architecture 0xF: the kernel's "CPU
 * architecture: 8" line is a constant).  Stores up to max values in out; returns how many
 * blocks had all four lines. */
unsigned ptrec_cpuinfo_midrs(const char *text, uint64_t *out, unsigned max);

#define PTREC_ARM_KINDS_MAX 4    /* distinct MIDR values kept (big.LITTLE: 2 or 3) */
#define PTREC_ARM_NAMES_MAX 16   /* sink or PMU names kept */

enum ptrec_midr_source { PTREC_MIDR_NONE = 0, PTREC_MIDR_SYSFS, PTREC_MIDR_CPUINFO };

/* One kind of core: a MIDR value and how many CPUs have it. */
struct ptrec_arm_kind {
	struct ptrec_midr midr;
	unsigned cpus;
};

/* An arm CPU PMU (arm_pmuv3): its name, type and BRBE branch records. */
struct ptrec_arm_cpu_pmu {
	char name[PTREC_PMU_NAME_MAX]; /* "armv8_pmuv3_0", "armv9_neoverse_v2" */
	int type;                      /* perf_event_attr.type, -1 if unreadable */
	long branches;                 /* caps/branches (BRBE records), 0 if absent */
};

struct ptrec_arm_info {
	enum ptrec_midr_source source;  /* where the MIDRs came from */
	unsigned cpus;                  /* CPUs whose MIDR was read */
	unsigned nkinds;                /* distinct MIDRs, in order of first CPU */
	struct ptrec_arm_kind kinds[PTREC_ARM_KINDS_MAX];

	struct ptrec_pmu cs_etm;        /* the CoreSight perf PMU (present = 0 if absent) */
	unsigned nsinks;                /* cs_etm/sinks/ names, sorted */
	char sinks[PTREC_ARM_NAMES_MAX][PTREC_PMU_NAME_MAX];
	unsigned etm, ete, trbe;        /* coresight bus devices etmN, eteN, trbeN */

	unsigned ncpu_pmus;             /* arm CPU PMUs, sorted by name */
	struct ptrec_arm_cpu_pmu cpu_pmus[PTREC_ARM_KINDS_MAX];
	int brbe;                       /* index of the CPU PMU with the most BRBE records, or -1 */
};

/* 1 if the tree under root describes an arm64 CPU (a midr_el1 file of cpu0..cpu3, or "CPU
 * implementer" in proc/cpuinfo), else 0. */
int ptrec_arm_tree(const char *root);

/* Reads everything above under root into a (always fully initialized).  Returns 0. */
int ptrec_arm_read(const char *root, struct ptrec_arm_info *a);

/* "Arm Neoverse N1 r3p1" (or "implementer 0x12 part 0x345 r0p0") into buf; returns buf. */
const char *ptrec_midr_words(const struct ptrec_midr *m, char *buf, size_t len);

/* Why libptrec does not record with the CoreSight trace units (ETM/ETE through cs_etm) or
 * with BRBE on this machine: what the kernel offers, then that capture is not implemented yet.
 * Always a reason (both are a later step); returns reason. */
const char *ptrec_coresight_reason(const struct ptrec_arm_info *a, char *reason, size_t len);
const char *ptrec_brbe_reason(const struct ptrec_arm_info *a, char *reason, size_t len);

#endif
