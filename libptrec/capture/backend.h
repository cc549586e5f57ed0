/* backend.h — the capture backend interface: one per source of branch history (intel_pt,
 * intel_bts, instrumented).  The recorder core (recorder.c, threads, crash path) talks to
 * backends only through this table.
 *
 * Functions marked ASYNC-SIGNAL-SAFE are called from the crash path: no malloc, stdio, locks
 * or lazy TLS in them; they may run on another thread than the ring's owner. */
#ifndef PTREC_BACKEND_H
#define PTREC_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "ptrec.h"
#include "core/fd_id.h"
#include "dump/dump_format.h"

/* One thread's ring as its backend keeps it.  Owned by the recorder's per-thread state. */
struct ptrec_ring {
	int fd;                   /* perf event fd, or -1 */
	struct ptrec_fd_id fd_id; /* what fd was when opened: never ioctl or close it once the
	                             application closed it and reused the number */
	void *mmap_base;          /* perf: user page + data pages mapping, or NULL */
	size_t mmap_size;         /* bytes of mmap_base */
	uint8_t *data;            /* ring bytes (AUX area or software ring) */
	size_t size;              /* ring bytes, a power of two */
	uint64_t head;            /* software rings: bytes ever written (the writer's cursor);
	                             perf rings: aux_head read at freeze time */
	uint64_t soft_mask;       /* instrumented: size - 1 while the hooks may write, 0 while
	                             frozen or closed (the hooks' only check) */
	uint64_t soft_format;     /* instrumented: PTREC_SOFT_FMT_* of the records (core/branch.h) */
	int soft_seen;            /* instrumented: 1 once a hook found this ring not recording */
	volatile int frozen;      /* 1 once frozen; software writers stop appending */
	uint64_t config;          /* perf_event_attr.config as opened (PT/BTS), else 0 */
	uint64_t config1;         /* perf_event_attr.config1 */
	uint64_t config2;         /* perf_event_attr.config2 */
	uint32_t mtc_period;      /* PT: MTC period exponent chosen */
	uint32_t time_shift;      /* perf user page: TSC conversion, 0 if unknown */
	uint32_t time_mult;
	uint64_t time_zero;
	int via_helper;           /* 1 if ptrec-helper opened the perf event (the kernel refused
	                             this process), 0 if the process opened it itself */
	void *backend_private;    /* anything else a backend needs */
};

/* A frozen ring's bytes, oldest first, in at most two pieces (the ring wrapped at head). */
struct ptrec_ring_view {
	const uint8_t *part[2];   /* pieces, oldest first; part[1] may be NULL */
	size_t len[2];            /* their lengths; len[0] + len[1] <= ring size */
	uint64_t head;            /* total bytes written */
	int wrapped;              /* 1 if older bytes were overwritten */
};

/* Computes the view of a ring of `size` bytes (a power of two) at `data` whose writer has
 * written `head` bytes in total.  Pure and ASYNC-SIGNAL-SAFE. */
void ptrec_ring_view_make(const uint8_t *data, size_t size, uint64_t head,
                          struct ptrec_ring_view *view);

struct ptrec_backend_ops {
	enum ptrec_backend id;   /* which backend this is */
	/* Can this backend work in this process?  Returns 0, or a negative PTREC_E* code with a
	 * one-line cause (errno mapped to its meaning: paranoid level, PMU absent, ...) written to
	 * reason.  Called once at init. */
	int (*probe)(const struct ptrec_config *cfg, char *reason, size_t reason_len);
	/* Opens a ring of `size` bytes for the calling thread.  Returns 0, -PTREC_ENOMEM (retry
	 * smaller), or another negative code with reason filled. */
	int (*open)(struct ptrec_ring *ring, size_t size, const struct ptrec_config *cfg,
	            char *reason, size_t reason_len);
	/* Releases everything open() took.  The ring must not be used after. */
	void (*close)(struct ptrec_ring *ring);
	/* ASYNC-SIGNAL-SAFE.  Stops the ring recording and publishes its head. */
	int (*freeze)(struct ptrec_ring *ring);
	/* Resumes recording after a snapshot. */
	int (*thaw)(struct ptrec_ring *ring);
	/* ASYNC-SIGNAL-SAFE.  Describes a frozen ring's bytes. */
	int (*view)(const struct ptrec_ring *ring, struct ptrec_ring_view *view);
};

extern const struct ptrec_backend_ops ptrec_backend_intel_pt;     /* backend_pt.c */
/* 1 once an intel_pt ring was opened with PTWRITE packets on (the CPU enumerates PTWRITE and
 * the kernel has format/ptw): markers are PTWRITEs then (backend_pt.c). */
extern volatile int ptrec_pt_ptwrite;
extern const struct ptrec_backend_ops ptrec_backend_intel_bts;    /* backend_bts.c */
extern const struct ptrec_backend_ops ptrec_backend_instrumented; /* backend_soft.c */

#endif
