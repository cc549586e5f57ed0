/* backend_soft.h — the instrumented backend's extras beyond backend.h: record appends used by
 * markers and tests, the TSC calibration, and the view of a software ring.  The hooks' hot
 * path is in soft_write.h. */
#ifndef PTREC_BACKEND_SOFT_H
#define PTREC_BACKEND_SOFT_H

#include <stddef.h>
#include <stdint.h>

#include "capture/backend.h"


/* Returns 1 once an instrumentation hook ran in a thread without a ring (the program carries
 * instrumentation), else 0. */
int ptrec_soft_hooks_ran(void);

/* Appends one BRANCH record (from, to, kind = enum ptrec_branch_kind) to the calling thread's
 * soft ring; nothing if it has none or it is frozen.  ASYNC-SIGNAL-SAFE, lock-free. */
void ptrec_soft_append(uint64_t from, uint64_t to, unsigned kind);

/* Appends a MARK record (value, and the TSC now) to the calling thread's soft ring, decoded
 * as a PTREC_BR_MARKER event in its place in the history; nothing if the thread has no soft
 * ring or it is frozen.  ASYNC-SIGNAL-SAFE, lock-free, a few nanoseconds. */
void ptrec_soft_mark(uint64_t value);

/* Sets ring->time_zero/time_shift/time_mult (the perf user page's TSC conversion:
 * ns = time_zero + tsc * mult >> shift, computed without overflow) from two (TSC,
 * CLOCK_MONOTONIC ns) readings, or zeroes them (unknown) when the readings are less than a
 * million ticks apart or out of order.  Pure and ASYNC-SIGNAL-SAFE. */
void ptrec_soft_time_convert(uint64_t tsc0, uint64_t ns0, uint64_t tsc1, uint64_t ns1,
                             struct ptrec_ring *ring);

/* Computes the oldest-first view of a software ring of 16-byte records: like
 * ptrec_ring_view_make but the oldest piece starts on a record boundary.  Pure and
 * ASYNC-SIGNAL-SAFE. */
void ptrec_soft_view_make(const uint8_t *data, size_t size, uint64_t head,
                          struct ptrec_ring_view *view);

#endif
