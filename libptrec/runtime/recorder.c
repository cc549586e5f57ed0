/* recorder.c — recorder lifecycle: configuration, backend choice (with the reason for every
 * refusal), init/shutdown and status.  Threads live in thread_registry.c, the crash path in
 * crash_signal.c and the files it uses. */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "platform/cpuid.h"
#include "platform/pmu_sysfs.h"
#include "core/safe_str.h"
#include "core/settings.h"
#include "capture/patch_entries.h"
#include "runtime/recorder.h"

#ifndef PTREC_BINDIR
#define PTREC_BINDIR "/usr/local/bin"
#endif

struct ptrec_recorder ptrec_rec = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

int ptrec_backend_choose(const struct ptrec_backend_ops *const *cands, size_t n,
                         const struct ptrec_config *cfg,
                         char reasons[PTREC_BACKEND_COUNT_][PTREC_REASON_MAX],
                         const struct ptrec_backend_ops **chosen)
{
	static const enum ptrec_backend order[] = {
		PTREC_BACKEND_INTEL_PT, PTREC_BACKEND_INTEL_BTS, PTREC_BACKEND_INSTRUMENTED,
	};

	*chosen = NULL;
	for (int b = 0; b < PTREC_BACKEND_COUNT_; b++)
		reasons[b][0] = '\0';
	if (cfg->backend == PTREC_BACKEND_NONE)
		return PTREC_BACKEND_NONE;
	for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++) {
		enum ptrec_backend id = order[k];
		const struct ptrec_backend_ops *ops = NULL;
		if (cfg->backend != PTREC_BACKEND_AUTO && cfg->backend != id)
			continue;
		for (size_t i = 0; i < n; i++)
			if (cands[i] && cands[i]->id == id)
				ops = cands[i];
		if (!ops) {
			snprintf(reasons[id], PTREC_REASON_MAX, "not built into this library");
			if (cfg->backend == id)
				return -PTREC_ENOSUPP;
			continue;
		}
		char why[PTREC_REASON_MAX] = "";
		int r = ops->probe(cfg, why, sizeof(why));
		if (r == 0) {
			*chosen = ops;
			return id;
		}
		snprintf(reasons[id], PTREC_REASON_MAX, "%s", why[0] ? why : ptrec_strerror(r));
		if (cfg->backend == id)
			return -PTREC_ENOSUPP;
	}
	return PTREC_BACKEND_NONE;
}

/* The tool run at crash time: PTREC_BINDIR/ptrec, or $PTREC_TOOL when it is absolute. */
static void tool_path_init(void)
{
	const char *s = ptrec_env("PTREC_TOOL");
	if (s && s[0] == '/' && strlen(s) < sizeof(ptrec_crash.tool_path))
		snprintf(ptrec_crash.tool_path, sizeof(ptrec_crash.tool_path), "%s", s);
	else
		snprintf(ptrec_crash.tool_path, sizeof(ptrec_crash.tool_path), "%s/ptrec", PTREC_BINDIR);
}

static int config_valid(const struct ptrec_config *cfg)
{
	return cfg->struct_size == sizeof(*cfg) && (unsigned)cfg->backend < PTREC_BACKEND_COUNT_ &&
	       ptrec_ring_size_valid(cfg->ring_size) && cfg->memory_budget >= PTREC_RING_MIN &&
	       (cfg->report_timeout_ms == 0 || (cfg->report_timeout_ms >= PTREC_REPORT_TIMEOUT_MIN &&
	                                        cfg->report_timeout_ms <= PTREC_REPORT_TIMEOUT_MAX)) &&
	       (!cfg->dump_dir || strlen(cfg->dump_dir) < PTREC_PATH_MAX - 64) &&
	       (!cfg->filter || strlen(cfg->filter) < sizeof(ptrec_crash.filter));
}

/* Reads, once at init, what a PT decoder needs to turn MTC and CYC into time and what the dump
 * carries for it: the TSC/crystal ratio (CPUID 15H) and the maximum non-turbo ratio the kernel
 * exports (caps/max_nonturbo_ratio, printed in decimal).  Zero means unknown; decoders then
 * calibrate from the trace. */
static void clock_params_init(enum ptrec_backend backend)
{
	struct ptrec_cpuid_raw raw;
	struct ptrec_cpu_info cpu;
	static struct ptrec_pmu pmu; /* large; only touched here, under ptrec_rec.lock */
	const struct ptrec_pmu_cap *cap;

	ptrec_crash.tsc_ratio_n = ptrec_crash.tsc_ratio_d = ptrec_crash.nom_freq = 0;
	if (backend != PTREC_BACKEND_INTEL_PT)
		return;
	ptrec_cpuid_read(&raw);
	ptrec_cpuid_decode(&raw, &cpu);
	if (cpu.tsc_leaf_valid && cpu.tsc_ratio_num && cpu.tsc_ratio_den) {
		ptrec_crash.tsc_ratio_n = cpu.tsc_ratio_num;
		ptrec_crash.tsc_ratio_d = cpu.tsc_ratio_den;
	}
	if (ptrec_pmu_read("", "intel_pt", &pmu) == 0 &&
	    (cap = ptrec_pmu_cap(&pmu, "max_nonturbo_ratio")) != NULL) {
		char *end;
		unsigned long v = strtoul(cap->text, &end, 10);
		if (end != cap->text && *end == '\0' && v > 0 && v < 256)
			ptrec_crash.nom_freq = (uint32_t)v;
	}
}

/* 1 if another copy of libptrec in this process is already recording: libptrec.so preloaded
 * by `ptrec run` into a program that has libptrec linked in statically. */
static int other_copy_recording(void)
{
	int (*status)(struct ptrec_status *);
	struct ptrec_status st = {.struct_size = sizeof(st)};

	*(void **)&status = dlsym(RTLD_DEFAULT, "ptrec_status");
	return status && status != ptrec_status && status(&st) == 0 && st.initialized;
}

/* Fills ptrec_rec.not_recording when the thread that called ptrec_init records no branch
 * history although the configuration asked for some (issue 27: never silently nothing): what
 * was refused and why, then the fix.  attach_why is the calling thread's ring failure. */
static void not_recording_note(const char *attach_why)
{
	char *t = ptrec_rec.not_recording;
	const size_t cap = sizeof(ptrec_rec.not_recording);
	size_t n = 0;

	t[0] = '\0';
	if (ptrec_crash.cfg.backend == PTREC_BACKEND_NONE)
		return;
	if (ptrec_rec.ops) {
		if (!attach_why[0])
			return;
		snprintf(t, cap, "no branch history will be recorded: the %s backend opened no ring "
		         "for this thread (%s); `ptrec info` shows the limits",
		         ptrec_backend_name(ptrec_crash.backend), attach_why);
		return;
	}
	n = (size_t)snprintf(t, cap, "no branch history will be recorded: no backend works here (");
	for (int b = PTREC_BACKEND_INTEL_PT; b < PTREC_BACKEND_COUNT_ && n < cap; b++)
		if (ptrec_crash.reason[b][0])
			n += (size_t)snprintf(t + n, cap - n, "%s%s: %s", t[n - 1] == '(' ? "" : "; ",
			                      ptrec_backend_name((enum ptrec_backend)b),
			                      ptrec_crash.reason[b]);
	/* the fix: a rebuild when the program is not instrumented, else the refusal says it */
	if (n < cap)
		snprintf(t + n, cap - n, "); %s; PTREC_BACKEND=none says you meant it and silences "
		         "this line",
		         strncmp(ptrec_crash.reason[PTREC_BACKEND_INSTRUMENTED], "no instrumented code",
		                 20)
		         ? "`ptrec info` says what this machine allows"
		         : "to record without PT, rebuild the program with `ptrec cflags` on the "
		           "compile line and `pkg-config --libs libptrec` on the link line (`ptrec "
		           "check FILE` tells whether a build records)");
}

/* Says not_recording once, on stderr and to the system log, unless preload.c asked for
 * quiet. */
static void not_recording_say(void)
{
	if (!ptrec_rec.not_recording[0] || ptrec_rec.quiet_init)
		return;
	ptrec_stderr("ptrec: ");
	ptrec_stderr(ptrec_rec.not_recording);
	ptrec_stderr("\n");
	ptrec_syslog_warning(ptrec_rec.not_recording);
}

PTREC_API int ptrec_init(const struct ptrec_config *cfg)
{
	char attach_why[PTREC_REASON_MAX] = "";
	struct ptrec_config defaults;
	const struct ptrec_backend_ops *cands[3];
	const struct ptrec_backend_ops *ops = NULL;
	int r;

	if (!cfg) {
		ptrec_config_init(&defaults);
		cfg = &defaults;
	}
	if (!config_valid(cfg))
		return -PTREC_EINVAL;
	if (other_copy_recording()) {
		ptrec_stderr("ptrec: another copy of libptrec in this process is already recording "
		             "(LD_PRELOAD); this ptrec_init does nothing\n");
		return -PTREC_ESTATE;
	}
	pthread_mutex_lock(&ptrec_rec.lock);
	if (atomic_load(&ptrec_rec.initialized)) {
		pthread_mutex_unlock(&ptrec_rec.lock);
		return -PTREC_ESTATE;
	}
	ptrec_crash.cfg = *cfg;
	snprintf(ptrec_crash.dump_dir, sizeof(ptrec_crash.dump_dir), "%s",
	         cfg->dump_dir ? cfg->dump_dir : "");
	snprintf(ptrec_crash.filter, sizeof(ptrec_crash.filter), "%s", cfg->filter ? cfg->filter : "");
	ptrec_crash.cfg.dump_dir = ptrec_crash.dump_dir[0] ? ptrec_crash.dump_dir : NULL;
	ptrec_crash.cfg.filter = ptrec_crash.filter[0] ? ptrec_crash.filter : NULL;

	cands[0] = &ptrec_backend_intel_pt;
	cands[1] = &ptrec_backend_intel_bts;
	cands[2] = &ptrec_backend_instrumented;
	r = ptrec_backend_choose(cands, 3, &ptrec_crash.cfg, ptrec_crash.reason, &ops);
	if (r < 0) {
		pthread_mutex_unlock(&ptrec_rec.lock);
		return r;
	}
	ptrec_crash.backend = (enum ptrec_backend)r;
	ptrec_rec.ops = ops;

	if (ptrec_registry_init() != 0) {
		pthread_mutex_unlock(&ptrec_rec.lock);
		return -PTREC_ENOMEM;
	}
	tool_path_init();
	ptrec_preload_env_prepare();
	ptrec_crash_prepare(ptrec_env("STATE_DIRECTORY"), ptrec_env("LOGS_DIRECTORY"),
	                    ptrec_env("XDG_STATE_HOME"), ptrec_env("HOME"));
	ptrec_syslog_prepare(ptrec_env("PTREC_SYSLOG"));
	ptrec_report_prepare();
	ptrec_crash_stack_prepare();
	ptrec_cpu_fms(&ptrec_crash.cpu_family, &ptrec_crash.cpu_model, &ptrec_crash.cpu_stepping);
	clock_params_init(ptrec_crash.backend);
	atomic_store(&ptrec_rec.memory_used, 0);
	atomic_store(&ptrec_rec.threads_attached, 0);
	atomic_store(&ptrec_rec.threads_untraced, 0);
	atomic_store(&ptrec_rec.snapshots_written, 0);
	atomic_store(&ptrec_rec.snapshots_requested, 0);
	atomic_store(&ptrec_rec.snapshots_dropped, 0);
	atomic_store(&ptrec_rec.snapshots_accepted, 0);
	ptrec_rec.last_snapshot.tv_sec = 0;
	ptrec_rec.last_snapshot.tv_nsec = 0;
	ptrec_crash.threads_untraced = &ptrec_rec.threads_untraced;
	atomic_store(&ptrec_rec.initialized, 1);
	atomic_store(&ptrec_crash.armed, 1);
	ptrec_thread_attach_why(attach_why, sizeof(attach_why));
	not_recording_note(attach_why);
	if (!(ptrec_crash.cfg.flags & PTREC_F_NO_SIGNALS)) {
		ptrec_interpose_resolve();
		if (ptrec_signals_install() == 0)
			ptrec_interpose_adopt();
	}
	not_recording_say();
	pthread_mutex_unlock(&ptrec_rec.lock);
	return 0;
}

PTREC_API int ptrec_shutdown(void)
{
	pthread_mutex_lock(&ptrec_rec.lock);
	if (!atomic_load(&ptrec_rec.initialized)) {
		pthread_mutex_unlock(&ptrec_rec.lock);
		return -PTREC_ESTATE;
	}
	ptrec_snap_writer_stop();
	if (!(ptrec_crash.cfg.flags & PTREC_F_NO_SIGNALS)) {
		ptrec_interpose_release();
		ptrec_signals_restore();
	}
	ptrec_registry_shutdown();
	atomic_store(&ptrec_crash.armed, 0);
	atomic_store(&ptrec_rec.initialized, 0);
	ptrec_rec.ops = NULL;
	ptrec_crash.backend = PTREC_BACKEND_NONE;
	pthread_mutex_unlock(&ptrec_rec.lock);
	return 0;
}

PTREC_API int ptrec_status(struct ptrec_status *st)
{
	if (!st || st->struct_size != sizeof(*st))
		return -PTREC_EINVAL;
	memset(st, 0, sizeof(*st));
	st->struct_size = sizeof(*st);
	pthread_mutex_lock(&ptrec_rec.lock);
	st->initialized = atomic_load(&ptrec_rec.initialized);
	st->backend = st->initialized ? ptrec_crash.backend : PTREC_BACKEND_NONE;
	st->ring_size = st->initialized ? ptrec_crash.cfg.ring_size : 0;
	st->memory_used = atomic_load(&ptrec_rec.memory_used);
	st->threads_attached = atomic_load(&ptrec_rec.threads_attached);
	st->threads_untraced = atomic_load(&ptrec_rec.threads_untraced);
	st->snapshots_written = atomic_load(&ptrec_rec.snapshots_written);
	memcpy(st->reason, ptrec_crash.reason, sizeof(st->reason));
	for (unsigned i = 0; i < PTREC_MAX_THREADS; i++) {
		struct ptrec_thread *t = ptrec_slot_at(i);
		if (ptrec_slot_pin(t)) {
			st->threads_via_helper += t->ops && t->ring.via_helper;
			ptrec_slot_unpin(t);
		}
	}
	snprintf(st->settings_problems, sizeof(st->settings_problems), "%s",
	         ptrec_settings_problems());
	st->threads_no_altstack = ptrec_registry_no_altstack(st->no_altstack_tids,
	                                                     sizeof(st->no_altstack_tids));
	st->snapshots_requested = atomic_load(&ptrec_rec.snapshots_requested);
	st->snapshots_dropped = atomic_load(&ptrec_rec.snapshots_dropped);
	ptrec_snap_last_report(st->last_report, sizeof(st->last_report));
	if (st->initialized)
		memcpy(st->not_recording, ptrec_rec.not_recording, sizeof(st->not_recording));
	snprintf(st->patched_entries, sizeof(st->patched_entries), "%s", ptrec_patch_note);
	pthread_mutex_unlock(&ptrec_rec.lock);
	return 0;
}
