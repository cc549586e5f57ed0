/* backend_soft.h — the instrumented backend's extras beyond backend.h: the record append used
 * by the hooks and tests, and the view of a software ring. */
#ifndef PTREC_BACKEND_SOFT_H
#define PTREC_BACKEND_SOFT_H

#include <stddef.h>
#include <stdint.h>

#include "capture/backend.h"


/* 1 once an instrumentation hook ran in this process (the program carries the hooks). */
extern volatile int ptrec_soft_hooks_seen;

/* Appends one record to the calling thread's soft ring (used by the hooks and by tests).
 * ASYNC-SIGNAL-SAFE, lock-free. */
void ptrec_soft_append(uint64_t from, uint64_t to, unsigned kind);

/* Computes the oldest-first view of a BTS-format software ring: like ptrec_ring_view_make but
 * the oldest piece starts on a 24-byte record boundary (the partly overwritten oldest record
 * is dropped).  Pure and ASYNC-SIGNAL-SAFE. */
void ptrec_soft_view_make(const uint8_t *data, size_t size, uint64_t head,
                          struct ptrec_ring_view *view);

#endif
