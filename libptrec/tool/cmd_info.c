/* cmd_info.c — `ptrec info [--root DIR] [--json] [--ring-size SIZE]`: whether and how the
 * recorder works on this machine, and why not.  Reads CPUID (this CPU, always), the perf PMUs
 * and limits under DIR (default /), and prints a report or the same facts as JSON. */
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
#include "platform/pmu_sysfs.h"
#include "ptrec.h"
#include "report/json_str.h"
#include "core/settings.h"
#include "tool/tool.h"

#define REASON_MAX 512

/* Everything the report shows. */
struct info {
	const char *root;            /* --root, or NULL for the real system */
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

static const char *yesno(int v)
{
	return v ? "yes" : "no";
}

/* Human-readable byte count: "64 KiB", "1 MiB", "1536 bytes". */
static const char *human(uint64_t v, char *buf, size_t len)
{
	if (v == PTREC_RLIM_UNLIMITED)
		snprintf(buf, len, "unlimited");
	else if (v && v % (1u << 30) == 0)
		snprintf(buf, len, "%" PRIu64 " GiB", v >> 30);
	else if (v && v % (1u << 20) == 0)
		snprintf(buf, len, "%" PRIu64 " MiB", v >> 20);
	else if (v && v % 1024 == 0)
		snprintf(buf, len, "%" PRIu64 " KiB", v >> 10);
	else
		snprintf(buf, len, "%" PRIu64 " bytes", v);
	return buf;
}

/* "0 3 6 9" for a bitmap of encodings. */
static const char *encodings(unsigned bitmap, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < 16; i++)
		if ((bitmap >> i) & 1)
			n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%u", n ? " " : "", i);
	if (!bitmap)
		snprintf(buf, len, "none");
	return buf;
}

/* ---- gathering --------------------------------------------------------------------------- */

static void gather(struct info *in)
{
	ptrec_cpuid_read(&in->raw);
	ptrec_cpuid_decode(&in->raw, &in->cpu);
	ptrec_pmu_read(in->root, "intel_pt", &in->pt);
	ptrec_pmu_read(in->root, "intel_bts", &in->bts);
	ptrec_sys_read(in->root, &in->sys);
	in->budget_rc = ptrec_mlock_budget(&in->sys, in->ring_size, &in->budget);

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

/* Prints the places one per line with their verdicts. */
static void print_places(const struct info *in)
{
	struct tool_place t[PTREC_PLACE_COUNT_];
	unsigned n = tool_places(in->sys.core_pattern_valid ? in->sys.core_pattern : NULL, t);
	int chosen = 0;

	printf("  places, in order:\n");
	for (unsigned i = 0; i < n; i++) {
		printf("    %-22s %s%s: %s%s\n", ptrec_place_name(t[i].p.kind), t[i].p.path,
		       t[i].p.kind == PTREC_PLACE_CORE ? ".ptrec" : "", t[i].why,
		       t[i].usable && !chosen ? "  <- a crash report goes here" : "");
		chosen |= t[i].usable;
	}
	printf("  every crash also logs one line to syslog (%s) and stderr\n",
	       getenv("PTREC_SYSLOG") && *getenv("PTREC_SYSLOG") ? getenv("PTREC_SYSLOG") : "/dev/log");
}

/* ---- text report ------------------------------------------------------------------------- */

static void print_pt_leaf(const struct ptrec_cpu_info *c)
{
	char b[80];

	printf("  leaf 14H sub-leaf 0 (max sub-leaf %u):\n", c->pt_max_subleaf);
	printf("    EBX[0] CR3 filtering                               %s\n", yesno(c->cr3_filtering));
	printf("    EBX[1] configurable PSB and cycle-accurate mode    %s\n", yesno(c->psb_cyc));
	printf("    EBX[2] IP filtering and TraceStop                  %s\n", yesno(c->ip_filtering));
	printf("    EBX[3] MTC timing packets, COFI suppression        %s\n", yesno(c->mtc));
	printf("    EBX[4] PTWRITE                                     %s\n", yesno(c->ptwrite));
	printf("    EBX[5] power event trace                           %s\n",
	       yesno(c->power_event_trace));
	printf("    EBX[6] PSB and PMI preservation                    %s\n",
	       yesno(c->psb_pmi_preserve));
	printf("    EBX[7] event trace                                 %s\n", yesno(c->event_trace));
	printf("    EBX[8] TNT disable                                 %s\n", yesno(c->tnt_disable));
	printf("    ECX[0] ToPA output                                 %s\n", yesno(c->topa_output));
	printf("    ECX[1] multiple ToPA output entries                %s\n",
	       yesno(c->topa_multiple_entries));
	printf("    ECX[2] single-range output                         %s\n",
	       yesno(c->single_range_output));
	printf("    ECX[3] output to trace transport                   %s\n",
	       yesno(c->trace_transport_output));
	printf("    ECX[31] IP payloads are LIP (include CS base)      %s\n", yesno(c->lip));
	if (!c->pt_subleaf1_valid) {
		printf("  leaf 14H sub-leaf 1: not enumerated\n");
		return;
	}
	printf("  leaf 14H sub-leaf 1:\n");
	printf("    address ranges for IP filtering                    %u\n",
	       c->num_address_ranges);
	printf("    MTC period encodings                               0x%04x: %s\n",
	       c->mtc_periods, encodings(c->mtc_periods, b, sizeof(b)));
	printf("    cycle threshold encodings                          0x%04x: %s\n",
	       c->cycle_thresholds, encodings(c->cycle_thresholds, b, sizeof(b)));
	printf("    PSB frequency encodings                            0x%04x: %s\n",
	       c->psb_periods, encodings(c->psb_periods, b, sizeof(b)));
}

static void print_pmu(const struct ptrec_pmu *p, const char *root)
{
	if (!p->present) {
		printf("  %-10s absent (no %s/sys/bus/event_source/devices/%s)\n", p->name,
		       root ? root : "", p->name);
		return;
	}
	printf("  %-10s present, type %d\n", p->name, p->type);
	if (p->ncaps) {
		printf("    caps:  ");
		for (unsigned i = 0; i < p->ncaps; i++)
			printf("%s%s=%s", i ? (i % 4 ? "  " : "\n           ") : "", p->caps[i].name,
			       p->caps[i].text);
		printf("\n");
	}
	if (p->nformats) {
		printf("    format:");
		for (unsigned i = 0; i < p->nformats; i++)
			printf("%s%s=%s", i ? (i % 4 ? "  " : "\n           ") : " ",
			       p->formats[i].name, p->formats[i].spec);
		printf("\n");
	}
}

static void print_budget(const struct info *in)
{
	const struct ptrec_sys *s = &in->sys;
	char a[32], b[32], c[32];
	static const size_t sizes[] = {4u << 10, 64u << 10, 1u << 20, 16u << 20};

	if (s->mlock_kb_valid)
		printf("  perf_event_mlock_kb   %ld KiB per CPU, %u online CPUs: %s per user\n",
		       s->mlock_kb, s->online_cpus,
		       human((uint64_t)(s->mlock_kb / 4) * 4096u * s->online_cpus, a, sizeof(a)));
	else
		printf("  perf_event_mlock_kb   unknown\n");
	printf("  RLIMIT_MEMLOCK        %s per process\n", human(s->memlock_cur, a, sizeof(a)));
	printf("  CAP_IPC_LOCK          %s\n", s->cap_valid ? yesno(s->cap_ipc_lock) : "unknown");
	if (in->budget_rc) {
		printf("  ring budget           unknown (perf_event_mlock_kb or CPU count unreadable)\n");
		return;
	}
	if (in->budget.unlimited) {
		struct ptrec_sys plain = *s;
		struct ptrec_mlock_budget o;

		printf("  ring budget           unlimited (%s): threads at %s rings are bounded by "
		       "memory only\n",
		       s->cap_ipc_lock ? "CAP_IPC_LOCK" : s->paranoid_valid && s->paranoid <= -1
		       ? "perf_event_paranoid -1" : "RLIMIT_MEMLOCK unlimited",
		       human(in->ring_size, a, sizeof(a)));
		plain.cap_ipc_lock = 0;
		if (s->cap_ipc_lock && ptrec_mlock_budget(&plain, in->ring_size, &o) == 0 &&
		    !o.unlimited)
			printf("                        without CAP_IPC_LOCK: %s, %" PRIu64 " threads "
			       "at ring size %s\n", human(o.total_bytes, b, sizeof(b)), o.threads,
			       human(in->ring_size, c, sizeof(c)));
		return;
	}
	printf("  ring budget           %s: %" PRIu64 " threads at ring size %s (each pins %s: "
	       "ring + user page + %u data page)\n",
	       human(in->budget.total_bytes, a, sizeof(a)), in->budget.threads,
	       human(in->ring_size, b, sizeof(b)), human(in->budget.per_thread_bytes, c, sizeof(c)),
	       PTREC_PERF_DATA_PAGES);
	printf("                        other sizes:");
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct ptrec_mlock_budget o;
		ptrec_mlock_budget(s, sizes[i], &o);
		printf("%s %" PRIu64 " at %s", i ? "," : "", o.threads, human(sizes[i], a, sizeof(a)));
	}
	printf("\n                        (the per-user part is shared with the user's other "
	       "perf users)\n");
}

static void verdict_line(const struct info *in, FILE *f)
{
	fprintf(f, "verdict: auto chooses %s", ptrec_backend_name(in->chosen));
	if (in->chosen == PTREC_BACKEND_INSTRUMENTED)
		fprintf(f, " (for programs built with -finstrument-functions or "
		        "-fsanitize-coverage=trace-pc; other programs get none: registers and "
		        "backtrace only)");
	if (in->chosen != PTREC_BACKEND_INTEL_PT)
		fprintf(f, "; intel_pt rejected: %s", in->pt_reason);
	if (in->chosen == PTREC_BACKEND_INSTRUMENTED)
		fprintf(f, "; intel_bts rejected: %s", in->bts_reason);
	fprintf(f, "\n");
}

/* How to install the helper, one line. */
static const char helper_install[] =
	"systemctl enable --now ptrec-helper.socket (units installed with libptrec), or "
	"setcap cap_perfmon+ep " PTREC_SBINDIR "/ptrec-helper and run it as a daemon; "
	"see ptrec-helper(8)";

static void print_helper(const struct info *in)
{
	printf("\nptrec-helper (opens perf events when the kernel refuses this process)\n");
	printf("  socket                %s\n", in->helper_socket ? in->helper_socket
	       : "none: PTREC_HELPER=off");
	printf("  reachable             %s%s\n", in->helper_rc ? "no: " : "yes: ",
	       in->helper_answer);
	printf("  needed                %s\n", in->helper_needed ? "yes: perf_event_paranoid "
	       "forbids perf_event_open to this user" : "no: this user may open perf events");
	printf("  would be used         %s\n", in->helper_used ? "yes, for the perf backends "
	       "refused above" : in->helper_needed ? "no: not reachable" : "no: not needed");
	if (in->helper_needed && in->helper_rc)
		printf("  install               %s\n", helper_install);
}

static void print_text(const struct info *in)
{
	const struct ptrec_cpu_info *c = &in->cpu;
	const struct ptrec_sys *s = &in->sys;
	char loc[1024], a[32];

	printf("ptrec info %s%s%s\n\n", ptrec_version(), in->root ? ", root " : "",
	       in->root ? in->root : "");
	printf("CPU (CPUID of this machine)\n");
	printf("  vendor                %s\n", c->vendor);
	printf("  signature             0x%08X: DisplayFamily_DisplayModel %02X_%02XH, stepping "
	       "%u\n", c->signature, c->family, c->model, c->stepping);
	printf("  hypervisor            %s%s%s%s\n", c->hypervisor ? "yes, a guest (CPUID.01H:ECX[31]=1)"
	       : "no", c->hv_vendor[0] ? ", \"" : "", c->hv_vendor, c->hv_vendor[0] ? "\"" : "");
	printf("  Intel PT              %s (CPUID.(EAX=07H,ECX=0):EBX[25]=%u)\n",
	       c->pt ? "supported" : "not enumerated", c->pt);
	if (c->pt_lbr_exclusive)
		printf("  PT and LBR            mutually exclusive on %02X_%02XH: LBR users are "
		       "suspended while PT traces\n", c->family, c->model);
	else if (c->pt)
		printf("  PT and LBR            usable together (%02X_%02XH is not on the SDM's "
		       "exclusive list)\n", c->family, c->model);
	if (c->pt_leaf_valid)
		print_pt_leaf(c);
	if (c->tsc_leaf_valid && c->tsc_ratio_num)
		printf("  TSC / crystal clock   %u/%u, crystal %u Hz%s\n", c->tsc_ratio_num,
		       c->tsc_ratio_den, c->crystal_hz, c->crystal_hz ? "" : " (not enumerated)");
	printf("  Debug Store (BTS)     DS %s, DTES64 %s\n", yesno(c->ds), yesno(c->dtes64));

	printf("\nKernel PMUs (%s/sys/bus/event_source/devices)\n", in->root ? in->root : "");
	print_pmu(&in->pt, in->root);
	print_pmu(&in->bts, in->root);
	if (in->pt.present && !in->ptcfg_rc)
		printf("  intel_pt config       config=0x%" PRIx64 " (%s)\n", in->ptcfg.config,
		       in->ptcfg.summary);

	printf("\nPerf access for a process with this user's credentials\n");
	if (s->paranoid_valid)
		printf("  perf_event_paranoid   %d: %s\n", s->paranoid,
		       ptrec_paranoid_meaning(s->paranoid));
	else
		printf("  perf_event_paranoid   unreadable (kernel without perf events?)\n");
	if (s->cap_perfmon || s->cap_sys_admin)
		printf("  privileges            %s%s: perf_event_paranoid does not apply\n",
		       s->cap_perfmon ? "CAP_PERFMON " : "", s->cap_sys_admin ? "CAP_SYS_ADMIN" : "");
	print_budget(in);

	print_helper(in);

	printf("\nWhere a report would be written\n");
	printf("  core_pattern          %s\n", s->core_pattern_valid ? s->core_pattern : "unknown");
	printf("  RLIMIT_CORE           %s%s\n", s->core_cur ? human(s->core_cur, a, sizeof(a)) : "0",
	       s->core_cur == 0 ? " (the kernel writes no core file; ptrec still writes its "
	       "files)" : "");
	report_location(in, loc, sizeof(loc));
	printf("  ptrec writes          %s\n", loc);
	print_places(in);

	printf("\nBackends\n");
	printf("  intel_pt              %s%s%s\n", in->pt_rc ? "rejected: " : "usable",
	       in->pt_rc ? in->pt_reason : "", in->pt_live && !in->pt_rc
	       ? " (a test ring opened and closed)" : "");
	printf("  intel_bts             %s%s%s\n", in->bts_rc ? "rejected: " : "usable",
	       in->bts_rc ? in->bts_reason : "", in->bts_live && !in->bts_rc
	       ? " (a test ring opened and closed)" : "");
	printf("  instrumented          available to programs built with -finstrument-functions "
	       "or -fsanitize-coverage=trace-pc\n");
	if (in->env_backend)
		printf("  PTREC_BACKEND         %s overrides auto\n", in->env_backend);
	if (in->env_filter && *in->env_filter) {
		const struct ptrec_pmu_cap *nr = ptrec_pmu_cap(&in->pt, "num_address_ranges");
		printf("  PTREC_FILTER          \"%s\": ", in->env_filter);
		if (!in->pt.present)
			printf("unused (no intel_pt)\n");
		else if (!nr || !nr->valid)
			printf("caps/num_address_ranges unknown\n");
		else if (nr->value == 0)
			printf("will be refused: the CPU has no address ranges "
			       "(caps/num_address_ranges=0)\n");
		else
			printf("the CPU filters up to %llu address ranges\n",
			       (unsigned long long)nr->value);
	}
	printf("\n");
	verdict_line(in, stdout);
}

/* ---- JSON -------------------------------------------------------------------------------- */

struct json {
	FILE *f;
	int depth;
	int need_comma[16];
};

static void j_str_raw(struct json *j, const char *s)
{
	ptrec_json_str(j->f, s);
}

static void j_key(struct json *j, const char *key)
{
	if (j->need_comma[j->depth])
		fputc(',', j->f);
	fputc('\n', j->f);
	for (int i = 0; i <= j->depth; i++)
		fputs("  ", j->f);
	j->need_comma[j->depth] = 1;
	if (key) {
		j_str_raw(j, key);
		fputs(": ", j->f);
	}
}

static void j_open(struct json *j, const char *key, char c)
{
	if (j->depth >= 0)
		j_key(j, key);
	fputc(c, j->f);
	j->depth++;
	j->need_comma[j->depth] = 0;
}

static void j_close(struct json *j, char c)
{
	j->depth--;
	fputc('\n', j->f);
	for (int i = 0; i <= j->depth; i++)
		fputs("  ", j->f);
	fputc(c, j->f);
}

static void j_str(struct json *j, const char *key, const char *v)
{
	j_key(j, key);
	if (v)
		j_str_raw(j, v);
	else
		fputs("null", j->f);
}

static void j_int(struct json *j, const char *key, long long v)
{
	j_key(j, key);
	fprintf(j->f, "%lld", v);
}

static void j_u64(struct json *j, const char *key, uint64_t v)
{
	j_key(j, key);
	if (v == PTREC_RLIM_UNLIMITED)
		fputs("\"unlimited\"", j->f);
	else
		fprintf(j->f, "%" PRIu64, v);
}

static void j_bool(struct json *j, const char *key, int v)
{
	j_key(j, key);
	fputs(v ? "true" : "false", j->f);
}

static void j_null(struct json *j, const char *key)
{
	j_key(j, key);
	fputs("null", j->f);
}

static void j_encodings(struct json *j, const char *key, unsigned bitmap)
{
	j_open(j, key, '[');
	for (unsigned i = 0; i < 16; i++)
		if ((bitmap >> i) & 1)
			j_int(j, NULL, i);
	j_close(j, ']');
}

static void json_pmu(struct json *j, const struct ptrec_pmu *p)
{
	j_open(j, p->name, '{');
	j_bool(j, "present", p->present);
	if (p->present && p->type >= 0)
		j_int(j, "type", p->type);
	else
		j_null(j, "type");
	j_open(j, "caps", '{');
	for (unsigned i = 0; i < p->ncaps; i++)
		j_str(j, p->caps[i].name, p->caps[i].text);
	j_close(j, '}');
	j_open(j, "format", '{');
	for (unsigned i = 0; i < p->nformats; i++)
		j_str(j, p->formats[i].name, p->formats[i].spec);
	j_close(j, '}');
	j_close(j, '}');
}

static void print_json(const struct info *in)
{
	const struct ptrec_cpu_info *c = &in->cpu;
	const struct ptrec_sys *s = &in->sys;
	struct json jj = {stdout, -1, {0}}, *j = &jj;
	char buf[1024];

	j_open(j, NULL, '{');
	j_str(j, "ptrec_version", ptrec_version());
	j_str(j, "root", in->root ? in->root : "/");

	j_open(j, "cpu", '{');
	j_str(j, "vendor", c->vendor);
	j_int(j, "max_leaf", c->max_leaf);
	snprintf(buf, sizeof(buf), "0x%08X", c->signature);
	j_str(j, "signature", buf);
	j_int(j, "family", c->family);
	j_int(j, "model", c->model);
	j_int(j, "stepping", c->stepping);
	snprintf(buf, sizeof(buf), "%02X_%02XH", c->family, c->model);
	j_str(j, "display_family_model", buf);
	j_bool(j, "hypervisor", c->hypervisor);
	j_str(j, "hypervisor_vendor", c->hv_vendor);
	j_bool(j, "intel_pt", c->pt);
	j_bool(j, "pt_lbr_exclusive", c->pt_lbr_exclusive);
	j_bool(j, "ds", c->ds);
	j_bool(j, "dtes64", c->dtes64);
	if (c->pt_leaf_valid) {
		j_open(j, "pt_leaf14_0", '{');
		j_int(j, "max_subleaf", c->pt_max_subleaf);
		j_bool(j, "cr3_filtering", c->cr3_filtering);
		j_bool(j, "psb_cyc", c->psb_cyc);
		j_bool(j, "ip_filtering", c->ip_filtering);
		j_bool(j, "mtc", c->mtc);
		j_bool(j, "ptwrite", c->ptwrite);
		j_bool(j, "power_event_trace", c->power_event_trace);
		j_bool(j, "psb_pmi_preservation", c->psb_pmi_preserve);
		j_bool(j, "event_trace", c->event_trace);
		j_bool(j, "tnt_disable", c->tnt_disable);
		j_bool(j, "topa_output", c->topa_output);
		j_bool(j, "topa_multiple_entries", c->topa_multiple_entries);
		j_bool(j, "single_range_output", c->single_range_output);
		j_bool(j, "trace_transport_output", c->trace_transport_output);
		j_bool(j, "lip", c->lip);
		j_close(j, '}');
	} else {
		j_null(j, "pt_leaf14_0");
	}
	if (c->pt_subleaf1_valid) {
		j_open(j, "pt_leaf14_1", '{');
		j_int(j, "num_address_ranges", c->num_address_ranges);
		j_encodings(j, "mtc_period_encodings", c->mtc_periods);
		j_encodings(j, "cycle_threshold_encodings", c->cycle_thresholds);
		j_encodings(j, "psb_frequency_encodings", c->psb_periods);
		j_close(j, '}');
	} else {
		j_null(j, "pt_leaf14_1");
	}
	j_close(j, '}');

	j_open(j, "pmus", '{');
	json_pmu(j, &in->pt);
	json_pmu(j, &in->bts);
	j_close(j, '}');

	j_open(j, "perf", '{');
	if (s->paranoid_valid) {
		j_int(j, "paranoid", s->paranoid);
		j_str(j, "paranoid_meaning", ptrec_paranoid_meaning(s->paranoid));
	} else {
		j_null(j, "paranoid");
		j_null(j, "paranoid_meaning");
	}
	j_bool(j, "paranoid_allows_user_trace", ptrec_paranoid_allows(s));
	if (s->mlock_kb_valid)
		j_int(j, "mlock_kb", s->mlock_kb);
	else
		j_null(j, "mlock_kb");
	j_int(j, "online_cpus", s->online_cpus);
	j_u64(j, "rlimit_memlock", s->memlock_cur);
	if (s->cap_valid) {
		j_bool(j, "cap_ipc_lock", s->cap_ipc_lock);
		j_bool(j, "cap_perfmon", s->cap_perfmon);
		j_bool(j, "cap_sys_admin", s->cap_sys_admin);
	} else {
		j_null(j, "cap_ipc_lock");
		j_null(j, "cap_perfmon");
		j_null(j, "cap_sys_admin");
	}
	j_open(j, "budget", '{');
	j_u64(j, "ring_size", in->ring_size);
	if (in->budget_rc) {
		j_null(j, "threads");
	} else {
		j_bool(j, "unlimited", in->budget.unlimited);
		j_u64(j, "user_bytes", in->budget.user_bytes);
		j_u64(j, "total_bytes", in->budget.total_bytes);
		j_u64(j, "per_thread_bytes", in->budget.per_thread_bytes);
		j_u64(j, "threads", in->budget.threads);
	}
	j_close(j, '}');
	if (in->pt.present && !in->ptcfg_rc) {
		j_open(j, "intel_pt_config", '{');
		snprintf(buf, sizeof(buf), "0x%" PRIx64, in->ptcfg.config);
		j_str(j, "config", buf);
		j_str(j, "summary", in->ptcfg.summary);
		j_close(j, '}');
	}
	j_close(j, '}');

	j_open(j, "core", '{');
	j_str(j, "core_pattern", s->core_pattern_valid ? s->core_pattern : NULL);
	j_bool(j, "pipe", s->core_pattern_valid && s->core_pattern[0] == '|');
	if (s->core_uses_pid >= 0)
		j_int(j, "core_uses_pid", s->core_uses_pid);
	else
		j_null(j, "core_uses_pid");
	j_u64(j, "rlimit_core", s->core_cur);
	report_location(in, buf, sizeof(buf));
	j_str(j, "report_location", buf);
	j_close(j, '}');

	j_open(j, "backends", '{');
	j_open(j, "intel_pt", '{');
	j_bool(j, "usable", !in->pt_rc);
	j_str(j, "reason", in->pt_rc ? in->pt_reason : "");
	j_bool(j, "probed", in->pt_live);
	j_close(j, '}');
	j_open(j, "intel_bts", '{');
	j_bool(j, "usable", !in->bts_rc);
	j_str(j, "reason", in->bts_rc ? in->bts_reason : "");
	j_bool(j, "probed", in->bts_live);
	j_close(j, '}');
	j_open(j, "instrumented", '{');
	j_bool(j, "usable", 1);
	j_str(j, "reason", "");
	j_str(j, "condition", "program built with -finstrument-functions or "
	      "-fsanitize-coverage=trace-pc");
	j_close(j, '}');
	j_close(j, '}');

	j_open(j, "helper", '{');
	j_str(j, "socket", in->helper_socket);
	j_bool(j, "reachable", in->helper_rc == 0);
	j_str(j, "answer", in->helper_answer);
	j_bool(j, "needed", in->helper_needed);
	j_bool(j, "used", in->helper_used);
	j_str(j, "install", helper_install);
	j_close(j, '}');

	j_open(j, "verdict", '{');
	j_str(j, "backend", ptrec_backend_name(in->chosen));
	j_open(j, "rejected", '{');
	if (in->chosen != PTREC_BACKEND_INTEL_PT)
		j_str(j, "intel_pt", in->pt_reason);
	if (in->chosen == PTREC_BACKEND_INSTRUMENTED)
		j_str(j, "intel_bts", in->bts_reason);
	j_close(j, '}');
	j_str(j, "override", in->env_backend);
	j_str(j, "filter", in->env_filter);
	j_close(j, '}');
	j_close(j, '}');
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
