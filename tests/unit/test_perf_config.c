/* test_perf_config.c — intel_pt config words from fake sysfs trees shaped like the kernel's
 * (format strings of arch/x86/events/intel/pt.c, caps of a Skylake-class part: mtc_periods
 * 0x249, cycle_thresholds 0x3fff, psb_periods 0x3f), including trees lacking MTC or CYC
 * caps.  Expected config values are computed here from the bit positions in those formats:
 * pt 0, cyc 1, fup_on_ptw 5, mtc 9, tsc 10, noretcomp 11, ptw 12, branch 13, mtc_period
 * 14-17, cyc_thresh 19-22, psb_period 24-27. */
#include "config.h"

#include <errno.h>
#include <link.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "check.h"
#include "fake_sysfs.h"
#include "capture/perf_config.h"
#include "ptrec.h"

#define PT_BIT 0x1ull
#define CYC (1ull << 1)
#define FUP_ON_PTW (1ull << 5)
#define MTC (1ull << 9)
#define TSC (1ull << 10)
#define NORETCOMP (1ull << 11)
#define PTW (1ull << 12)
#define BRANCH (1ull << 13)
#define MTC_PERIOD(n) ((uint64_t)(n) << 14)
#define CYC_THRESH(n) ((uint64_t)(n) << 19)
#define PSB_PERIOD(n) ((uint64_t)(n) << 24)

static int load(const char *root, unsigned flags, struct ptrec_pmu *pmu)
{
	fake_sysfs_remove(root);
	if (mkdir(root, 0700) && errno != EEXIST)
		return -1;
	if (fake_sysfs_build(root, flags, 2, 516))
		return -1;
	return ptrec_pmu_read(root, "intel_pt", pmu);
}

static void test_deposit(void)
{
	uint64_t w = 0;

	CHECK_EQ_U64(ptrec_format_deposit(0x3c000, 3, &w), 0);
	CHECK_EQ_U64(w, 0xc000);
	w = 0x1;
	CHECK_EQ_U64(ptrec_format_deposit(0xf000000ffull, 0x1ff, &w), 0);
	CHECK_EQ_U64(w, 0x1000000ffull);                 /* low 8 bits, then bit 32; OR'ed */
	w = 0;
	CHECK_EQ_U64(ptrec_format_deposit(0x3c000, 16, &w), (uint64_t)-PTREC_EINVAL);
	CHECK_EQ_U64(w, 0);
	CHECK_EQ_U64(ptrec_format_deposit(1ull << 63, 1, &w), 0);
	CHECK_EQ_U64(w, 1ull << 63);
}

static void test_full(const char *root)
{
	struct ptrec_pmu pmu;
	struct ptrec_pt_request req;
	struct ptrec_pt_config c;
	char err[256];

	CHECK_EQ_U64(load(root, FAKE_PT_FULL, &pmu), 0);
	ptrec_pt_request_default(&req, 64 << 10);
	CHECK_EQ_U64(ptrec_pt_config_build(&pmu, &req, &c, err, sizeof(err)), 0);
	/* 64 KiB / 8 = 8 KiB per PSB = 2 KiB << 2 */
	CHECK_EQ_U64(c.config, PT_BIT | BRANCH | TSC | MTC | MTC_PERIOD(3) | NORETCOMP |
	                       PSB_PERIOD(2));
	CHECK_EQ_U64(c.config, 0x200ee01);
	CHECK_EQ_U64(c.config1, 0);
	CHECK_EQ_U64(c.config2, 0);
	CHECK_EQ_U64(c.flags, PTREC_PT_BRANCH | PTREC_PT_TSC | PTREC_PT_MTC | PTREC_PT_NORETCOMP |
	                      PTREC_PT_PSB);
	CHECK_EQ_U64(c.mtc_period, 3);
	CHECK_EQ_U64(c.psb_period, 2);
	CHECK(strstr(c.summary, "(no ptw: caps/ptwrite=0)") != NULL);
	CHECK(strstr(c.summary, "psb_period=2 (8 KiB: 8 per ring)") != NULL);
	printf("64 KiB ring: config=0x%llx  %s\n", (unsigned long long)c.config, c.summary);

	/* psb_period against ring size: largest allowed 2 KiB << n with 8 x that <= ring. */
	static const struct { size_t ring; unsigned psb; } sizes[] = {
		{4 << 10, 0},      /* too small for 8 even at 2 KiB: the fastest rate, 0 */
		{16 << 10, 0},     /* 8 x 2 KiB */
		{32 << 10, 1},     /* 8 x 4 KiB */
		{1 << 20, 5},      /* 128 KiB would fit but psb_periods = 0x3f stops at 5 (64 KiB) */
		{128 << 20, 5},
	};
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		ptrec_pt_request_default(&req, sizes[i].ring);
		CHECK_EQ_U64(ptrec_pt_config_build(&pmu, &req, &c, err, sizeof(err)), 0);
		CHECK_EQ_U64(c.psb_period, sizes[i].psb);
		CHECK_EQ_U64(c.config & PSB_PERIOD(0xf), PSB_PERIOD(sizes[i].psb));
	}

	/* MTC period: an allowed encoding is used as is, else the nearest allowed above, else
	 * the largest below (mtc_periods 0x249 = {0, 3, 6, 9}). */
	ptrec_pt_request_default(&req, 64 << 10);
	req.mtc_period = 4;
	ptrec_pt_config_build(&pmu, &req, &c, err, sizeof(err));
	CHECK_EQ_U64(c.mtc_period, 6);
	CHECK_EQ_U64(c.config & MTC_PERIOD(0xf), MTC_PERIOD(6));
	req.mtc_period = 10;
	ptrec_pt_config_build(&pmu, &req, &c, err, sizeof(err));
	CHECK_EQ_U64(c.mtc_period, 9);
	req.mtc_period = 0;
	ptrec_pt_config_build(&pmu, &req, &c, err, sizeof(err));
	CHECK_EQ_U64(c.mtc_period, 0);
	CHECK(c.config & MTC);

	/* Cycle-accurate mode: cyc_thresh validated against caps/cycle_thresholds = 0x3fff. */
	ptrec_pt_request_default(&req, 64 << 10);
	req.cyc = 1;
	req.cyc_thresh = 2;
	CHECK_EQ_U64(ptrec_pt_config_build(&pmu, &req, &c, err, sizeof(err)), 0);
	CHECK(c.config & CYC);
	CHECK_EQ_U64(c.config & CYC_THRESH(0xf), CYC_THRESH(2));
	CHECK(c.flags & PTREC_PT_CYC);
	req.cyc_thresh = 14;
	CHECK_EQ_U64(ptrec_pt_config_build(&pmu, &req, &c, err, sizeof(err)),
	             (uint64_t)-PTREC_EINVAL);
	CHECK(strstr(err, "cyc_thresh encoding 14 is not in caps/cycle_thresholds") != NULL);

	/* Without noretcomp the bit stays clear. */
	ptrec_pt_request_default(&req, 64 << 10);
	req.noretcomp = 0;
	ptrec_pt_config_build(&pmu, &req, &c, err, sizeof(err));
	CHECK(!(c.config & NORETCOMP));
}

static void test_no_mtc(const char *root)
{
	struct ptrec_pmu pmu;
	struct ptrec_pt_request req;
	struct ptrec_pt_config c;
	char err[256];

	CHECK_EQ_U64(load(root, FAKE_PT_NO_MTC, &pmu), 0);
	ptrec_pt_request_default(&req, 64 << 10);
	CHECK_EQ_U64(ptrec_pt_config_build(&pmu, &req, &c, err, sizeof(err)), 0);
	CHECK_EQ_U64(c.config, PT_BIT | BRANCH | TSC | NORETCOMP | PSB_PERIOD(2));
	CHECK(!(c.flags & PTREC_PT_MTC));
	CHECK(strstr(c.summary, "(no mtc: caps/mtc=0)") != NULL);
}

static void test_no_cyc(const char *root)
{
	struct ptrec_pmu pmu;
	struct ptrec_pt_request req;
	struct ptrec_pt_config c;
	char err[256];

	CHECK_EQ_U64(load(root, FAKE_PT_NO_CYC, &pmu), 0);
	ptrec_pt_request_default(&req, 64 << 10);
	req.cyc = 1;
	req.cyc_thresh = 2;
	CHECK_EQ_U64(ptrec_pt_config_build(&pmu, &req, &c, err, sizeof(err)), 0);
	/* No configurable PSB either: psb_period stays 0 (the CPU's fixed rate). */
	CHECK_EQ_U64(c.config, PT_BIT | BRANCH | TSC | MTC | MTC_PERIOD(3) | NORETCOMP);
	CHECK(!(c.flags & (PTREC_PT_CYC | PTREC_PT_PSB)));
	CHECK(strstr(c.summary, "(no cyc: caps/psb_cyc=0)") != NULL);
	CHECK(strstr(c.summary, "psb_period not configurable") != NULL);
}

static void test_ptwrite(const char *root)
{
	struct ptrec_pmu pmu;
	struct ptrec_pt_request req;
	struct ptrec_pt_config c;
	char err[256];

	CHECK_EQ_U64(load(root, FAKE_PT_FULL | FAKE_PT_PTWRITE, &pmu), 0);
	ptrec_pt_request_default(&req, 64 << 10);
	CHECK_EQ_U64(ptrec_pt_config_build(&pmu, &req, &c, err, sizeof(err)), 0);
	CHECK_EQ_U64(c.config & (PTW | FUP_ON_PTW), PTW | FUP_ON_PTW);
	CHECK(c.flags & PTREC_PT_PTW);
	req.ptw = 0;
	ptrec_pt_config_build(&pmu, &req, &c, err, sizeof(err));
	CHECK_EQ_U64(c.config & (PTW | FUP_ON_PTW), 0);
}

static void test_odd_formats(const char *root)
{
	struct ptrec_pmu pmu;
	struct ptrec_pt_request req;
	struct ptrec_pt_config c;
	char err[256], path[4200];

	/* A field in config1 lands in config1. */
	CHECK_EQ_U64(load(root, FAKE_PT_FULL, &pmu), 0);
	fake_sysfs_write(root, "sys/bus/event_source/devices/intel_pt/format/psb_period",
	                 "config1:4-7\n");
	ptrec_pmu_read(root, "intel_pt", &pmu);
	ptrec_pt_request_default(&req, 64 << 10);
	CHECK_EQ_U64(ptrec_pt_config_build(&pmu, &req, &c, err, sizeof(err)), 0);
	CHECK_EQ_U64(c.config1, 2u << 4);
	CHECK_EQ_U64(c.config & PSB_PERIOD(0xf), 0);

	/* A psb_period field too narrow for the encoding: refused, not truncated. */
	fake_sysfs_write(root, "sys/bus/event_source/devices/intel_pt/format/psb_period",
	                 "config:24\n");
	ptrec_pmu_read(root, "intel_pt", &pmu);
	CHECK_EQ_U64(ptrec_pt_config_build(&pmu, &req, &c, err, sizeof(err)),
	             (uint64_t)-PTREC_EINVAL);

	/* No branch field: not an intel_pt we can drive. */
	snprintf(path, sizeof(path), "%s/sys/bus/event_source/devices/intel_pt/format/branch", root);
	CHECK_EQ_U64(remove(path), 0);
	ptrec_pmu_read(root, "intel_pt", &pmu);
	CHECK_EQ_U64(ptrec_pt_config_build(&pmu, &req, &c, err, sizeof(err)),
	             (uint64_t)-PTREC_ENOSUPP);
	CHECK(strstr(err, "format/branch") != NULL);

	/* Absent PMU. */
	fake_sysfs_remove(root);
	ptrec_pmu_read(root, "intel_pt", &pmu);
	CHECK_EQ_U64(ptrec_pt_config_build(&pmu, &req, &c, err, sizeof(err)),
	             (uint64_t)-PTREC_ENOSUPP);
}

/* The executable segments of the main program, as the dynamic loader reports them. */
struct exec_segs {
	unsigned n;
	unsigned long long off[8], size[8];
};

static int first_object(struct dl_phdr_info *info, size_t sz, void *arg)
{
	struct exec_segs *e = arg;

	(void)sz;
	for (unsigned i = 0; i < info->dlpi_phnum && e->n < 8; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && ph->p_filesz) {
			e->off[e->n] = ph->p_offset;
			e->size[e->n++] = ph->p_filesz;
		}
	}
	return 1; /* the first object is the main program */
}

static void test_filter(void)
{
	char out[2048], err[256], want[2048] = "";
	struct exec_segs e = {0};

	/* The kernel's own syntax passes through. */
	CHECK_EQ_U64(ptrec_pt_filter_build("filter 0x1000/0x200@/usr/bin/server", out, sizeof(out),
	                                   err, sizeof(err)), 1);
	CHECK_STR(out, "filter 0x1000/0x200@/usr/bin/server");

	/* "filter * @ PATH": every executable PT_LOAD of PATH, by file offset and size. */
	dl_iterate_phdr(first_object, &e);
	CHECK(e.n >= 1);
	for (unsigned i = 0; i < e.n; i++) {
		size_t used = strlen(want);
		snprintf(want + used, sizeof(want) - used, "%sfilter 0x%llx/0x%llx@/proc/self/exe",
		         i ? "," : "", e.off[i], e.size[i]);
	}
	CHECK_EQ_U64(ptrec_pt_filter_build("filter * @ /proc/self/exe", out, sizeof(out), err,
	                                   sizeof(err)), e.n);
	CHECK_STR(out, want);
	printf("whole-object filter: %s\n", out);

	/* Several items, mixed. */
	CHECK_EQ_U64(ptrec_pt_filter_build(" stop 0x10@/bin/true , filter *@/proc/self/exe", out,
	                                   sizeof(out), err, sizeof(err)), e.n + 1);
	CHECK(strncmp(out, "stop 0x10@/bin/true,filter 0x", 29) == 0);

	/* Errors name the cause. */
	CHECK_EQ_U64(ptrec_pt_filter_build("filter * @ /nonexistent/server", out, sizeof(out), err,
	                                   sizeof(err)), (uint64_t)-PTREC_EINVAL);
	CHECK(strstr(err, "/nonexistent/server") != NULL);
	const char *src = getenv("top_srcdir");
	if (src) {
		char spec[4200];
		snprintf(spec, sizeof(spec), "filter * @ %s/tests/common/check.h", src);
		CHECK_EQ_U64(ptrec_pt_filter_build(spec, out, sizeof(out), err, sizeof(err)),
		             (uint64_t)-PTREC_EINVAL);
		CHECK(strstr(err, "not an ELF file") != NULL);
	}
	CHECK_EQ_U64(ptrec_pt_filter_build("filter * /bin/true", out, sizeof(out), err,
	                                   sizeof(err)), (uint64_t)-PTREC_EINVAL);
	CHECK_EQ_U64(ptrec_pt_filter_build(" , ", out, sizeof(out), err, sizeof(err)),
	             (uint64_t)-PTREC_EINVAL);
	CHECK_EQ_U64(ptrec_pt_filter_build(NULL, out, sizeof(out), err, sizeof(err)),
	             (uint64_t)-PTREC_EINVAL);
	CHECK_EQ_U64(ptrec_pt_filter_build("filter * @ /proc/self/exe", out, 16, err, sizeof(err)),
	             (uint64_t)-PTREC_EINVAL);
}

int main(void)
{
	test_filter();
	char root[4096];

	test_deposit();
	if (fake_sysfs_tmpdir(root, sizeof(root)))
		SKIP("cannot create a temporary directory: %s", strerror(errno));
	test_full(root);
	test_no_mtc(root);
	test_no_cyc(root);
	test_ptwrite(root);
	test_odd_formats(root);
	fake_sysfs_remove(root);
	return check_done();
}
