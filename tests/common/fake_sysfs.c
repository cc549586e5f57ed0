/* fake_sysfs.c — see fake_sysfs.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fake_sysfs.h"

int fake_sysfs_tmpdir(char *buf, size_t len)
{
	const char *base = getenv("top_builddir");

	if (!base || !*base)
		base = getenv("TMPDIR");
	if (!base || !*base)
		base = "/tmp";
	if ((size_t)snprintf(buf, len, "%s/ptrec-fake-XXXXXX", base) >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return mkdtemp(buf) ? 0 : -1;
}

static int mkdirs(char *path)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		int rc = mkdir(path, 0700);
		*p = '/';
		if (rc && errno != EEXIST)
			return -1;
	}
	return 0;
}

int fake_sysfs_write(const char *root, const char *rel, const char *text)
{
	char path[4096];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", root, rel) >= sizeof(path))
		return -1;
	if (mkdirs(path))
		return -1;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return -1;
	size_t n = strlen(text);
	int rc = write(fd, text, n) == (ssize_t)n ? 0 : -1;
	close(fd);
	return rc;
}

#define PT "sys/bus/event_source/devices/intel_pt/"

/* The kernel's intel_pt format attributes. */
static const char *const pt_formats[][2] = {
	{"pt", "config:0"},          {"cyc", "config:1"},        {"pwr_evt", "config:4"},
	{"fup_on_ptw", "config:5"},  {"mtc", "config:9"},        {"tsc", "config:10"},
	{"noretcomp", "config:11"},  {"ptw", "config:12"},       {"branch", "config:13"},
	{"mtc_period", "config:14-17"}, {"cyc_thresh", "config:19-22"},
	{"psb_period", "config:24-27"}, {"event", "config:31"},  {"notnt", "config:55"},
};

int fake_sysfs_build(const char *root, unsigned flags, int paranoid, long mlock_kb)
{
	char text[64], rel[256];
	int rc = 0;

	if (flags & (FAKE_PT_FULL | FAKE_PT_NO_MTC | FAKE_PT_NO_CYC | FAKE_PT_PTWRITE)) {
		int mtc = !(flags & FAKE_PT_NO_MTC), cyc = !(flags & FAKE_PT_NO_CYC);
		const char *const caps[][2] = {
			{"max_subleaf", "1"}, {"cr3_filtering", "1"}, {"psb_cyc", cyc ? "1" : "0"},
			{"ip_filtering", "1"}, {"mtc", mtc ? "1" : "0"},
			{"ptwrite", (flags & FAKE_PT_PTWRITE) ? "1" : "0"},
			{"power_event_trace", "0"}, {"event_trace", "0"}, {"tnt_disable", "0"},
			{"topa_output", "1"}, {"topa_multiple_entries", "1"},
			{"single_range_output", "1"}, {"output_subsys", "0"}, {"payloads_lip", "0"},
			{"num_address_ranges", "2"}, {"mtc_periods", mtc ? "249" : "0"},
			{"cycle_thresholds", cyc ? "3fff" : "0"}, {"psb_periods", cyc ? "3f" : "0"},
		};

		rc |= fake_sysfs_write(root, PT "type", "8\n");
		for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
			snprintf(rel, sizeof(rel), PT "caps/%s", caps[i][0]);
			snprintf(text, sizeof(text), "%s\n", caps[i][1]);
			rc |= fake_sysfs_write(root, rel, text);
		}
		for (size_t i = 0; i < sizeof(pt_formats) / sizeof(pt_formats[0]); i++) {
			snprintf(rel, sizeof(rel), PT "format/%s", pt_formats[i][0]);
			snprintf(text, sizeof(text), "%s\n", pt_formats[i][1]);
			rc |= fake_sysfs_write(root, rel, text);
		}
	}
	if (flags & FAKE_BTS)
		rc |= fake_sysfs_write(root, "sys/bus/event_source/devices/intel_bts/type", "9\n");
	snprintf(text, sizeof(text), "%d\n", paranoid);
	rc |= fake_sysfs_write(root, "proc/sys/kernel/perf_event_paranoid", text);
	snprintf(text, sizeof(text), "%ld\n", mlock_kb);
	rc |= fake_sysfs_write(root, "proc/sys/kernel/perf_event_mlock_kb", text);
	rc |= fake_sysfs_write(root, "sys/devices/system/cpu/online", "0-1\n");
	return rc ? -1 : 0;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void fake_sysfs_remove(const char *root)
{
	if (!root || !strstr(root, "ptrec-fake"))
		return;
	nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}
