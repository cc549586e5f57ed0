/* pmu_sysfs.h — what the kernel says about perf PMUs and the limits that decide whether an
 * unprivileged process may trace itself.
 *
 * Everything is read under a root prefix (NULL or "" = the real "/"), so tests and
 * `ptrec info --root DIR` can point it at a tree built to order:
 *   ROOT/sys/bus/event_source/devices/{intel_pt,intel_bts}/{type, caps/NAME, format/NAME}
 *   ROOT/proc/sys/kernel/{perf_event_paranoid,perf_event_mlock_kb,core_pattern,core_uses_pid}
 *   ROOT/sys/devices/system/cpu/online, ROOT/sys/devices/system/cpu/vulnerabilities/meltdown
 *   ROOT/proc/self/status (CapEff)
 * RLIMIT_MEMLOCK and RLIMIT_CORE are the calling process's (getrlimit).
 * Not async-signal-safe (opendir, qsort); runs at init and in the tool. */
#ifndef PTREC_PMU_SYSFS_H
#define PTREC_PMU_SYSFS_H

#include <stddef.h>
#include <stdint.h>

#include "platform/cpuid.h"

#define PTREC_PMU_MAX_ATTRS 48  /* caps/ or format/ entries kept per PMU */
#define PTREC_PMU_NAME_MAX 48   /* attribute name bytes, with NUL */
#define PTREC_PMU_TEXT_MAX 64   /* attribute text bytes, with NUL */

/* One caps/NAME file.  The kernel prints intel_pt caps in hex ("%x\n"). */
struct ptrec_pmu_cap {
	char name[PTREC_PMU_NAME_MAX]; /* file name, e.g. "mtc_periods" */
	char text[PTREC_PMU_TEXT_MAX]; /* contents without the trailing newline */
	uint64_t value;                /* text parsed as hex */
	int valid;                     /* 1 if text was a hex number */
};

/* Which perf_event_attr word a format field lives in. */
enum ptrec_pmu_word { PTREC_PMU_CONFIG = 0, PTREC_PMU_CONFIG1, PTREC_PMU_CONFIG2,
	PTREC_PMU_CONFIG3, PTREC_PMU_WORDS };

/* One format/NAME file, e.g. "config:14-17". */
struct ptrec_pmu_format {
	char name[PTREC_PMU_NAME_MAX]; /* file name, e.g. "mtc_period" */
	char spec[PTREC_PMU_TEXT_MAX]; /* contents without the trailing newline */
	enum ptrec_pmu_word word;      /* config, config1, ... */
	uint64_t mask;                 /* the bits the field occupies in that word */
	int valid;                     /* 1 if spec parsed */
};

/* One PMU directory. */
struct ptrec_pmu {
	char name[16];       /* "intel_pt", "intel_bts" */
	int present;         /* 1 if the directory exists */
	int type;            /* contents of `type` (perf_event_attr.type), -1 if unreadable */
	unsigned ncaps;      /* entries in caps, sorted by name */
	struct ptrec_pmu_cap caps[PTREC_PMU_MAX_ATTRS];
	unsigned nformats;   /* entries in formats, sorted by name */
	struct ptrec_pmu_format formats[PTREC_PMU_MAX_ATTRS];
};

/* System limits that decide perf access. */
struct ptrec_sys {
	int paranoid;            /* perf_event_paranoid */
	int paranoid_valid;      /* 1 if read */
	long mlock_kb;           /* perf_event_mlock_kb: per-CPU, per-user pinning allowance */
	int mlock_kb_valid;      /* 1 if read */
	unsigned online_cpus;    /* CPUs in sys/devices/system/cpu/online, 0 if unknown */
	char core_pattern[256];  /* core_pattern without the trailing newline */
	int core_pattern_valid;  /* 1 if read */
	int core_uses_pid;       /* core_uses_pid, -1 if unknown */
	uint64_t memlock_cur;    /* RLIMIT_MEMLOCK soft limit, bytes (UINT64_MAX = unlimited) */
	uint64_t core_cur;       /* RLIMIT_CORE soft limit, bytes (UINT64_MAX = unlimited) */
	uint64_t cap_eff;        /* CapEff of proc/self/status */
	int cap_valid;           /* 1 if CapEff was read */
	int cap_ipc_lock;        /* CAP_IPC_LOCK (14) in CapEff: mlock limits do not apply */
	int cap_sys_admin;       /* CAP_SYS_ADMIN (21): perf_event_paranoid does not apply */
	int cap_perfmon;         /* CAP_PERFMON (38): perf_event_paranoid does not apply */
	int pti;                 /* 1 if the meltdown file says "PTI" (the kernel then refuses
	                            to register intel_bts), 0 if not, -1 if unknown */
};

#define PTREC_RLIM_UNLIMITED UINT64_MAX

/* Parses a perf format spec: "config:0-7", "config:14", "config1:0-31", or several ranges
 * "config:0-7,32-35".  Returns 0 with *word and *mask set, or -PTREC_EFORMAT for anything
 * else (unknown word, bit > 63, reversed range, junk). */
int ptrec_pmu_format_parse(const char *spec, enum ptrec_pmu_word *word, uint64_t *mask);

/* Reads ROOT/sys/bus/event_source/devices/NAME into pmu (always fully initialized).
 * Returns 0 if the directory exists, -PTREC_ENOSUPP if it does not, -PTREC_EINVAL for a bad
 * name.  Unreadable files inside are kept as invalid entries, not errors. */
int ptrec_pmu_read(const char *root, const char *name, struct ptrec_pmu *pmu);

/* Reads the small text file ROOT/rel into buf (NUL-terminated, trailing newlines stripped).
 * Returns the bytes kept, or -1. */
long ptrec_sysfs_text(const char *root, const char *rel, char *buf, size_t len);

/* Parses a whole sysfs hex value ("0x1f", "1f"; blanks before it allowed): 0, or -1. */
int ptrec_sysfs_hex(const char *s, uint64_t *out);

/* Appends printf-style text to the NUL-terminated reason (len bytes), truncating. */
void ptrec_reason_add(char *reason, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The caps/ or format/ entry called name, or NULL. */
const struct ptrec_pmu_cap *ptrec_pmu_cap(const struct ptrec_pmu *pmu, const char *name);
const struct ptrec_pmu_format *ptrec_pmu_format(const struct ptrec_pmu *pmu, const char *name);

/* Reads the limits under root (and this process's rlimits) into sys; fields that cannot be
 * read are marked invalid.  Returns 0. */
int ptrec_sys_read(const char *root, struct ptrec_sys *sys);

/* Parses a CPU list as in sys/devices/system/cpu/online ("0-3,6,8-9\n").  Returns the number
 * of CPUs, or -PTREC_EFORMAT. */
int ptrec_cpulist_count(const char *text);

/* Perf data pages a backend maps per thread besides the user page and the AUX ring. */
#define PTREC_PERF_DATA_PAGES 1u
#define PTREC_PAGE_SIZE 4096u

/* How much ring memory the kernel lets one process pin for perf AUX rings.  The kernel
 * (perf_mmap) charges pages first to the user's allowance of perf_event_mlock_kb x online
 * CPUs, then to the process's RLIMIT_MEMLOCK; neither applies with CAP_IPC_LOCK or
 * perf_event_paranoid = -1. */
struct ptrec_mlock_budget {
	int unlimited;             /* no perf mlock limit applies */
	uint64_t user_bytes;       /* perf_event_mlock_kb x 1 KiB x online CPUs (per user) */
	uint64_t rlimit_bytes;     /* RLIMIT_MEMLOCK (per process; PTREC_RLIM_UNLIMITED) */
	uint64_t total_bytes;      /* user_bytes + rlimit_bytes (saturating) */
	uint64_t ring_size;        /* the ring size asked about */
	uint64_t per_thread_bytes; /* ring + user page + PTREC_PERF_DATA_PAGES pages */
	uint64_t threads;          /* threads that fit (UINT64_MAX when unlimited) */
};

/* Computes the budget for rings of ring_size bytes.  Returns 0, or -PTREC_EINVAL if
 * perf_event_mlock_kb or the online CPU count is unknown while a limit would apply (b then
 * holds what is known). */
int ptrec_mlock_budget(const struct ptrec_sys *sys, size_t ring_size,
                       struct ptrec_mlock_budget *b);

/* 1 if a process with these credentials may perf_event_open a user-only per-thread event
 * (perf_event_paranoid <= 2, or CAP_PERFMON / CAP_SYS_ADMIN), else 0. */
int ptrec_paranoid_allows(const struct ptrec_sys *sys);

/* What perf_event_paranoid level means for an unprivileged process.  Never NULL. */
const char *ptrec_paranoid_meaning(int level);

/* Whether the intel_pt (or intel_bts) backend can work, judged from the facts alone (no
 * perf_event_open).  Returns 0 if nothing speaks against it, else a negative code with the
 * concrete cause in reason: -PTREC_ENOSUPP (PMU absent; the CPUID facts say why),
 * -PTREC_EPERM (perf_event_paranoid; intel_bts needs <= 1 without CAP_PERFMON/SYS_ADMIN),
 * -PTREC_ENOMEM (mlock budget below one 4 KiB ring). */
int ptrec_pt_verdict(const struct ptrec_cpu_info *cpu, const struct ptrec_pmu *pmu,
                     const struct ptrec_sys *sys, char *reason, size_t len);
int ptrec_bts_verdict(const struct ptrec_cpu_info *cpu, const struct ptrec_pmu *pmu,
                      const struct ptrec_sys *sys, char *reason, size_t len);

#endif
