/* cmd_info.c — `ptrec info [--root DIR] [--json] [--ring-size SIZE]`: whether and how the
 * recorder works on this machine, and why not.  Reads CPUID (this CPU, always), the perf PMUs
 * and limits under DIR (default /), and describes the facts once, printed as a report or as
 * JSON (fact_emit.h).  The machine described is the build's, or with --root an arm64 one when
 * the tree shows an arm64 CPU (arm_sysfs.h): then MIDR_EL1, CoreSight and BRBE take the place
 * of CPUID and the Intel PMUs. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/backend.h"
#include "capture/helper_client.h"
#include "platform/cpuid.h"
#include "capture/perf_config.h"
#include "core/arch.h"
#include "platform/arm_sysfs.h"
#include "platform/pmu_sysfs.h"
#include "ptrec.h"
#include "report/json_str.h"
#include "core/settings.h"
#include "tool/fact_emit.h"
#include "tool/tool.h"

#define REASON_MAX 512

/* Everything the report shows. */
struct info {
	const char *root;            /* --root, or NULL for the real system */
	int arm;                     /* 1: an aarch64 machine (the build's, or the tree's) */
	struct ptrec_arm_info armi;  /* its CPU, CoreSight and BRBE (arm only) */
	char cs_reason[REASON_MAX];  /* why CoreSight trace is not used (arm only) */
	char brbe_reason[REASON_MAX];/* why BRBE is not used (arm only) */
	struct ptrec_cpuid_raw raw;  /* CPUID registers of this CPU */
	struct ptrec_cpu_info cpu;   /* decoded */
	struct ptrec_pmu pt, bts;    /* the two PMU directories */
	struct ptrec_sys sys;        /* limits */
	size_t ring_size;            /* ring size the budget is computed for */
	struct ptrec_mlock_budget budget;
	int budget_rc;               /* ptrec_mlock_budget's result */
	int pt_rc, bts_rc;           /* 0 = usable, else -PTREC_E* */
	char pt_reason[REASON_MAX];  /* why intel_pt is rejected ("" if usable) */
	char bts_reason[REASON_MAX]; /* why intel_bts is rejected */
	int pt_live, bts_live;       /* 1 if the verdict includes a real perf_event_open probe */
	struct ptrec_pt_config ptcfg;/* intel_pt config the backend would open with */
	int ptcfg_rc;                /* ptrec_pt_config_build's result */
	char ptcfg_err[256];         /* why the config could not be built */
	enum ptrec_backend chosen;   /* what auto picks */
	const char *env_backend;     /* PTREC_BACKEND, if set */
	const char *env_dir;         /* PTREC_DIR, if set */
	const char *env_filter;      /* PTREC_FILTER, if set */
	const char *helper_socket;   /* the ptrec-helper socket the library would ask, or NULL
	                                (PTREC_HELPER=off) */
	int helper_rc;               /* its ping: 0 = reachable, else -PTREC_E* */
	char helper_answer[256];     /* its answer, or why it is not reachable */
	int helper_needed;           /* 1 if the kernel refuses this user perf_event_open */
	int helper_used;             /* 1 if a perf backend was judged through the helper */
};

/* ---- gathering --------------------------------------------------------------------------- */

/* An aarch64 machine: its CPU, CoreSight and BRBE; Intel PT and BTS are no option there (and
 * not read: under qemu-user the sysfs is the x86-64 host's). */
static void gather_arm(struct info *in)
{
	char cpu[96];

	ptrec_arm_read(in->root, &in->armi);
	ptrec_coresight_reason(&in->armi, in->cs_reason, sizeof(in->cs_reason));
	ptrec_brbe_reason(&in->armi, in->brbe_reason, sizeof(in->brbe_reason));
	if (in->armi.nkinds)
		ptrec_midr_words(&in->armi.kinds[0].midr, cpu, sizeof(cpu));
	else
		snprintf(cpu, sizeof(cpu), "its CPU unidentified");
	snprintf(in->pt_reason, sizeof(in->pt_reason), "Intel PT is an x86-64 feature: this is "
	         "an aarch64 machine (%s)", cpu);
	snprintf(in->bts_reason, sizeof(in->bts_reason), "BTS is an x86-64 feature: this is an "
	         "aarch64 machine (%s)", cpu);
	in->pt_rc = in->bts_rc = -PTREC_ENOSUPP;
}

static void gather(struct info *in)
{
	in->arm = in->root ? ptrec_arm_tree(in->root) : PTREC_EM_HOST == PTREC_EM_AARCH64;
	if (!in->arm) {
		ptrec_cpuid_read(&in->raw);
		ptrec_cpuid_decode(&in->raw, &in->cpu);
		ptrec_pmu_read(in->root, "intel_pt", &in->pt);
		ptrec_pmu_read(in->root, "intel_bts", &in->bts);
	} else {
		memset(&in->pt, 0, sizeof(in->pt));
		memset(&in->bts, 0, sizeof(in->bts));
		strcpy(in->pt.name, "intel_pt");
		strcpy(in->bts.name, "intel_bts");
		in->pt.type = in->bts.type = -1;
	}
	ptrec_sys_read(in->root, &in->sys);
	in->budget_rc = ptrec_mlock_budget(&in->sys, in->ring_size, &in->budget);

	if (in->arm)
		gather_arm(in);
	else
		in->pt_rc = ptrec_pt_verdict(&in->cpu, &in->pt, &in->sys, in->pt_reason,
		                             sizeof(in->pt_reason));
	if (in->pt.present) {
		struct ptrec_pt_request req;

		ptrec_pt_request_default(&req, in->ring_size);
		in->ptcfg_rc = ptrec_pt_config_build(&in->pt, &req, &in->ptcfg, in->ptcfg_err,
		                                     sizeof(in->ptcfg_err));
		if (in->ptcfg_rc && !in->pt_rc) {
			in->pt_rc = in->ptcfg_rc;
			snprintf(in->pt_reason, sizeof(in->pt_reason), "cannot build the intel_pt "
			         "config: %s", in->ptcfg_err);
		}
	}
	if (!in->arm)
		in->bts_rc = ptrec_bts_verdict(&in->cpu, &in->bts, &in->sys, in->bts_reason,
		                               sizeof(in->bts_reason));

	/* ptrec-helper: where the kernel refuses this user, a reachable helper opens instead. */
	in->helper_needed = in->sys.paranoid_valid && !ptrec_paranoid_allows(&in->sys) &&
	                    !in->sys.cap_perfmon && !in->sys.cap_sys_admin;
	in->helper_socket = ptrec_helper_socket();
	in->helper_rc = -PTREC_ENOSUPP;
	if (!in->helper_socket)
		snprintf(in->helper_answer, sizeof(in->helper_answer), "off (PTREC_HELPER=off)");
	else if (in->root)
		snprintf(in->helper_answer, sizeof(in->helper_answer), "not asked (--root)");
	else
		in->helper_rc = ptrec_helper_ping(in->helper_socket, in->helper_answer,
		                                  sizeof(in->helper_answer));
	if (!in->root && in->helper_rc == 0) {
		if (in->pt_rc == -PTREC_EPERM)
			in->pt_rc = 0, in->helper_used = 1;
		if (in->bts_rc == -PTREC_EPERM)
			in->bts_rc = 0, in->helper_used = 1;
	}

	/* On the real system, let the kernel have the last word: the backends' probes open and
	 * close a ring the way the recorder would (only where the facts did not already rule
	 * the backend out). */
	if (!in->root) {
		struct ptrec_config cfg;

		ptrec_config_init(&cfg);
		cfg.ring_size = in->ring_size;
		if (!in->pt_rc) {
			in->pt_live = 1;
			in->pt_rc = ptrec_backend_intel_pt.probe(&cfg, in->pt_reason,
			                                         sizeof(in->pt_reason));
		}
		if (!in->bts_rc) {
			in->bts_live = 1;
			in->bts_rc = ptrec_backend_intel_bts.probe(&cfg, in->bts_reason,
			                                           sizeof(in->bts_reason));
		}
	}
	in->chosen = !in->pt_rc ? PTREC_BACKEND_INTEL_PT
	             : !in->bts_rc ? PTREC_BACKEND_INTEL_BTS : PTREC_BACKEND_INSTRUMENTED;
	in->env_backend = getenv("PTREC_BACKEND");
	in->env_dir = getenv("PTREC_DIR");
	in->env_filter = getenv("PTREC_FILTER");
}

/* Appends to buf (len bytes, *used of them taken), never past its end. */
__attribute__((format(printf, 4, 5)))
static void app(char *buf, size_t len, size_t *used, const char *fmt, ...)
{
	va_list ap;
	if (*used + 1 >= len)
		return;
	va_start(ap, fmt);
	int n = vsnprintf(buf + *used, len - *used, fmt, ap);
	va_end(ap);
	if (n > 0)
		*used = *used + (size_t)n < len ? *used + (size_t)n : len - 1;
}

/* Where the recorder writes, as one sentence: the places in order, then the first that this
 * user may write. */
static void report_location(const struct info *in, char *buf, size_t len)
{
	struct tool_place t[PTREC_PLACE_COUNT_];
	const char *pat = in->sys.core_pattern_valid ? in->sys.core_pattern : NULL;
	unsigned n = tool_places(pat, t);
	size_t used = 0;
	int first = -1;

	if (!pat)
		app(buf, len, &used, "core_pattern unreadable; ");
	else if (pat[0] == '|')
		app(buf, len, &used, "core_pattern pipes cores to a program (%.80s), not next to "
		    "it; ", pat + 1);
	app(buf, len, &used, "tries in order: PTREC_DIR%s", getenv("PTREC_DIR") ? "" : " (unset)");
	for (unsigned i = 0; i < n; i++) {
		if (t[i].usable && first < 0)
			first = (int)i;
		if (t[i].p.kind == PTREC_PLACE_DIR) {
			app(buf, len, &used, " %s", t[i].p.path);
			continue;
		}
		if (!strcmp(ptrec_place_name(t[i].p.kind), t[i].p.path))
			app(buf, len, &used, ", %s", t[i].p.path);
		else
			app(buf, len, &used, ", %s %s%s", ptrec_place_name(t[i].p.kind), t[i].p.path,
			    t[i].p.kind == PTREC_PLACE_CORE ? ".ptrec" : "");
	}
	if (first >= 0)
		app(buf, len, &used, "; for this user: %s%s (%s)", t[first].p.path,
		    t[first].p.kind == PTREC_PLACE_CORE ? ".ptrec" : "",
		    ptrec_place_name(t[first].p.kind));
	else
		app(buf, len, &used, "; for this user: nowhere is writable");
}

/* ---- the facts ---------------------------------------------------------------------------
 * describe() states every fact once, in one order, to an emitter (fact_emit.h): the text report
 * and the JSON are two renderings of the same walk.  Words are added where a number or yes/no
 * says too little for a person (the CPUID bit, the unit, the consequence). */

static void describe_pt_leaf(const struct ptrec_cpu_info *c, struct fact_emitter *e)
{
	if (!c->pt_leaf_valid) {
		fact_null(e, "pt_leaf14_0", "not enumerated");
	} else {
		fact_open(e, "pt_leaf14_0", "leaf 14H sub-leaf 0");
		fact_int(e, "max_subleaf", c->pt_max_subleaf, NULL);
		fact_bit(e, "cr3_filtering", c->cr3_filtering, "EBX[0] CR3 filtering");
		fact_bit(e, "psb_cyc", c->psb_cyc, "EBX[1] configurable PSB and cycle-accurate mode");
		fact_bit(e, "ip_filtering", c->ip_filtering, "EBX[2] IP filtering and TraceStop");
		fact_bit(e, "mtc", c->mtc, "EBX[3] MTC timing packets, COFI suppression");
		fact_bit(e, "ptwrite", c->ptwrite, "EBX[4] PTWRITE");
		fact_bit(e, "power_event_trace", c->power_event_trace, "EBX[5] power event trace");
		fact_bit(e, "psb_pmi_preservation", c->psb_pmi_preserve,
		         "EBX[6] PSB and PMI preservation");
		fact_bit(e, "event_trace", c->event_trace, "EBX[7] event trace");
		fact_bit(e, "tnt_disable", c->tnt_disable, "EBX[8] TNT disable");
		fact_bit(e, "topa_output", c->topa_output, "ECX[0] ToPA output");
		fact_bit(e, "topa_multiple_entries", c->topa_multiple_entries,
		         "ECX[1] multiple ToPA output entries");
		fact_bit(e, "single_range_output", c->single_range_output, "ECX[2] single-range output");
		fact_bit(e, "trace_transport_output", c->trace_transport_output,
		         "ECX[3] output to trace transport");
		fact_bit(e, "lip", c->lip, "ECX[31] IP payloads are LIP (include CS base)");
		fact_close(e);
	}
	if (!c->pt_subleaf1_valid) {
		fact_null(e, "pt_leaf14_1", "not enumerated");
		return;
	}
	fact_open(e, "pt_leaf14_1", "leaf 14H sub-leaf 1");
	fact_int(e, "num_address_ranges", c->num_address_ranges, NULL);
	fact_bits(e, "mtc_period_encodings", c->mtc_periods);
	fact_bits(e, "cycle_threshold_encodings", c->cycle_thresholds);
	fact_bits(e, "psb_frequency_encodings", c->psb_periods);
	fact_close(e);
}

static void describe_cpu(const struct info *in, struct fact_emitter *e)
{
	const struct ptrec_cpu_info *c = &in->cpu;
	char t[FACT_WORDS_MAX], v[32];

	fact_open(e, "cpu", "CPUID of this machine");
	fact_str(e, "vendor", c->vendor, NULL);
	fact_int(e, "max_leaf", c->max_leaf, NULL);
	fact_str(e, "signature", fact_say(v, "0x%08X", c->signature), NULL);
	fact_int(e, "family", c->family, NULL);
	fact_int(e, "model", c->model, NULL);
	fact_int(e, "stepping", c->stepping, NULL);
	fact_str(e, "display_family_model", fact_say(v, "%02X_%02XH", c->family, c->model), NULL);
	fact_bool(e, "hypervisor", c->hypervisor,
	          c->hypervisor ? "yes, a guest (CPUID.01H:ECX[31]=1)" : "no");
	fact_str(e, "hypervisor_vendor", c->hv_vendor, c->hv_vendor[0] ? NULL : "none");
	fact_say(t, "%s (CPUID.(EAX=07H,ECX=0):EBX[25]=%u)", c->pt ? "supported" : "not enumerated",
	         c->pt);
	fact_bool(e, "intel_pt", c->pt, t);
	if (c->pt_lbr_exclusive)
		fact_say(t, "yes on %02X_%02XH: LBR users are suspended while PT traces", c->family,
		         c->model);
	else
		fact_say(t, "no (%02X_%02XH is not on the SDM's exclusive list)", c->family, c->model);
	fact_bool(e, "pt_lbr_exclusive", c->pt_lbr_exclusive, t);
	if (c->tsc_leaf_valid && c->tsc_ratio_num) {
		fact_say(v, "%u/%u", c->tsc_ratio_num, c->tsc_ratio_den);
		fact_str(e, "tsc_ratio", v, fact_say(t, "%s (TSC / crystal clock, CPUID.15H EBX/EAX)",
		                                     v));
		fact_int(e, "crystal_hz", c->crystal_hz, c->crystal_hz ? NULL : "0 (not enumerated)");
	} else {
		fact_null(e, "tsc_ratio", "not enumerated (CPUID.15H)");
		fact_null(e, "crystal_hz", "not enumerated (CPUID.15H)");
	}
	fact_bit(e, "ds", c->ds, "CPUID.01H:EDX[21] Debug Store, needed by BTS");
	fact_bit(e, "dtes64", c->dtes64, "CPUID.01H:ECX[2] 64-bit DS layout, needed by BTS");
	describe_pt_leaf(c, e);
	fact_close(e);
}

/* A PMU's facts, in its section (opened by the caller). */
static void describe_pmu_facts(const struct info *in, const struct ptrec_pmu *p,
                               struct fact_emitter *e)
{
	char t[FACT_WORDS_MAX];

	fact_say(t, "no (no %s/sys/bus/event_source/devices/%s)", in->root ? in->root : "", p->name);
	fact_bool(e, "present", p->present, p->present ? NULL : t);
	if (p->present && p->type >= 0)
		fact_int(e, "type", p->type, fact_say(t, "%d (perf_event_attr.type)", p->type));
	else
		fact_null(e, "type", p->present ? "unreadable" : "none");
	fact_open(e, "caps", NULL);
	for (unsigned i = 0; i < p->ncaps; i++)
		fact_str(e, p->caps[i].name, p->caps[i].text, NULL);
	fact_close(e);
	fact_open(e, "format", NULL);
	for (unsigned i = 0; i < p->nformats; i++)
		fact_str(e, p->formats[i].name, p->formats[i].spec, NULL);
	fact_close(e);
}

static void describe_pmu(const struct info *in, const struct ptrec_pmu *p, struct fact_emitter *e)
{
	fact_open(e, p->name, NULL);
	describe_pmu_facts(in, p, e);
	fact_close(e);
}

/* ---- an aarch64 machine: MIDR_EL1, CoreSight, BRBE ---------------------------------------- */

static void describe_cpu_arm(const struct info *in, struct fact_emitter *e)
{
	const struct ptrec_arm_info *a = &in->armi;
	char t[FACT_WORDS_MAX], v[FACT_WORDS_MAX], w[96];
	size_t used = 0;

	fact_open(e, "cpu", "MIDR_EL1 of this machine");
	if (a->source == PTREC_MIDR_SYSFS)
		fact_str(e, "source", "sysfs", "sys/devices/system/cpu/cpuN/regs/identification/"
		         "midr_el1");
	else if (a->source == PTREC_MIDR_CPUINFO)
		fact_str(e, "source", "cpuinfo", "proc/cpuinfo (CPU implementer, variant, part, "
		         "revision; no midr_el1 in sysfs)");
	else
		fact_null(e, "source", "none: no midr_el1 in sysfs and no \"CPU implementer\" in "
		          "proc/cpuinfo");
	fact_int(e, "cpus", a->cpus, NULL);
	if (!a->nkinds) {
		static const char *const keys[] = {"midr", "name", "implementer", "variant",
		                                   "architecture", "part", "revision", "other_kinds"};

		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			fact_null(e, keys[i], "unknown");
		fact_close(e);
		return;
	}
	const struct ptrec_midr *m = &a->kinds[0].midr;
	const char *impl = ptrec_midr_implementer_name(m->implementer);
	const char *part = ptrec_midr_part_name(m->implementer, m->part);

	fact_say(v, "0x%08llx", (unsigned long long)m->value);
	fact_str(e, "midr", v, a->nkinds > 1 ? fact_say(t, "%s (the first CPU's)", v) : NULL);
	fact_str(e, "name", ptrec_midr_words(m, w, sizeof(w)), NULL);
	fact_say(v, "0x%02x", m->implementer);
	fact_str(e, "implementer", v, fact_say(t, "%s (%s)", v, impl ? impl : "not in ptrec's "
	                                       "table"));
	fact_int(e, "variant", m->variant, NULL);
	fact_int(e, "architecture", m->architecture, m->architecture == 0xf
	         ? "15 (0xF: features in the ID registers, as on every Armv8/v9 core)" : NULL);
	fact_say(v, "0x%03x", m->part);
	fact_str(e, "part", v, fact_say(t, "%s (%s)", v, part ? part : "not in ptrec's table"));
	fact_int(e, "revision", m->revision, NULL);
	t[0] = '\0';
	for (unsigned i = 1; i < a->nkinds; i++) {
		int n = snprintf(t + used, sizeof(t) - used, "%s0x%08llx %s on %u CPUs",
		                 i > 1 ? "; " : "", (unsigned long long)a->kinds[i].midr.value,
		                 ptrec_midr_words(&a->kinds[i].midr, w, sizeof(w)),
		                 a->kinds[i].cpus);
		if (n > 0 && used + (size_t)n < sizeof(t))
			used += (size_t)n;
	}
	fact_str(e, "other_kinds", t, a->nkinds > 1 ? NULL
	         : fact_say(w, "none (%u CPUs alike)", a->cpus));
	fact_close(e);
}

static void describe_pmus_arm(const struct info *in, struct fact_emitter *e)
{
	const struct ptrec_arm_info *a = &in->armi;
	char t[FACT_WORDS_MAX];
	size_t used = 0;

	fact_open(e, "pmus", "kernel PMUs under sys/bus/event_source/devices");
	fact_open(e, "cs_etm", "CoreSight ETM/ETE trace through perf");
	describe_pmu_facts(in, &a->cs_etm, e);
	t[0] = '\0';
	for (unsigned i = 0; i < a->nsinks; i++) {
		int n = snprintf(t + used, sizeof(t) - used, "%s%s", i ? " " : "", a->sinks[i]);
		if (n > 0 && used + (size_t)n < sizeof(t))
			used += (size_t)n;
	}
	fact_str(e, "sinks", t, a->nsinks ? NULL : "none");
	fact_close(e);
	fact_open(e, "cpu_pmus", "arm CPU PMUs (arm_pmuv3)");
	for (unsigned i = 0; i < a->ncpu_pmus; i++) {
		const struct ptrec_arm_cpu_pmu *p = &a->cpu_pmus[i];

		fact_open(e, p->name, NULL);
		if (p->type >= 0)
			fact_int(e, "type", p->type, NULL);
		else
			fact_null(e, "type", "unreadable");
		fact_int(e, "branches", p->branches, p->branches
		         ? fact_say(t, "%ld (caps/branches: BRBE branch records)", p->branches)
		         : "0 (no caps/branches: no BRBE)");
		fact_close(e);
	}
	fact_close(e);
	fact_close(e);

	fact_open(e, "trace_units", "branch-trace hardware: sys/bus/coresight/devices, the CPU "
	          "PMUs' caps/branches");
	fact_int(e, "ete", a->ete, fact_say(t, "%u (Embedded Trace Extension units, eteN)", a->ete));
	fact_int(e, "etm", a->etm, fact_say(t, "%u (ETMv4 trace units, etmN)", a->etm));
	fact_int(e, "trbe", a->trbe, fact_say(t, "%u (Trace Buffer Extension per-CPU sinks, trbeN)",
	                                      a->trbe));
	fact_bool(e, "brbe", a->brbe >= 0, a->brbe >= 0
	          ? fact_say(t, "yes (%s: %ld branch records)", a->cpu_pmus[a->brbe].name,
	                     a->cpu_pmus[a->brbe].branches)
	          : "no (no arm CPU PMU shows caps/branches)");
	fact_close(e);
}

static void describe_budget(const struct info *in, struct fact_emitter *e)
{
	static const struct { const char *key; size_t size; } sizes[] = {
		{"4k", 4u << 10}, {"64k", 64u << 10}, {"1m", 1u << 20}, {"16m", 16u << 20},
	};
	const struct ptrec_sys *s = &in->sys;
	const struct ptrec_mlock_budget *b = &in->budget;
	char t[FACT_WORDS_MAX], x[32], y[32];

	fact_open(e, "budget", "threads that get a ring: per-user mlock allowance, then "
	          "RLIMIT_MEMLOCK");
	fact_bytes(e, "ring_size", in->ring_size, NULL);
	if (in->budget_rc) {
		fact_null(e, "threads", "unknown (perf_event_mlock_kb or CPU count unreadable)");
		fact_close(e);
		return;
	}
	fact_say(t, "yes (%s): threads are bounded by memory only", s->cap_ipc_lock ? "CAP_IPC_LOCK"
	         : s->paranoid_valid && s->paranoid <= -1 ? "perf_event_paranoid -1"
	         : "RLIMIT_MEMLOCK unlimited");
	fact_bool(e, "unlimited", b->unlimited, b->unlimited ? t : NULL);
	fact_say(t, "%s (shared with the user's other perf users)",
	         fact_human(b->user_bytes, x, sizeof(x)));
	fact_bytes(e, "user_bytes", b->user_bytes, b->unlimited ? NULL : t);
	fact_bytes(e, "total_bytes", b->total_bytes, NULL);
	fact_say(t, "%s (ring + user page + %u data page)",
	         fact_human(b->per_thread_bytes, x, sizeof(x)), PTREC_PERF_DATA_PAGES);
	fact_bytes(e, "per_thread_bytes", b->per_thread_bytes, t);
	fact_say(t, "%" PRIu64 " threads at ring size %s", b->threads,
	         fact_human(in->ring_size, x, sizeof(x)));
	fact_count(e, "threads", b->threads, b->unlimited ? NULL : t);
	if (b->unlimited && s->cap_ipc_lock) {
		struct ptrec_sys plain = *s;
		struct ptrec_mlock_budget o;

		plain.cap_ipc_lock = 0;
		if (ptrec_mlock_budget(&plain, in->ring_size, &o) == 0 && !o.unlimited)
			fact_count(e, "threads_without_cap_ipc_lock", o.threads,
			           fact_say(t, "%" PRIu64 " at ring size %s (%s)", o.threads,
			                    fact_human(in->ring_size, x, sizeof(x)),
			                    fact_human(o.total_bytes, y, sizeof(y))));
	}
	if (!b->unlimited) {
		fact_open(e, "threads_at", "other ring sizes");
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			struct ptrec_mlock_budget o;

			ptrec_mlock_budget(s, sizes[i].size, &o);
			fact_count(e, sizes[i].key, o.threads, NULL);
		}
		fact_close(e);
	}
	fact_close(e);
}

static void describe_perf(const struct info *in, struct fact_emitter *e)
{
	const struct ptrec_sys *s = &in->sys;
	char t[FACT_WORDS_MAX], x[32];

	fact_open(e, "perf", "perf access for a process with this user's credentials");
	if (s->paranoid_valid) {
		fact_int(e, "paranoid", s->paranoid,
		         fact_say(t, "%d (perf_event_paranoid)", s->paranoid));
		fact_str(e, "paranoid_meaning", ptrec_paranoid_meaning(s->paranoid), NULL);
	} else {
		fact_null(e, "paranoid", "unreadable (kernel without perf events?)");
		fact_null(e, "paranoid_meaning", NULL);
	}
	fact_bool(e, "paranoid_allows_user_trace", ptrec_paranoid_allows(s), NULL);
	if (s->mlock_kb_valid) {
		fact_human((uint64_t)(s->mlock_kb / 4) * 4096u * s->online_cpus, x, sizeof(x));
		fact_int(e, "mlock_kb", s->mlock_kb, fact_say(t, "%ld KiB per CPU "
		         "(perf_event_mlock_kb): %s per user", s->mlock_kb, x));
	} else {
		fact_null(e, "mlock_kb", NULL);
	}
	fact_int(e, "online_cpus", s->online_cpus, NULL);
	fact_say(t, "%s per process", fact_human(s->memlock_cur, x, sizeof(x)));
	fact_bytes(e, "rlimit_memlock", s->memlock_cur, t);
	if (s->cap_valid) {
		fact_bool(e, "cap_ipc_lock", s->cap_ipc_lock, NULL);
		fact_bool(e, "cap_perfmon", s->cap_perfmon,
		          s->cap_perfmon ? "yes: perf_event_paranoid does not apply" : "no");
		fact_bool(e, "cap_sys_admin", s->cap_sys_admin,
		          s->cap_sys_admin ? "yes: perf_event_paranoid does not apply" : "no");
	} else {
		fact_null(e, "cap_ipc_lock", NULL);
		fact_null(e, "cap_perfmon", NULL);
		fact_null(e, "cap_sys_admin", NULL);
	}
	describe_budget(in, e);
	if (in->pt.present && !in->ptcfg_rc) {
		fact_open(e, "intel_pt_config", "perf_event_attr.config the recorder would open with");
		fact_str(e, "config", fact_say(x, "0x%" PRIx64, in->ptcfg.config), NULL);
		fact_str(e, "summary", in->ptcfg.summary, NULL);
		fact_close(e);
	}
	fact_close(e);
}

/* The JSON key of a place. */
static const char *place_key(enum ptrec_place_kind k)
{
	static const char *const keys[PTREC_PLACE_COUNT_] = {
		[PTREC_PLACE_DIR] = "ptrec_dir", [PTREC_PLACE_CORE] = "core_file",
		[PTREC_PLACE_STATE] = "state_directory", [PTREC_PLACE_LOGS] = "logs_directory",
		[PTREC_PLACE_CWD] = "cwd", [PTREC_PLACE_HOME] = "home",
		[PTREC_PLACE_VAR_TMP] = "var_tmp", [PTREC_PLACE_TMP] = "tmp",
	};
	return (unsigned)k < PTREC_PLACE_COUNT_ && keys[k] ? keys[k] : "unknown";
}

static void describe_core(const struct info *in, struct fact_emitter *e)
{
	const struct ptrec_sys *s = &in->sys;
	struct tool_place t[PTREC_PLACE_COUNT_];
	unsigned n = tool_places(s->core_pattern_valid ? s->core_pattern : NULL, t);
	const char *syslog = getenv("PTREC_SYSLOG");
	char w[FACT_WORDS_MAX];
	int chosen = 0;

	fact_open(e, "core", "where a report would be written");
	fact_str(e, "core_pattern", s->core_pattern_valid ? s->core_pattern : NULL, NULL);
	fact_bool(e, "pipe", s->core_pattern_valid && s->core_pattern[0] == '|', NULL);
	if (s->core_uses_pid >= 0)
		fact_int(e, "core_uses_pid", s->core_uses_pid, NULL);
	else
		fact_null(e, "core_uses_pid", NULL);
	fact_bytes(e, "rlimit_core", s->core_cur, s->core_cur ? NULL : "0 (the kernel writes no "
	           "core file; ptrec still writes its files)");
	report_location(in, w, sizeof(w));
	fact_str(e, "report_location", w, NULL);
	fact_open(e, "places", "in the order a crash tries them");
	for (unsigned i = 0; i < n; i++) {
		const char *core = t[i].p.kind == PTREC_PLACE_CORE ? ".ptrec" : "";

		fact_open(e, place_key(t[i].p.kind), ptrec_place_name(t[i].p.kind));
		fact_str(e, "path", fact_say(w, "%s%s", t[i].p.path, core), NULL);
		fact_bool(e, "usable", t[i].usable,
		          t[i].usable && !chosen ? "yes: a crash report goes here" : NULL);
		fact_str(e, "why", t[i].why, NULL);
		fact_close(e);
		chosen |= t[i].usable;
	}
	fact_close(e);
	syslog = syslog && *syslog ? syslog : "/dev/log";
	fact_str(e, "syslog", syslog, fact_say(w, "%s (every crash also logs one line there and "
	         "to stderr)", syslog));
	fact_close(e);
}

static void describe_backend(struct fact_emitter *e, const char *name, int rc, const char *reason,
                             int live);

/* Branch-trace hardware of an arm64 machine that libptrec does not use yet. */
static void describe_arm_backends(const struct info *in, struct fact_emitter *e)
{
	describe_backend(e, "coresight", -PTREC_ENOSUPP, in->cs_reason, 0);
	describe_backend(e, "brbe", -PTREC_ENOSUPP, in->brbe_reason, 0);
}

static void describe_backend(struct fact_emitter *e, const char *name, int rc, const char *reason,
                             int live)
{
	fact_open(e, name, NULL);
	fact_bool(e, "usable", !rc, rc ? "no" : live ? "yes (a test ring opened and closed)" : "yes");
	fact_str(e, "reason", rc ? reason : "", rc ? NULL : "none");
	fact_bool(e, "probed", live, NULL);
	fact_close(e);
}

/* How to install the helper, one line. */
static const char helper_install[] =
	"systemctl enable --now ptrec-helper.socket (units installed with libptrec), or as "
	"root: " PTREC_SBINDIR "/ptrec-helper --user USER (no file capability); see "
	"ptrec-helper(8)";

static void describe_helper(const struct info *in, struct fact_emitter *e)
{
	fact_open(e, "helper", "ptrec-helper opens perf events when the kernel refuses this "
	          "process");
	fact_str(e, "socket", in->helper_socket, in->helper_socket ? NULL : "none: PTREC_HELPER=off");
	fact_bool(e, "reachable", in->helper_rc == 0, NULL);
	fact_str(e, "answer", in->helper_answer, NULL);
	fact_bool(e, "needed", in->helper_needed, in->helper_needed ? "yes: perf_event_paranoid "
	          "forbids perf_event_open to this user" : "no: this user may open perf events");
	fact_bool(e, "used", in->helper_used, in->helper_used ? "yes, for the perf backends "
	          "refused above" : in->helper_needed ? "no: not reachable" : "no: not needed");
	fact_str(e, "install", helper_install, NULL);
	fact_close(e);
}

/* What PTREC_FILTER will do on this machine. */
static const char *filter_words(const struct info *in, char *t)
{
	const struct ptrec_pmu_cap *nr = ptrec_pmu_cap(&in->pt, "num_address_ranges");

	if (!in->env_filter || !*in->env_filter)
		return "none";
	if (!in->pt.present)
		return fact_say(t, "\"%s\": unused (no intel_pt)", in->env_filter);
	if (!nr || !nr->valid)
		return fact_say(t, "\"%s\": caps/num_address_ranges unknown", in->env_filter);
	if (nr->value == 0)
		return fact_say(t, "\"%s\": will be refused: the CPU has no address ranges "
		                "(caps/num_address_ranges=0)", in->env_filter);
	return fact_say(t, "\"%s\": the CPU filters up to %llu address ranges", in->env_filter,
	                (unsigned long long)nr->value);
}

static void describe_verdict(const struct info *in, struct fact_emitter *e)
{
	char t[FACT_WORDS_MAX];

	fact_open(e, "verdict", "what auto picks");
	fact_str(e, "backend", ptrec_backend_name(in->chosen), NULL);
	fact_open(e, "rejected", NULL);
	if (in->chosen != PTREC_BACKEND_INTEL_PT)
		fact_str(e, "intel_pt", in->pt_reason, NULL);
	if (in->chosen == PTREC_BACKEND_INSTRUMENTED)
		fact_str(e, "intel_bts", in->bts_reason, NULL);
	if (in->arm) {
		fact_str(e, "coresight", in->cs_reason, NULL);
		fact_str(e, "brbe", in->brbe_reason, NULL);
	}
	fact_close(e);
	fact_str(e, "override", in->env_backend, in->env_backend
	         ? fact_say(t, "PTREC_BACKEND=%s overrides auto", in->env_backend) : "none");
	fact_str(e, "filter", in->env_filter, filter_words(in, t));
	fact_close(e);
}

static void describe(const struct info *in, struct fact_emitter *e)
{
	fact_open(e, NULL, NULL);
	fact_str(e, "ptrec_version", ptrec_version(), NULL);
	fact_str(e, "root", in->root ? in->root : "/", in->root ? NULL : "/ (this system)");
	fact_str(e, "machine", in->arm ? "aarch64" : "x86-64", NULL);
	if (in->arm) {
		describe_cpu_arm(in, e);
		describe_pmus_arm(in, e);
	} else {
		describe_cpu(in, e);
		fact_open(e, "pmus", "kernel PMUs under sys/bus/event_source/devices");
		describe_pmu(in, &in->pt, e);
		describe_pmu(in, &in->bts, e);
		fact_close(e);
	}
	describe_perf(in, e);
	describe_core(in, e);
	fact_open(e, "backends", NULL);
	describe_backend(e, "intel_pt", in->pt_rc, in->pt_reason, in->pt_live);
	describe_backend(e, "intel_bts", in->bts_rc, in->bts_reason, in->bts_live);
	if (in->arm)
		describe_arm_backends(in, e);
	fact_open(e, "instrumented", NULL);
	fact_bool(e, "usable", 1, NULL);
	fact_str(e, "reason", "", "none");
	fact_str(e, "condition", "program built with `ptrec cflags` (patchable entries), "
	      "-finstrument-functions or -fsanitize-coverage=trace-pc", NULL);
	fact_close(e);
	fact_close(e);
	describe_helper(in, e);
	describe_verdict(in, e);
	fact_close(e);
}

static void verdict_line(const struct info *in, FILE *f)
{
	fprintf(f, "verdict: auto chooses %s", ptrec_backend_name(in->chosen));
	if (in->chosen == PTREC_BACKEND_INSTRUMENTED)
		fprintf(f, " (for programs built with `ptrec cflags`, -finstrument-functions or "
		        "-fsanitize-coverage=trace-pc; other programs get none: registers and "
		        "backtrace only)");
	if (in->chosen != PTREC_BACKEND_INTEL_PT)
		fprintf(f, "; intel_pt rejected: %s", in->pt_reason);
	if (in->chosen == PTREC_BACKEND_INSTRUMENTED)
		fprintf(f, "; intel_bts rejected: %s", in->bts_reason);
	if (in->arm)
		fprintf(f, "; coresight rejected: %s; brbe rejected: %s", in->cs_reason,
		        in->brbe_reason);
	fprintf(f, "\n");
}

/* The text report: the facts, then the verdict as one sentence on the last line. */
static void print_text(const struct info *in)
{
	struct fact_emitter e;

	fact_text_init(&e, stdout);
	describe(in, &e);
	fputc('\n', stdout);
	verdict_line(in, stdout);
}

static void print_json(const struct info *in)
{
	struct fact_emitter e;

	fact_json_init(&e, stdout);
	describe(in, &e);
	fputc('\n', stdout);
}

/* ---- command line ------------------------------------------------------------------------ */

static void usage(FILE *f)
{
	fprintf(f, "usage: ptrec info [--root DIR] [--json] [--ring-size SIZE]\n"
	        "  Reports whether and how libptrec records branch history on this machine:\n"
	        "  CPUID (Intel PT leaf 14H), the intel_pt/intel_bts perf PMUs, perf_event_paranoid,\n"
	        "  the mlock budget, where reports go, and which backend `auto` picks and why.\n"
	        "  --root DIR        read sys/ and proc/ under DIR instead of / (CPUID is always\n"
	        "                    this CPU's; no perf_event_open probe is made)\n"
	        "  --json            print the same facts as JSON\n"
	        "  --ring-size SIZE  ring size for the budget (default PTREC_RING_SIZE or 64K)\n"
	        "See doc/ptrec-info.md.\n");
}

int cmd_info(int argc, char **argv)
{
	enum { OPT_JSON = 256, OPT_ROOT, OPT_RING_SIZE };
	static const struct option opts[] = {
		{"json", no_argument, NULL, OPT_JSON},
		{"root", required_argument, NULL, OPT_ROOT},
		{"ring-size", required_argument, NULL, OPT_RING_SIZE},
		TOOL_OPT_HELP, TOOL_OPT_LAST,
	};
	struct tool_args a = TOOL_ARGS_INIT(argc, argv, opts, usage);
	struct ptrec_config cfg;
	const char *root = NULL;
	size_t ring_size;
	struct info *in;
	int json = 0;

	ptrec_config_init(&cfg);
	ring_size = cfg.ring_size;
	for (int o; (o = tool_getopt(&a)) != TOOL_ARGS_END;) {
		switch (o) {
		case TOOL_ARGS_STOP:
			return a.status;
		case OPT_JSON:
			json = 1;
			break;
		case OPT_ROOT:
			if (!*a.arg)
				return tool_bad_value(&a, "a directory");
			root = a.arg;
			break;
		case OPT_RING_SIZE:
			if (ptrec_parse_size(a.arg, &ring_size) || !ptrec_ring_size_valid(ring_size))
				return tool_bad_value(&a, "a power of two between 4K and 128M");
			break;
		case TOOL_ARGS_OPERAND:
			return tool_extra_operand(&a);
		}
	}
	in = calloc(1, sizeof(*in));
	if (!in) {
		tool_error(NULL, -1, "info: out of memory");
		return TOOL_EXIT_INPUT;
	}
	in->root = root;
	in->ring_size = ring_size;
	gather(in);
	if (json)
		print_json(in);
	else
		print_text(in);
	free(in);
	return TOOL_EXIT_OK;
}
