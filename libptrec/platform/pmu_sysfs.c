/* pmu_sysfs.c — perf PMU directories and perf limits, read under a root prefix.
 * Runs at init and in the ptrec tool; not async-signal-safe. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "ptrec.h"
#include "platform/pmu_sysfs.h"

/* snprintf into a path buffer; returns 0, or -1 if the path did not fit. */
static int path_fmt(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int path_fmt(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

static const char *root_or_empty(const char *root)
{
	/* "/" and "" both mean the real root; avoid "//sys". */
	if (!root || !strcmp(root, "/"))
		return "";
	return root;
}

/* Reads a small text file into buf (NUL-terminated, trailing newlines stripped).
 * Returns bytes kept, or -1. */
static long read_text(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t n = 0;

	if (fd < 0)
		return -1;
	while (n + 1 < len) {
		ssize_t r = read(fd, buf + n, len - 1 - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			close(fd);
			return -1;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		buf[--n] = '\0';
	return (long)n;
}

long ptrec_sysfs_text(const char *root, const char *rel, char *buf, size_t len)
{
	char path[4200];

	if (path_fmt(path, sizeof(path), "%s/%s", root_or_empty(root), rel))
		return -1;
	return read_text(path, buf, len);
}

/* Parses a whole string as a number in base (surrounding blanks allowed). */
static int parse_num(const char *s, int base, long long *out)
{
	char *end;

	errno = 0;
	while (*s == ' ' || *s == '\t')
		s++;
	if (!*s)
		return -1;
	long long v = strtoll(s, &end, base);
	if (errno || end == s)
		return -1;
	while (*end == ' ' || *end == '\t' || *end == '\n')
		end++;
	if (*end)
		return -1;
	*out = v;
	return 0;
}

int ptrec_sysfs_hex(const char *s, uint64_t *out)
{
	char *end;

	while (*s == ' ' || *s == '\t')
		s++;
	if (!*s || *s == '-')
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 16);
	if (errno || end == s || *end)
		return -1;
	*out = v;
	return 0;
}

static int parse_bitno(const char **p, unsigned *out)
{
	const char *s = *p;
	unsigned v = 0;

	if (*s < '0' || *s > '9')
		return -1;
	while (*s >= '0' && *s <= '9') {
		v = v * 10 + (unsigned)(*s - '0');
		if (v > 63)
			return -1;
		s++;
	}
	*p = s;
	*out = v;
	return 0;
}

int ptrec_pmu_format_parse(const char *spec, enum ptrec_pmu_word *word, uint64_t *mask)
{
	static const char *const words[PTREC_PMU_WORDS] = {"config", "config1", "config2",
	                                                   "config3"};
	const char *colon = strchr(spec, ':');
	int w = -1;

	if (!colon)
		return -PTREC_EFORMAT;
	for (int i = 0; i < PTREC_PMU_WORDS; i++)
		if ((size_t)(colon - spec) == strlen(words[i]) &&
		    !strncmp(spec, words[i], strlen(words[i])))
			w = i;
	if (w < 0)
		return -PTREC_EFORMAT;

	uint64_t m = 0;
	const char *p = colon + 1;

	for (;;) {
		unsigned lo, hi;

		if (parse_bitno(&p, &lo))
			return -PTREC_EFORMAT;
		hi = lo;
		if (*p == '-') {
			p++;
			if (parse_bitno(&p, &hi) || hi < lo)
				return -PTREC_EFORMAT;
		}
		for (unsigned b = lo; b <= hi; b++)
			m |= 1ull << b;
		if (*p == ',') {
			p++;
			continue;
		}
		break;
	}
	while (*p == '\n' || *p == ' ')
		p++;
	if (*p)
		return -PTREC_EFORMAT;
	*word = (enum ptrec_pmu_word)w;
	*mask = m;
	return 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp((const char *)a, (const char *)b);
}

/* Names of the regular entries of dir, sorted; returns the count kept (at most max). */
static unsigned list_dir(const char *dir, char names[][PTREC_PMU_NAME_MAX], unsigned max)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	unsigned n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)) != NULL && n < max) {
		if (e->d_name[0] == '.')
			continue;
		if (strlen(e->d_name) >= PTREC_PMU_NAME_MAX)
			continue;
		strcpy(names[n++], e->d_name);
	}
	closedir(d);
	qsort(names, n, PTREC_PMU_NAME_MAX, name_cmp);
	return n;
}

int ptrec_pmu_read(const char *root, const char *name, struct ptrec_pmu *pmu)
{
	char dir[4096], path[4096 + 2 * PTREC_PMU_NAME_MAX], text[PTREC_PMU_TEXT_MAX];
	char names[PTREC_PMU_MAX_ATTRS][PTREC_PMU_NAME_MAX];

	memset(pmu, 0, sizeof(*pmu));
	pmu->type = -1;
	if (!name || !*name || strlen(name) >= sizeof(pmu->name) || strchr(name, '/'))
		return -PTREC_EINVAL;
	strcpy(pmu->name, name);

	if (path_fmt(dir, sizeof(dir), "%s/sys/bus/event_source/devices/%s", root_or_empty(root),
	             name))
		return -PTREC_EINVAL;
	DIR *d = opendir(dir);
	if (!d)
		return -PTREC_ENOSUPP;
	closedir(d);
	pmu->present = 1;

	long long v;
	if (!path_fmt(path, sizeof(path), "%s/type", dir) && read_text(path, text, sizeof(text)) >= 0 && !parse_num(text, 10, &v) && v >= 0 &&
	    v <= 0x7fffffff)
		pmu->type = (int)v;

	char sub[4096 + 16];
	path_fmt(sub, sizeof(sub), "%s/caps", dir);
	unsigned n = list_dir(sub, names, PTREC_PMU_MAX_ATTRS);
	for (unsigned i = 0; i < n; i++) {
		struct ptrec_pmu_cap *c = &pmu->caps[pmu->ncaps++];

		strcpy(c->name, names[i]);
		if (path_fmt(path, sizeof(path), "%s/%s", sub, names[i]) ||
		    read_text(path, c->text, sizeof(c->text)) < 0)
			continue;
		c->valid = !ptrec_sysfs_hex(c->text, &c->value);
	}

	path_fmt(sub, sizeof(sub), "%s/format", dir);
	n = list_dir(sub, names, PTREC_PMU_MAX_ATTRS);
	for (unsigned i = 0; i < n; i++) {
		struct ptrec_pmu_format *f = &pmu->formats[pmu->nformats++];

		strcpy(f->name, names[i]);
		if (path_fmt(path, sizeof(path), "%s/%s", sub, names[i]) ||
		    read_text(path, f->spec, sizeof(f->spec)) < 0)
			continue;
		f->valid = !ptrec_pmu_format_parse(f->spec, &f->word, &f->mask);
	}
	return 0;
}

const struct ptrec_pmu_cap *ptrec_pmu_cap(const struct ptrec_pmu *pmu, const char *name)
{
	for (unsigned i = 0; i < pmu->ncaps; i++)
		if (!strcmp(pmu->caps[i].name, name))
			return &pmu->caps[i];
	return NULL;
}

const struct ptrec_pmu_format *ptrec_pmu_format(const struct ptrec_pmu *pmu, const char *name)
{
	for (unsigned i = 0; i < pmu->nformats; i++)
		if (!strcmp(pmu->formats[i].name, name))
			return &pmu->formats[i];
	return NULL;
}

int ptrec_cpulist_count(const char *text)
{
	const char *p = text;
	int count = 0;

	while (*p == ' ')
		p++;
	if (!*p || *p == '\n')
		return 0;
	for (;;) {
		char *end;
		errno = 0;
		long lo = strtol(p, &end, 10), hi;
		if (errno || end == p || lo < 0 || *p == '-' || *p == '+')
			return -PTREC_EFORMAT;
		p = end;
		hi = lo;
		if (*p == '-') {
			p++;
			if (*p < '0' || *p > '9')
				return -PTREC_EFORMAT;
			hi = strtol(p, &end, 10);
			if (errno || end == p || hi < lo || hi > 1 << 20)
				return -PTREC_EFORMAT;
			p = end;
		}
		count += (int)(hi - lo + 1);
		if (*p == ',') {
			p++;
			continue;
		}
		break;
	}
	while (*p == '\n' || *p == ' ')
		p++;
	return *p ? -PTREC_EFORMAT : count;
}

static uint64_t rlim_bytes(int resource)
{
	struct rlimit rl;

	if (getrlimit(resource, &rl))
		return 0;
	return rl.rlim_cur == RLIM_INFINITY ? PTREC_RLIM_UNLIMITED : (uint64_t)rl.rlim_cur;
}

/* Finds "CapEff:\t<hex>" in a /proc/PID/status text. */
static int parse_capeff(const char *status, uint64_t *out)
{
	const char *p = status;

	while (p && *p) {
		if (!strncmp(p, "CapEff:", 7)) {
			char hex[32];
			size_t n = 0;

			p += 7;
			while (*p == ' ' || *p == '\t')
				p++;
			while (n + 1 < sizeof(hex) && p[n] && p[n] != '\n') {
				hex[n] = p[n];
				n++;
			}
			hex[n] = '\0';
			return ptrec_sysfs_hex(hex, out);
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

int ptrec_sys_read(const char *root, struct ptrec_sys *sys)
{
	const char *r = root_or_empty(root);
	char path[4200], text[4096];
	long long v;

	memset(sys, 0, sizeof(*sys));
	sys->core_uses_pid = -1;

	if (!path_fmt(path, sizeof(path), "%s/proc/sys/kernel/perf_event_paranoid", r) && read_text(path, text, sizeof(text)) >= 0 && !parse_num(text, 10, &v) &&
	    v > -1000 && v < 1000) {
		sys->paranoid = (int)v;
		sys->paranoid_valid = 1;
	}
	if (!path_fmt(path, sizeof(path), "%s/proc/sys/kernel/perf_event_mlock_kb", r) && read_text(path, text, sizeof(text)) >= 0 && !parse_num(text, 10, &v) && v >= 0) {
		sys->mlock_kb = (long)v;
		sys->mlock_kb_valid = 1;
	}
	if (!path_fmt(path, sizeof(path), "%s/sys/devices/system/cpu/online", r) && read_text(path, text, sizeof(text)) >= 0) {
		int n = ptrec_cpulist_count(text);
		if (n > 0)
			sys->online_cpus = (unsigned)n;
	}
	if (!path_fmt(path, sizeof(path), "%s/proc/sys/kernel/core_pattern", r) && read_text(path, sys->core_pattern, sizeof(sys->core_pattern)) >= 0)
		sys->core_pattern_valid = 1;
	if (!path_fmt(path, sizeof(path), "%s/proc/sys/kernel/core_uses_pid", r) && read_text(path, text, sizeof(text)) >= 0 && !parse_num(text, 10, &v))
		sys->core_uses_pid = v != 0;

	if (!path_fmt(path, sizeof(path), "%s/proc/self/status", r) && read_text(path, text, sizeof(text)) >= 0 && !parse_capeff(text, &sys->cap_eff)) {
		sys->cap_valid = 1;
		sys->cap_ipc_lock = (int)((sys->cap_eff >> 14) & 1);
		sys->cap_sys_admin = (int)((sys->cap_eff >> 21) & 1);
		sys->cap_perfmon = (int)((sys->cap_eff >> 38) & 1);
	}

	sys->pti = -1;
	if (!path_fmt(path, sizeof(path), "%s/sys/devices/system/cpu/vulnerabilities/meltdown",
	              r) && read_text(path, text, sizeof(text)) >= 0)
		sys->pti = strstr(text, "PTI") != NULL;

	sys->memlock_cur = rlim_bytes(RLIMIT_MEMLOCK);
	sys->core_cur = rlim_bytes(RLIMIT_CORE);
	return 0;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

int ptrec_mlock_budget(const struct ptrec_sys *sys, size_t ring_size,
                       struct ptrec_mlock_budget *b)
{
	memset(b, 0, sizeof(*b));
	b->ring_size = ring_size;
	b->per_thread_bytes = (uint64_t)ring_size + (1 + PTREC_PERF_DATA_PAGES) * PTREC_PAGE_SIZE;
	b->rlimit_bytes = sys->memlock_cur;
	if ((sys->paranoid_valid && sys->paranoid <= -1) || sys->cap_ipc_lock ||
	    sys->memlock_cur == PTREC_RLIM_UNLIMITED) {
		b->unlimited = 1;
		b->total_bytes = UINT64_MAX;
		b->threads = UINT64_MAX;
		if (sys->mlock_kb_valid && sys->online_cpus)
			b->user_bytes = (uint64_t)sys->mlock_kb * 1024u * sys->online_cpus;
		return 0;
	}
	if (!sys->mlock_kb_valid || !sys->online_cpus)
		return -PTREC_EINVAL;
	/* The kernel counts whole pages: perf_event_mlock_kb >> (PAGE_SHIFT - 10). */
	uint64_t user_pages = (uint64_t)sys->mlock_kb / (PTREC_PAGE_SIZE / 1024u);
	b->user_bytes = user_pages * PTREC_PAGE_SIZE * sys->online_cpus;
	b->total_bytes = sat_add(b->user_bytes, b->rlimit_bytes & ~(uint64_t)(PTREC_PAGE_SIZE - 1));
	b->threads = b->total_bytes / b->per_thread_bytes;
	return 0;
}

int ptrec_paranoid_allows(const struct ptrec_sys *sys)
{
	if (sys->cap_perfmon || sys->cap_sys_admin)
		return 1;
	return sys->paranoid_valid && sys->paranoid <= 2;
}

const char *ptrec_paranoid_meaning(int level)
{
	if (level <= -1)
		return "no restrictions: any event, any CPU, kernel and user; the perf mlock "
		       "limit is not enforced";
	switch (level) {
	case 0:
		return "per-thread and system-wide events, kernel and user (raw tracepoint "
		       "samples excluded)";
	case 1:
		return "per-thread events of one's own processes, kernel and user; no "
		       "system-wide (per-CPU) events";
	case 2:
		return "per-thread events of one's own processes, user space only "
		       "(exclude_kernel); enough for ptrec, which traces user space only";
	default:
		return "perf_event_open is refused to unprivileged processes (a Debian/Ubuntu "
		       "kernel patch); needs CAP_PERFMON or CAP_SYS_ADMIN, or a level <= 2";
	}
}

void ptrec_reason_add(char *reason, size_t len, const char *fmt, ...)
{
	size_t used = strnlen(reason, len);
	va_list ap;

	if (used + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(reason + used, len - used, fmt, ap);
	va_end(ap);
}

/* Checks common to both perf backends once the PMU exists. */
static int access_verdict(const struct ptrec_pmu *pmu, const struct ptrec_sys *sys,
                          char *reason, size_t len)
{
	struct ptrec_mlock_budget b;

	if (pmu->type < 0) {
		ptrec_reason_add(reason, len, "%s PMU has no readable `type` file", pmu->name);
		return -PTREC_ENOSUPP;
	}
	if (!sys->paranoid_valid && !sys->cap_perfmon && !sys->cap_sys_admin) {
		ptrec_reason_add(reason, len, "perf_event_paranoid is unreadable: kernel without perf events?");
		return -PTREC_ENOSUPP;
	}
	if (!ptrec_paranoid_allows(sys)) {
		ptrec_reason_add(reason, len, "perf_event_paranoid is %d (> 2): %s", sys->paranoid,
		    ptrec_paranoid_meaning(sys->paranoid));
		return -PTREC_EPERM;
	}
	if (ptrec_mlock_budget(sys, PTREC_PAGE_SIZE, &b) == 0 && !b.unlimited && b.threads < 1) {
		ptrec_reason_add(reason, len, "mlock budget of %llu bytes (perf_event_mlock_kb %ld x %u CPUs "
		    "+ RLIMIT_MEMLOCK %llu) is below one 4 KiB ring",
		    (unsigned long long)b.total_bytes, sys->mlock_kb, sys->online_cpus,
		    (unsigned long long)b.rlimit_bytes);
		return -PTREC_ENOMEM;
	}
	return 0;
}

/* "AuthenticAMD 19_11H, a KVMKVMKVM guest (CPUID.01H:ECX[31]=1)": short, for reasons that
 * end up in 192-byte status fields. */
static void cpu_words(const struct ptrec_cpu_info *cpu, char *reason, size_t len)
{
	ptrec_reason_add(reason, len, "%s %02X_%02XH", cpu->vendor[0] ? cpu->vendor : "?", cpu->family,
	    cpu->model);
	if (cpu->hypervisor)
		ptrec_reason_add(reason, len, ", a %s%sguest (CPUID.01H:ECX[31]=1)", cpu->hv_vendor,
		    cpu->hv_vendor[0] ? " " : "");
}

int ptrec_pt_verdict(const struct ptrec_cpu_info *cpu, const struct ptrec_pmu *pmu,
                     const struct ptrec_sys *sys, char *reason, size_t len)
{
	if (len)
		reason[0] = '\0';
	if (!pmu->present) {
		ptrec_reason_add(reason, len, "no intel_pt PMU in sysfs: ");
		if (!cpu->pt) {
			ptrec_reason_add(reason, len, "the CPU does not enumerate Intel PT "
			    "(CPUID.(EAX=07H,ECX=0):EBX[25]=0; ");
			cpu_words(cpu, reason, len);
			if (!cpu->is_intel)
				ptrec_reason_add(reason, len, "; PT is an Intel feature");
			else if (cpu->hypervisor)
				ptrec_reason_add(reason, len, "; the hypervisor does not pass PT through");
			ptrec_reason_add(reason, len, ")");
		} else {
			ptrec_reason_add(reason, len, "the CPU enumerates Intel PT, but the kernel lacks "
			    "CONFIG_PERF_EVENTS_INTEL_PT or its driver did not start (see dmesg)");
		}
		return -PTREC_ENOSUPP;
	}
	return access_verdict(pmu, sys, reason, len);
}

int ptrec_bts_verdict(const struct ptrec_cpu_info *cpu, const struct ptrec_pmu *pmu,
                      const struct ptrec_sys *sys, char *reason, size_t len)
{
	if (len)
		reason[0] = '\0';
	if (!pmu->present) {
		ptrec_reason_add(reason, len, "no intel_bts PMU in sysfs: ");
		if (!cpu->is_intel) {
			ptrec_reason_add(reason, len, "BTS is an Intel feature (");
			cpu_words(cpu, reason, len);
			ptrec_reason_add(reason, len, ")");
		} else if (!cpu->dtes64 || !cpu->ds) {
			ptrec_reason_add(reason, len, "the CPU does not enumerate a 64-bit Debug Store "
			    "(CPUID.01H:EDX[21] DS=%u, ECX[2] DTES64=%u; ", cpu->ds, cpu->dtes64);
			cpu_words(cpu, reason, len);
			ptrec_reason_add(reason, len, ")");
		} else if (sys->pti == 1) {
			ptrec_reason_add(reason, len, "the kernel does not register intel_bts while "
			    "page-table isolation (PTI, the Meltdown mitigation) is on");
		} else {
			ptrec_reason_add(reason, len, "the CPU has a 64-bit Debug Store, but the kernel has "
			    "no BTS support for this model (x86_pmu.bts), or it is disabled");
		}
		return -PTREC_ENOSUPP;
	}
	int rc = access_verdict(pmu, sys, reason, len);
	if (rc)
		return rc;
	/* bts_event_init: BTS leaks kernel addresses even with CPL0 tracing off, so a
	 * user-only event needs perf_allow_kernel(): paranoid <= 1 or the capabilities. */
	if (!sys->cap_perfmon && !sys->cap_sys_admin && sys->paranoid > 1) {
		ptrec_reason_add(reason, len, "perf_event_paranoid is %d: the kernel allows intel_bts to "
		    "unprivileged processes only at <= 1 (BTS records leak kernel addresses)",
		    sys->paranoid);
		return -PTREC_EPERM;
	}
	return 0;
}
