/* test_pmu_sysfs.c — perf format specs, and PMU/limit reading against a tree the test builds
 * in a temporary directory (the layout of the kernel's intel_pt driver: format strings as in
 * arch/x86/events/intel/pt.c, caps printed with "%x"). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "platform/pmu_sysfs.h"
#include "ptrec.h"
#include "fake_sysfs.h"

static void test_format_parse(void)
{
	enum ptrec_pmu_word w;
	uint64_t m;

	CHECK_EQ_U64(ptrec_pmu_format_parse("config:0", &w, &m), 0);
	CHECK_EQ_U64(w, PTREC_PMU_CONFIG);
	CHECK_EQ_U64(m, 0x1);
	CHECK_EQ_U64(ptrec_pmu_format_parse("config:14-17", &w, &m), 0);
	CHECK_EQ_U64(m, 0x3c000);
	CHECK_EQ_U64(ptrec_pmu_format_parse("config:55\n", &w, &m), 0);
	CHECK_EQ_U64(m, 1ull << 55);
	CHECK_EQ_U64(ptrec_pmu_format_parse("config1:0-31", &w, &m), 0);
	CHECK_EQ_U64(w, PTREC_PMU_CONFIG1);
	CHECK_EQ_U64(m, 0xffffffffull);
	CHECK_EQ_U64(ptrec_pmu_format_parse("config2:63", &w, &m), 0);
	CHECK_EQ_U64(w, PTREC_PMU_CONFIG2);
	CHECK_EQ_U64(m, 1ull << 63);
	CHECK_EQ_U64(ptrec_pmu_format_parse("config:0-7,32-35", &w, &m), 0);
	CHECK_EQ_U64(m, 0xf000000ffull);
	CHECK_EQ_U64(ptrec_pmu_format_parse("config:0-63", &w, &m), 0);
	CHECK_EQ_U64(m, ~0ull);

	static const char *const bad[] = {"config:", "config", "config4:1", "confi:1",
		"config:64", "config:7-3", "config:1-", "config:-1", "config:1,", "config:1 x",
		"event:1", ":1", "config:1-2-3", ""};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = ptrec_pmu_format_parse(bad[i], &w, &m);
		if (rc != -PTREC_EFORMAT)
			fprintf(stderr, "accepted bad spec '%s'\n", bad[i]);
		CHECK_EQ_U64(rc, (uint64_t)-PTREC_EFORMAT);
	}
}

static void test_cpulist(void)
{
	CHECK_EQ_U64(ptrec_cpulist_count("0\n"), 1);
	CHECK_EQ_U64(ptrec_cpulist_count("0-1\n"), 2);
	CHECK_EQ_U64(ptrec_cpulist_count("0-3,6,8-9\n"), 7);
	CHECK_EQ_U64(ptrec_cpulist_count(""), 0);
	CHECK_EQ_U64(ptrec_cpulist_count("3-1"), (uint64_t)-PTREC_EFORMAT);
	CHECK_EQ_U64(ptrec_cpulist_count("a"), (uint64_t)-PTREC_EFORMAT);
	CHECK_EQ_U64(ptrec_cpulist_count("0-"), (uint64_t)-PTREC_EFORMAT);
	CHECK_EQ_U64(ptrec_cpulist_count("0,,1"), (uint64_t)-PTREC_EFORMAT);
}

static void test_full_tree(const char *root)
{
	struct ptrec_pmu pt, bts;

	CHECK(fake_sysfs_build(root, FAKE_PT_FULL | FAKE_BTS, 2, 516) == 0);
	fake_sysfs_write(root, "sys/devices/system/cpu/online", "0-3,6,8-9\n");
	fake_sysfs_write(root, "proc/sys/kernel/core_pattern",
	                 "|/usr/lib/systemd/systemd-coredump %P %u %g %s %t %c %h\n");
	fake_sysfs_write(root, "proc/sys/kernel/core_uses_pid", "0\n");
	fake_sysfs_write(root, "proc/self/status",
	                 "Name:\ttest\nCapInh:\t0000000000000000\nCapPrm:\t0000000000004000\n"
	                 "CapEff:\t0000000000004000\nCapBnd:\t000001ffffffffff\n");

	CHECK_EQ_U64(ptrec_pmu_read(root, "intel_pt", &pt), 0);
	CHECK_EQ_U64(pt.present, 1);
	CHECK_EQ_U64(pt.type, 8);
	CHECK_STR(pt.name, "intel_pt");

	/* caps, sorted by name, parsed as hex */
	const struct ptrec_pmu_cap *c = ptrec_pmu_cap(&pt, "mtc_periods");
	CHECK(c && c->valid);
	if (c) {
		CHECK_STR(c->text, "249");
		CHECK_EQ_U64(c->value, 0x249);
	}
	c = ptrec_pmu_cap(&pt, "cycle_thresholds");
	CHECK(c && c->valid && c->value == 0x3fff);
	c = ptrec_pmu_cap(&pt, "psb_periods");
	CHECK(c && c->valid && c->value == 0x3f);
	c = ptrec_pmu_cap(&pt, "ptwrite");
	CHECK(c && c->valid && c->value == 0);
	CHECK(ptrec_pmu_cap(&pt, "no_such_cap") == NULL);
	for (unsigned i = 1; i < pt.ncaps; i++)
		CHECK(strcmp(pt.caps[i - 1].name, pt.caps[i].name) < 0);
	CHECK_STR(pt.caps[0].name, "cr3_filtering");

	/* formats */
	const struct ptrec_pmu_format *f = ptrec_pmu_format(&pt, "mtc_period");
	CHECK(f && f->valid);
	if (f) {
		CHECK_STR(f->spec, "config:14-17");
		CHECK_EQ_U64(f->word, PTREC_PMU_CONFIG);
		CHECK_EQ_U64(f->mask, 0xfull << 14);
	}
	f = ptrec_pmu_format(&pt, "psb_period");
	CHECK(f && f->valid && f->mask == 0xfull << 24);
	f = ptrec_pmu_format(&pt, "branch");
	CHECK(f && f->valid && f->mask == 1ull << 13);
	fake_sysfs_write(root, "sys/bus/event_source/devices/intel_pt/format/broken", "cfg:1\n");
	CHECK_EQ_U64(ptrec_pmu_read(root, "intel_pt", &pt), 0);
	f = ptrec_pmu_format(&pt, "broken");
	CHECK(f && !f->valid);                      /* kept, marked invalid */
	CHECK_EQ_U64(pt.nformats, 15);              /* 14 kernel formats + "broken" */

	CHECK_EQ_U64(ptrec_pmu_read(root, "intel_bts", &bts), 0);
	CHECK_EQ_U64(bts.type, 9);
	CHECK_EQ_U64(bts.ncaps, 0);
	CHECK_EQ_U64(bts.nformats, 0);

	struct ptrec_sys sys;
	CHECK_EQ_U64(ptrec_sys_read(root, &sys), 0);
	CHECK_EQ_U64(sys.paranoid_valid, 1);
	CHECK_EQ_U64(sys.paranoid, 2);
	CHECK_EQ_U64(sys.mlock_kb, 516);
	CHECK_EQ_U64(sys.online_cpus, 7);
	CHECK_STR(sys.core_pattern, "|/usr/lib/systemd/systemd-coredump %P %u %g %s %t %c %h");
	CHECK_EQ_U64(sys.core_uses_pid, 0);
	CHECK_EQ_U64(sys.cap_valid, 1);
	CHECK_EQ_U64(sys.cap_eff, 0x4000);
	CHECK_EQ_U64(sys.cap_ipc_lock, 1);
	CHECK_EQ_U64(sys.cap_sys_admin, 0);
	CHECK_EQ_U64(sys.cap_perfmon, 0);

	/* rlimits are this process's own */
	struct rlimit rl;
	getrlimit(RLIMIT_MEMLOCK, &rl);
	CHECK_EQ_U64(sys.memlock_cur, rl.rlim_cur == RLIM_INFINITY ? PTREC_RLIM_UNLIMITED
	                                                            : (uint64_t)rl.rlim_cur);
	rl.rlim_cur = 0;
	getrlimit(RLIMIT_CORE, &rl);
	if (rl.rlim_cur != RLIM_INFINITY) {
		struct rlimit lower = {rl.rlim_cur > 4096 ? 4096 : 0, rl.rlim_max};
		CHECK(setrlimit(RLIMIT_CORE, &lower) == 0);
		ptrec_sys_read(root, &sys);
		CHECK_EQ_U64(sys.core_cur, lower.rlim_cur);
		setrlimit(RLIMIT_CORE, &rl);
	}
}

static void test_empty_tree(const char *root)
{
	struct ptrec_pmu pt;
	struct ptrec_sys sys;

	/* Nothing there: PMU absent, every limit unknown. */
	CHECK_EQ_U64(ptrec_pmu_read(root, "intel_pt", &pt), (uint64_t)-PTREC_ENOSUPP);
	CHECK_EQ_U64(pt.present, 0);
	CHECK_EQ_U64(pt.type, (uint64_t)-1);
	CHECK_EQ_U64(ptrec_pmu_read(root, "../x", &pt), (uint64_t)-PTREC_EINVAL);
	CHECK_EQ_U64(ptrec_pmu_read(root, "", &pt), (uint64_t)-PTREC_EINVAL);
	CHECK_EQ_U64(ptrec_sys_read(root, &sys), 0);
	CHECK_EQ_U64(sys.paranoid_valid, 0);
	CHECK_EQ_U64(sys.mlock_kb_valid, 0);
	CHECK_EQ_U64(sys.online_cpus, 0);
	CHECK_EQ_U64(sys.core_pattern_valid, 0);
	CHECK_EQ_U64(sys.core_uses_pid, (uint64_t)-1);
	CHECK_EQ_U64(sys.cap_valid, 0);

	/* Garbage in the files: kept invalid, not misread. */
	fake_sysfs_write(root, "sys/bus/event_source/devices/intel_pt/type", "eight\n");
	fake_sysfs_write(root, "sys/bus/event_source/devices/intel_pt/caps/mtc", "zz\n");
	fake_sysfs_write(root, "proc/sys/kernel/perf_event_paranoid", "2x\n");
	fake_sysfs_write(root, "proc/self/status", "Name:\tx\nCapEff:\tnothex\n");
	CHECK_EQ_U64(ptrec_pmu_read(root, "intel_pt", &pt), 0);
	CHECK_EQ_U64(pt.type, (uint64_t)-1);
	CHECK_EQ_U64(pt.ncaps, 1);
	CHECK_EQ_U64(pt.caps[0].valid, 0);
	ptrec_sys_read(root, &sys);
	CHECK_EQ_U64(sys.paranoid_valid, 0);
	CHECK_EQ_U64(sys.cap_valid, 0);
	/* Negative paranoid values are real (-1 = no restrictions). */
	fake_sysfs_write(root, "proc/sys/kernel/perf_event_paranoid", "-1\n");
	ptrec_sys_read(root, &sys);
	CHECK_EQ_U64(sys.paranoid_valid, 1);
	CHECK_EQ_U64(sys.paranoid, (uint64_t)-1);
}

static void test_real_root(void)
{
	struct ptrec_pmu pt;
	struct stat st;
	int rc = ptrec_pmu_read(NULL, "intel_pt", &pt);
	int exists = stat("/sys/bus/event_source/devices/intel_pt", &st) == 0;

	CHECK_EQ_U64(rc == 0, exists);
	CHECK_EQ_U64(pt.present, exists);
	printf("this machine: intel_pt PMU %s\n", exists ? "present" : "absent");
}

int main(void)
{
	char a[4096], b[4096];

	test_format_parse();
	test_cpulist();
	if (fake_sysfs_tmpdir(a, sizeof(a)) || fake_sysfs_tmpdir(b, sizeof(b)))
		SKIP("cannot create a temporary directory: %s", strerror(errno));
	test_full_tree(a);
	test_empty_tree(b);
	test_real_root();
	fake_sysfs_remove(a);
	fake_sysfs_remove(b);
	return check_done();
}
