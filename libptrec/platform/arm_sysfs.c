/* arm_sysfs.c — the arm64 CPU (MIDR_EL1), CoreSight and BRBE as the kernel shows them in sysfs,
 * read under a root prefix.  Runs in the tool; not async-signal-safe. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "platform/arm_sysfs.h"

void ptrec_midr_decode(uint64_t v, struct ptrec_midr *m)
{
	m->value = v;
	m->implementer = (unsigned)(v >> 24) & 0xffu;
	m->variant = (unsigned)(v >> 20) & 0xfu;
	m->architecture = (unsigned)(v >> 16) & 0xfu;
	m->part = (unsigned)(v >> 4) & 0xfffu;
	m->revision = (unsigned)v & 0xfu;
}

/* Implementer codes (Arm ARM, MIDR_EL1.Implementer) and the parts of servers, cloud VMs and
 * the VM hosts users run Linux on (the kernel's arch/arm64/include/asm/cputype.h). */
static const struct { unsigned code; const char *name; } implementers[] = {
	{0x41, "Arm"}, {0x42, "Broadcom"}, {0x43, "Cavium"}, {0x46, "Fujitsu"},
	{0x48, "HiSilicon"}, {0x4e, "NVIDIA"}, {0x50, "APM"}, {0x51, "Qualcomm"},
	{0x53, "Samsung"}, {0x56, "Marvell"}, {0x61, "Apple"}, {0x69, "Intel"},
	{0x6d, "Microsoft"}, {0xc0, "Ampere"},
};

static const struct { unsigned impl, part; const char *name; } parts[] = {
	{0x41, 0xd03, "Cortex-A53"}, {0x41, 0xd04, "Cortex-A35"}, {0x41, 0xd05, "Cortex-A55"},
	{0x41, 0xd07, "Cortex-A57"}, {0x41, 0xd08, "Cortex-A72"}, {0x41, 0xd09, "Cortex-A73"},
	{0x41, 0xd0a, "Cortex-A75"}, {0x41, 0xd0b, "Cortex-A76"}, {0x41, 0xd0c, "Neoverse N1"},
	{0x41, 0xd0d, "Cortex-A77"}, {0x41, 0xd40, "Neoverse V1"}, {0x41, 0xd41, "Cortex-A78"},
	{0x41, 0xd44, "Cortex-X1"}, {0x41, 0xd46, "Cortex-A510"}, {0x41, 0xd47, "Cortex-A710"},
	{0x41, 0xd48, "Cortex-X2"}, {0x41, 0xd49, "Neoverse N2"}, {0x41, 0xd4a, "Neoverse E1"},
	{0x41, 0xd4f, "Neoverse V2"}, {0x41, 0xd80, "Cortex-A520"}, {0x41, 0xd81, "Cortex-A720"},
	{0x41, 0xd82, "Cortex-X4"}, {0x41, 0xd84, "Neoverse V3"}, {0x41, 0xd8e, "Neoverse N3"},
	{0x43, 0x0af, "ThunderX2"}, {0x46, 0x001, "A64FX"}, {0x48, 0xd01, "TSV110"},
	{0x4e, 0x004, "Carmel"}, {0x61, 0x022, "M1 Icestorm"}, {0x61, 0x023, "M1 Firestorm"},
	{0x61, 0x032, "M2 Blizzard"}, {0x61, 0x033, "M2 Avalanche"},
	{0x6d, 0xd49, "Azure Cobalt 100"}, {0xc0, 0xac3, "AmpereOne"},
	{0xc0, 0xac4, "AmpereOne AC04"},
};

const char *ptrec_midr_implementer_name(unsigned implementer)
{
	for (size_t i = 0; i < sizeof(implementers) / sizeof(implementers[0]); i++)
		if (implementers[i].code == implementer)
			return implementers[i].name;
	return NULL;
}

const char *ptrec_midr_part_name(unsigned implementer, unsigned part)
{
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		if (parts[i].impl == implementer && parts[i].part == part)
			return parts[i].name;
	return NULL;
}

const char *ptrec_midr_words(const struct ptrec_midr *m, char *buf, size_t len)
{
	const char *impl = ptrec_midr_implementer_name(m->implementer);
	const char *part = ptrec_midr_part_name(m->implementer, m->part);

	if (impl && part)
		snprintf(buf, len, "%s %s r%up%u", impl, part, m->variant, m->revision);
	else if (impl)
		snprintf(buf, len, "%s part 0x%03x r%up%u", impl, m->part, m->variant, m->revision);
	else
		snprintf(buf, len, "implementer 0x%02x part 0x%03x r%up%u", m->implementer, m->part,
		         m->variant, m->revision);
	return buf;
}

/* The value after "KEY<blanks>:" on a cpuinfo line, parsed with base 0 (0x41, 8, 1); -1 if
 * line is not that key or the value is not a number. */
static long cpuinfo_field(const char *line, const char *key)
{
	size_t n = strlen(key);
	char *end;

	if (strncmp(line, key, n))
		return -1;
	line += n;
	while (*line == ' ' || *line == '\t')
		line++;
	if (*line++ != ':')
		return -1;
	errno = 0;
	long v = strtol(line, &end, 0);
	if (errno || end == line || v < 0)
		return -1;
	return v;
}

unsigned ptrec_cpuinfo_midrs(const char *text, uint64_t *out, unsigned max)
{
	long impl = -1, var = -1, part = -1, rev = -1;
	unsigned n = 0;

	for (const char *line = text;; ) {
		const char *nl = strchr(line, '\n');
		long v;

		/* a block ends at a blank line, a new "processor" line or the end */
		if (!*line || *line == '\n' || !strncmp(line, "processor", 9)) {
			if (impl >= 0 && var >= 0 && part >= 0 && rev >= 0 && impl <= 0xff &&
			    var <= 0xf && part <= 0xfff && rev <= 0xf && n < max)
				out[n++] = (uint64_t)impl << 24 | (uint64_t)var << 20 | 0xfull << 16 |
				           (uint64_t)part << 4 | (uint64_t)rev;
			impl = var = part = rev = -1;
		}
		if ((v = cpuinfo_field(line, "CPU implementer")) >= 0)
			impl = v;
		else if ((v = cpuinfo_field(line, "CPU variant")) >= 0)
			var = v;
		else if ((v = cpuinfo_field(line, "CPU part")) >= 0)
			part = v;
		else if ((v = cpuinfo_field(line, "CPU revision")) >= 0)
			rev = v;
		if (!*line)
			break;
		line = nl ? nl + 1 : line + strlen(line);
	}
	return n;
}

/* Calls fn for each entry of ROOT/rel (no dot files).  Returns -1 if it cannot be opened. */
static int scan_dir(const char *root, const char *rel, void (*fn)(const char *, void *),
                    void *ctx)
{
	char path[4200];
	struct dirent *e;
	DIR *d;

	if (!root || !strcmp(root, "/"))
		root = "";
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", root, rel) >= sizeof(path))
		return -1;
	d = opendir(path);
	if (!d)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			fn(e->d_name, ctx);
	closedir(d);
	return 0;
}

/* 1 if name is prefix followed by decimal digits only. */
static int numbered(const char *name, const char *prefix, long *num)
{
	size_t n = strlen(prefix);
	char *end;

	if (strncmp(name, prefix, n) || name[n] < '0' || name[n] > '9')
		return 0;
	errno = 0;
	long v = strtol(name + n, &end, 10);
	if (errno || *end)
		return 0;
	if (num)
		*num = v;
	return 1;
}

/* The CPU numbers of sys/devices/system/cpu/cpuN, growing as needed. */
struct cpu_list {
	long *num;
	size_t n, cap;
};

static void add_cpu(const char *name, void *ctx)
{
	struct cpu_list *l = ctx;
	long v;

	if (!numbered(name, "cpu", &v))
		return;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		long *bigger = realloc(l->num, cap * sizeof(*bigger));
		if (!bigger)
			return;
		l->num = bigger;
		l->cap = cap;
	}
	l->num[l->n++] = v;
}

static int long_cmp(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return (x > y) - (x < y);
}

static void add_kind(struct ptrec_arm_info *a, uint64_t v)
{
	for (unsigned i = 0; i < a->nkinds; i++)
		if (a->kinds[i].midr.value == v) {
			a->kinds[i].cpus++;
			return;
		}
	if (a->nkinds < PTREC_ARM_KINDS_MAX) {
		ptrec_midr_decode(v, &a->kinds[a->nkinds].midr);
		a->kinds[a->nkinds++].cpus = 1;
	}
}

static char *cpuinfo_read(const char *root)
{
	size_t cap = 1u << 20; /* 1 MiB: /proc/cpuinfo of a few hundred CPUs */
	char *buf = malloc(cap);

	if (buf && ptrec_sysfs_text(root, "proc/cpuinfo", buf, cap) < 0) {
		free(buf);
		buf = NULL;
	}
	return buf;
}

static void read_cpus(const char *root, struct ptrec_arm_info *a)
{
	struct cpu_list l = {NULL, 0, 0};
	char rel[128], text[64];
	uint64_t v;

	scan_dir(root, "sys/devices/system/cpu", add_cpu, &l);
	if (l.n)
		qsort(l.num, l.n, sizeof(*l.num), long_cmp);
	for (size_t i = 0; i < l.n; i++) {
		snprintf(rel, sizeof(rel), "sys/devices/system/cpu/cpu%ld/regs/identification/midr_el1",
		         l.num[i]);
		if (ptrec_sysfs_text(root, rel, text, sizeof(text)) <= 0 || ptrec_sysfs_hex(text, &v))
			continue;
		add_kind(a, v);
		a->cpus++;
	}
	free(l.num);
	if (a->cpus) {
		a->source = PTREC_MIDR_SYSFS;
		return;
	}

	char *info = cpuinfo_read(root);
	uint64_t midrs[1024];
	unsigned n = info ? ptrec_cpuinfo_midrs(info, midrs, 1024) : 0;

	free(info);
	for (unsigned i = 0; i < n; i++)
		add_kind(a, midrs[i]);
	a->cpus = n;
	a->source = n ? PTREC_MIDR_CPUINFO : PTREC_MIDR_NONE;
}

int ptrec_arm_tree(const char *root)
{
	char rel[128], text[64];
	int arm = 0;

	for (int i = 0; i < 4 && !arm; i++) {
		snprintf(rel, sizeof(rel), "sys/devices/system/cpu/cpu%d/regs/identification/midr_el1",
		         i);
		arm = ptrec_sysfs_text(root, rel, text, sizeof(text)) > 0;
	}
	if (!arm) {
		char *info = cpuinfo_read(root);
		uint64_t one;

		arm = info && ptrec_cpuinfo_midrs(info, &one, 1) > 0;
		free(info);
	}
	return arm;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp((const char *)a, (const char *)b);
}

static void add_sink(const char *name, void *ctx)
{
	struct ptrec_arm_info *a = ctx;

	if (a->nsinks < PTREC_ARM_NAMES_MAX && strlen(name) < PTREC_PMU_NAME_MAX)
		strcpy(a->sinks[a->nsinks++], name);
}

static void add_coresight(const char *name, void *ctx)
{
	struct ptrec_arm_info *a = ctx;
	size_t n = strlen(name);

	/* etmN since Linux 5.10 (before: the unit's address, "22040000.etm"), eteN, trbeN */
	if (numbered(name, "etm", NULL) || (n > 4 && !strcmp(name + n - 4, ".etm")))
		a->etm++;
	else if (numbered(name, "ete", NULL))
		a->ete++;
	else if (numbered(name, "trbe", NULL))
		a->trbe++;
}

/* arm_pmuv3 names its PMUs armv8_pmuv3_N (ACPI) or armv8_/armv9_<core> (device tree). */
static void add_cpu_pmu(const char *name, void *ctx)
{
	struct ptrec_arm_info *a = ctx;

	if ((strncmp(name, "armv8_", 6) && strncmp(name, "armv9_", 6)) ||
	    strlen(name) >= PTREC_PMU_NAME_MAX || a->ncpu_pmus >= PTREC_ARM_KINDS_MAX)
		return;
	strcpy(a->cpu_pmus[a->ncpu_pmus++].name, name);
}

static void read_cpu_pmus(const char *root, struct ptrec_arm_info *a)
{
	char rel[256], text[64];

	scan_dir(root, "sys/bus/event_source/devices", add_cpu_pmu, a);
	qsort(a->cpu_pmus, a->ncpu_pmus, sizeof(a->cpu_pmus[0]), name_cmp);
	for (unsigned i = 0; i < a->ncpu_pmus; i++) {
		struct ptrec_arm_cpu_pmu *p = &a->cpu_pmus[i];
		char *end;
		long v;

		p->type = -1;
		snprintf(rel, sizeof(rel), "sys/bus/event_source/devices/%s/type", p->name);
		if (ptrec_sysfs_text(root, rel, text, sizeof(text)) > 0) {
			errno = 0;
			v = strtol(text, &end, 10);
			if (!errno && end != text && !*end && v >= 0 && v <= 0x7fffffff)
				p->type = (int)v;
		}
		/* "%d\n" (not hex like the other caps), and only where BRBE was probed */
		snprintf(rel, sizeof(rel), "sys/bus/event_source/devices/%s/caps/branches", p->name);
		if (ptrec_sysfs_text(root, rel, text, sizeof(text)) > 0) {
			errno = 0;
			v = strtol(text, &end, 10);
			if (!errno && end != text && !*end && v > 0 && v <= 1024)
				p->branches = v;
		}
		if (p->branches && (a->brbe < 0 || p->branches > a->cpu_pmus[a->brbe].branches))
			a->brbe = (int)i;
	}
}

int ptrec_arm_read(const char *root, struct ptrec_arm_info *a)
{
	memset(a, 0, sizeof(*a));
	a->brbe = -1;
	read_cpus(root, a);
	ptrec_pmu_read(root, "cs_etm", &a->cs_etm);
	scan_dir(root, "sys/bus/event_source/devices/cs_etm/sinks", add_sink, a);
	qsort(a->sinks, a->nsinks, sizeof(a->sinks[0]), name_cmp);
	scan_dir(root, "sys/bus/coresight/devices", add_coresight, a);
	read_cpu_pmus(root, a);
	return 0;
}

const char *ptrec_coresight_reason(const struct ptrec_arm_info *a, char *reason, size_t len)
{
	if (len)
		reason[0] = '\0';
	ptrec_reason_add(reason, len, "not implemented yet: libptrec does not capture ETM/ETE "
	                 "trace (a later step: perf's cs_etm AUX buffer in snapshot mode, with its "
	                 "own decoder); ");
	if (!a->cs_etm.present) {
		ptrec_reason_add(reason, len, "and there is no cs_etm PMU in sysfs: the kernel has "
		                 "no CoreSight ETM/ETE driver (CONFIG_CORESIGHT_SOURCE_ETM4X) or the "
		                 "firmware describes no trace unit (as in most VMs)");
		return reason;
	}
	ptrec_reason_add(reason, len, "this machine has cs_etm (%u ETE, %u ETM trace units", a->ete,
	                 a->etm);
	if (a->trbe)
		ptrec_reason_add(reason, len, ", %u TRBE per-CPU sinks)", a->trbe);
	else if (a->nsinks)
		ptrec_reason_add(reason, len, ", no TRBE: the sinks are shared, %s...)", a->sinks[0]);
	else
		ptrec_reason_add(reason, len, ", and no sink)");
	return reason;
}

const char *ptrec_brbe_reason(const struct ptrec_arm_info *a, char *reason, size_t len)
{
	if (len)
		reason[0] = '\0';
	if (a->brbe >= 0) {
		const struct ptrec_arm_cpu_pmu *p = &a->cpu_pmus[a->brbe];

		ptrec_reason_add(reason, len, "not implemented yet: %s keeps %ld branch records (BRBE, "
		    "caps/branches), but the kernel hands them out only inside perf samples "
		    "(PERF_SAMPLE_BRANCH_STACK at a counter overflow), not at a crash; libptrec "
		    "does not read them", p->name, p->branches);
	} else if (a->ncpu_pmus) {
		ptrec_reason_add(reason, len, "no BRBE: %s shows no caps/branches (the CPU lacks FEAT_BRBE, the "
		    "hypervisor hides it, or the kernel has no BRBE support: CONFIG_ARM64_BRBE)",
		    a->cpu_pmus[0].name);
	} else {
		ptrec_reason_add(reason, len, "no BRBE: no arm CPU PMU (armv8_*, armv9_*) in sysfs (a kernel "
		    "without CONFIG_ARM_PMUV3, or a VM without a virtual PMU)");
	}
	return reason;
}
