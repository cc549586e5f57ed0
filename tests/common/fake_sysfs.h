/* fake_sysfs.h — test helper: builds a sysfs/procfs-like tree under a temporary root, shaped
 * like the kernel's (intel_pt format strings as in arch/x86/events/intel/pt.c, caps printed in
 * hex), so that pmu_sysfs, perf_config and `ptrec info --root` can be tested without the
 * hardware. */
#ifndef PTREC_TEST_FAKE_SYSFS_H
#define PTREC_TEST_FAKE_SYSFS_H

#include <stddef.h>

#define FAKE_PT_FULL    0x01u /* intel_pt with Skylake-class caps (CPUID 14H of an i5-8350U) */
#define FAKE_PT_NO_MTC  0x02u /* ... but caps/mtc = 0 and caps/mtc_periods = 0 */
#define FAKE_PT_NO_CYC  0x04u /* ... but caps/psb_cyc = 0, no cycle thresholds/PSB periods */
#define FAKE_PT_PTWRITE 0x08u /* ... and caps/ptwrite = 1 */
#define FAKE_BTS        0x10u /* intel_bts (type only) */

/* Creates a fresh directory (under $top_builddir if set, else $TMPDIR or /tmp) and writes
 * its path to buf.  Returns 0 or -1 with errno. */
int fake_sysfs_tmpdir(char *buf, size_t len);

/* Writes text to ROOT/rel, creating directories.  Returns 0 or -1. */
int fake_sysfs_write(const char *root, const char *rel, const char *text);

/* Builds the PMUs named by flags (FAKE_*) plus perf_event_paranoid, perf_event_mlock_kb and
 * a 2-CPU online list.  Returns 0 or -1. */
int fake_sysfs_build(const char *root, unsigned flags, int paranoid, long mlock_kb);

/* Removes the tree (rm -rf).  Refuses paths that do not contain "ptrec-fake". */
void fake_sysfs_remove(const char *root);

#endif
