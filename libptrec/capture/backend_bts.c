/* backend_bts.c — the intel_bts backend: Branch Trace Store through the kernel's perf
 * intel_bts driver, AUX area in overwrite mode.
 * freeze() and view() are ASYNC-SIGNAL-SAFE (perf_aux.c); the rest runs at init and at
 * thread attach/detach.
 *
 * Ring contents (SDM Vol. 3 "BTS buffer", 64-bit DS format): 24-byte records
 * {u64 from, u64 to, u64 flags (bit 4 = predicted)} written from the start of the ring.  In
 * overwrite mode the kernel gives the hardware one contiguous buffer whose BTS absolute
 * maximum is the largest multiple of 24 that fits, so records wrap back to offset 0 and the
 * last size % 24 bytes are never written; aux_head is the write offset, a multiple of 24.
 * view() leaves those pad bytes out, so the view is a whole number of records, oldest first.
 * The kernel keeps no address filter for BTS: cfg->filter is not applied. */
#include "config.h"

#include <stdio.h>

#include <string.h>

#include "core/arch.h"
#include "capture/backend.h"
#include "capture/helper_client.h"
#include "capture/perf_aux.h"
#include "ptrec.h"
#include "core/settings.h"

static int bts_open(struct ptrec_ring *ring, size_t size, const struct ptrec_config *cfg,
                    char *reason, size_t len)
{
	const struct ptrec_perf_facts *f = ptrec_perf_facts();
	struct ptrec_perf_aux_spec spec = {
		.pmu_name = "intel_bts",
		.type = f->bts.type,
		.sys = &f->sys,
	};

	(void)cfg;
	return ptrec_perf_aux_open(ring, size, &spec, reason, len);
}

static int bts_probe(const struct ptrec_config *cfg, char *reason, size_t len)
{
#if !defined(__x86_64__)
	/* (the sysfs read under qemu-user is the x86-64 host's: never asked on aarch64) */
	(void)cfg;
	snprintf(reason, len, "no intel_bts: BTS is an x86-64 feature; this is an "
	         PTREC_ARCH_NAME " build of libptrec");
	return -PTREC_ENOSUPP;
#else
	const struct ptrec_perf_facts *f = ptrec_perf_facts();
	size_t size = cfg && ptrec_ring_size_valid(cfg->ring_size) ? cfg->ring_size
	                                                           : PTREC_RING_DEFAULT;

	int rc = ptrec_bts_verdict(&f->cpu, &f->bts, &f->sys, reason, len);
	if (rc == -PTREC_EPERM)
		rc = ptrec_helper_instead(rc, reason, len);
	if (rc)
		return rc;
	return ptrec_perf_aux_probe(bts_open, size, cfg, reason, len);
#endif
}

#define BTS_RECORD_SIZE 24u

static int bts_view(const struct ptrec_ring *ring, struct ptrec_ring_view *view)
{
	int rc = ptrec_perf_aux_view(ring, view);
	size_t pad = ring->size % BTS_RECORD_SIZE;

	/* Wrapped: part[0] runs from the write offset to the end of the ring, through the
	 * never-written pad; cut it there so part[1] (from offset 0) stays record-aligned. */
	if (rc == 0 && view->wrapped && view->len[0] >= pad)
		view->len[0] -= pad;
	return rc;
}

const struct ptrec_backend_ops ptrec_backend_intel_bts = {
	.id = PTREC_BACKEND_INTEL_BTS,
	.probe = bts_probe,
	.open = bts_open,
	.close = ptrec_perf_aux_close,
	.freeze = ptrec_perf_aux_freeze,
	.thaw = ptrec_perf_aux_thaw,
	.view = bts_view,
};
