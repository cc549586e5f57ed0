/* backend_pt.c — the intel_pt backend: a per-thread Intel PT ring through the kernel's perf
 * intel_pt driver, AUX area in overwrite mode (the kernel's circular ToPA).
 * freeze() and view() are ASYNC-SIGNAL-SAFE (perf_aux.c); the rest runs at init and at
 * thread attach/detach.  cfg->filter (PTREC_FILTER) becomes a kernel address filter through
 * ptrec_pt_filter_build() and is checked against caps/num_address_ranges. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "core/arch.h"
#include "capture/backend.h"
#include "capture/helper_client.h"
#include "capture/perf_aux.h"
#include "capture/perf_config.h"
#include "ptrec.h"
#include "core/settings.h"

volatile int ptrec_pt_ptwrite;

/* Builds the config for a ring of `size` bytes.  Returns 0 or a negative code with reason. */
static int pt_config(size_t size, struct ptrec_pt_config *pc, char *reason, size_t len)
{
	const struct ptrec_perf_facts *f = ptrec_perf_facts();
	struct ptrec_pt_request req;
	char err[256];

	ptrec_pt_request_default(&req, size);
	int rc = ptrec_pt_config_build(&f->pt, &req, pc, err, sizeof(err));
	if (rc)
		snprintf(reason, len, "cannot build the intel_pt config: %s", err);
	return rc;
}

static int pt_open(struct ptrec_ring *ring, size_t size, const struct ptrec_config *cfg,
                   char *reason, size_t len)
{
	const struct ptrec_perf_facts *f = ptrec_perf_facts();
	struct ptrec_pt_config pc;
	int rc = pt_config(size, &pc, reason, len);

	if (rc) {
		memset(ring, 0, sizeof(*ring));
		ring->fd = -1;
		return rc;
	}
	char filter[4096];
	struct ptrec_perf_aux_spec spec = {
		.pmu_name = "intel_pt",
		.type = f->pt.type,
		.config = pc.config,
		.config1 = pc.config1,
		.config2 = pc.config2,
		.sys = &f->sys,
	};

	if (cfg && cfg->filter && *cfg->filter) {
		char err[256];
		const struct ptrec_pmu_cap *nr = ptrec_pmu_cap(&f->pt, "num_address_ranges");
		int n = ptrec_pt_filter_build(cfg->filter, filter, sizeof(filter), err, sizeof(err));

		if (n < 0) {
			snprintf(reason, len, "PTREC_FILTER: %s", err);
			memset(ring, 0, sizeof(*ring));
			ring->fd = -1;
			return n;
		}
		if (nr && nr->valid && (uint64_t)n > nr->value) {
			snprintf(reason, len, "PTREC_FILTER needs %d address ranges, the CPU has %llu "
			         "(caps/num_address_ranges)", n, (unsigned long long)nr->value);
			memset(ring, 0, sizeof(*ring));
			ring->fd = -1;
			return -PTREC_EINVAL;
		}
		spec.filter = filter;
	}
	rc = ptrec_perf_aux_open(ring, size, &spec, reason, len);
	if (rc == 0 && !ring->via_helper && (pc.flags & PTREC_PT_MTC))
		ring->mtc_period = pc.mtc_period;
	/* ptrec_mark may execute PTWRITE once the CPU enumerates it (leaf 14H EBX[4]) and the
	 * kernel let us turn it on (format/ptw, caps/ptwrite). */
	if (rc == 0 && (pc.flags & PTREC_PT_PTW) && f->cpu.pt_leaf_valid && f->cpu.ptwrite)
		ptrec_pt_ptwrite = 1;
	return rc;
}

static int pt_probe(const struct ptrec_config *cfg, char *reason, size_t len)
{
#if !defined(__x86_64__)
	/* (the sysfs read under qemu-user is the x86-64 host's: never asked on aarch64) */
	(void)cfg;
	snprintf(reason, len, "no intel_pt: Intel PT is an x86-64 feature; this is an "
	         PTREC_ARCH_NAME " build of libptrec");
	return -PTREC_ENOSUPP;
#else
	const struct ptrec_perf_facts *f = ptrec_perf_facts();
	size_t size = cfg && ptrec_ring_size_valid(cfg->ring_size) ? cfg->ring_size
	                                                           : PTREC_RING_DEFAULT;
	struct ptrec_pt_config pc;

	int rc = ptrec_pt_verdict(&f->cpu, &f->pt, &f->sys, reason, len);
	if (rc == -PTREC_EPERM)
		rc = ptrec_helper_instead(rc, reason, len);
	if (rc)
		return rc;
	rc = pt_config(size, &pc, reason, len);
	if (rc)
		return rc;
	return ptrec_perf_aux_probe(pt_open, size, cfg, reason, len);
#endif
}

static int pt_view(const struct ptrec_ring *ring, struct ptrec_ring_view *view)
{
	return ptrec_perf_aux_view(ring, view);
}

const struct ptrec_backend_ops ptrec_backend_intel_pt = {
	.id = PTREC_BACKEND_INTEL_PT,
	.probe = pt_probe,
	.open = pt_open,
	.close = ptrec_perf_aux_close,
	.freeze = ptrec_perf_aux_freeze,
	.thaw = ptrec_perf_aux_thaw,
	.view = pt_view,
};
