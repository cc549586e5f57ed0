/* perf_aux.h — one perf event with an AUX ring in overwrite mode, for the calling thread:
 * the machinery the intel_pt and intel_bts backends share.
 *
 * Open: perf_event_open(attr, pid 0 = the calling thread, cpu -1, group -1,
 * PERF_FLAG_FD_CLOEXEC) with disabled, exclude_kernel and exclude_hv set (or the same event
 * from ptrec-helper when the kernel refuses this process: helper_client.h); mmap of the user
 * page + PTREC_PERF_DATA_PAGES data pages; aux_offset/aux_size set in the user page; mmap of
 * the AUX area PROT_READ only (the kernel then runs it in overwrite mode: a circular buffer
 * that keeps the newest bytes); optional address filter; ioctl ENABLE.
 * Freeze: ioctl DISABLE (the kernel stops tracing, flushes and publishes aux_head), then read
 * aux_head — ASYNC-SIGNAL-SAFE, also for another thread's ring. */
#ifndef PTREC_PERF_AUX_H
#define PTREC_PERF_AUX_H

#include <stddef.h>
#include <stdint.h>

#include "capture/backend.h"
#include "platform/pmu_sysfs.h"

/* What the backends judge by: this CPU, both PMUs and the limits of the real system, read
 * once per process (thread-safe) by ptrec_perf_facts(). */
struct ptrec_perf_facts {
	struct ptrec_cpu_info cpu; /* decoded CPUID */
	struct ptrec_pmu pt;       /* /sys/bus/event_source/devices/intel_pt */
	struct ptrec_pmu bts;      /* /sys/bus/event_source/devices/intel_bts */
	struct ptrec_sys sys;      /* perf_event_paranoid, mlock budget inputs, capabilities */
};

/* The facts, read on first use.  Never NULL.  Not async-signal-safe on first call. */
const struct ptrec_perf_facts *ptrec_perf_facts(void);

/* What to open. */
struct ptrec_perf_aux_spec {
	const char *pmu_name;   /* "intel_pt" / "intel_bts", for messages */
	int type;               /* perf_event_attr.type from sysfs */
	uint64_t config;        /* perf_event_attr.config, config1, config2 */
	uint64_t config1;
	uint64_t config2;
	const char *filter;     /* PERF_EVENT_IOC_SET_FILTER string, or NULL */
	const struct ptrec_sys *sys; /* limits, to name the cause of a refusal (may be NULL) */
};

/* A perf event as opened for a ring: by this process, or by ptrec-helper when the kernel
 * refused this process (EACCES/EPERM) and a helper answers at ptrec_helper_socket(). */
struct ptrec_perf_event {
	int fd;               /* the event fd (close-on-exec, disabled) */
	int via_helper;       /* 1 if ptrec-helper opened it */
	uint64_t config;      /* perf_event_attr.config / config1 / config2 actually used (the */
	uint64_t config1;     /* helper builds its own for intel_pt) */
	uint64_t config2;
	uint32_t mtc_period;  /* intel_pt MTC period encoding the helper used (via_helper only) */
};

/* Opens spec's event for the calling thread (disabled, exclude_kernel, exclude_hv, cpu -1),
 * falling back on ptrec-helper (asked for a ring of `size` bytes) when the kernel says
 * EACCES/EPERM.  Returns 0 with ev filled, or a negative code as ptrec_perf_aux_open, with
 * the kernel's cause and the helper's answer in reason. */
int ptrec_perf_event_open(const struct ptrec_perf_aux_spec *spec, size_t size,
                          struct ptrec_perf_event *ev, char *reason, size_t len);

/* Opens and enables a ring of `size` bytes (a power-of-two multiple of 4 KiB) for the
 * calling thread and fills ring (fd, mappings, data/size, config words, perf time fields).
 * Returns 0, or on failure releases everything and returns -PTREC_ENOMEM (the mlock budget
 * or memory refused: retry smaller), -PTREC_ENOSUPP (PMU absent, config or size refused),
 * -PTREC_EPERM (perf_event_paranoid / capabilities), -PTREC_EBUSY (another exclusive user of
 * the hardware), -PTREC_EINVAL (bad size or filter), with errno's meaning in reason. */
int ptrec_perf_aux_open(struct ptrec_ring *ring, size_t size,
                        const struct ptrec_perf_aux_spec *spec, char *reason, size_t len);

/* Releases what ptrec_perf_aux_open took; the ring is reset (fd -1, pointers NULL). */
void ptrec_perf_aux_close(struct ptrec_ring *ring);

/* A backend's open(), as in struct ptrec_backend_ops. */
typedef int (*ptrec_perf_aux_open_fn)(struct ptrec_ring *ring, size_t size,
                                      const struct ptrec_config *cfg, char *reason, size_t len);

/* The last word of a probe is the kernel's: opens a ring of `size` bytes with open_ring as the
 * recorder will (once more at PTREC_RING_MIN if the first attempt says -PTREC_ENOMEM), then
 * closes it.  Returns 0 with reason cleared, or open_ring's error with its reason. */
int ptrec_perf_aux_probe(ptrec_perf_aux_open_fn open_ring, size_t size,
                         const struct ptrec_config *cfg, char *reason, size_t len);

/* ASYNC-SIGNAL-SAFE.  Disables the event and stores aux_head in ring->head.  Returns 0, or
 * -PTREC_ESTATE if the ring is not open, -PTREC_EIO if the ioctl failed (head is still read). */
int ptrec_perf_aux_freeze(struct ptrec_ring *ring);

/* Re-enables a frozen ring.  Returns 0, -PTREC_ESTATE, or -PTREC_EIO. */
int ptrec_perf_aux_thaw(struct ptrec_ring *ring);

/* ASYNC-SIGNAL-SAFE.  The frozen ring's bytes (ptrec_ring_view_make over the AUX area and
 * aux_head).  Returns 0, or -PTREC_ESTATE if the ring is not open or not frozen. */
int ptrec_perf_aux_view(const struct ptrec_ring *ring, struct ptrec_ring_view *view);

#endif
