/* thread_slots.h — the table of attached threads' rings that the crash path walks without
 * locks, and the pin protocol that keeps a ring alive while a reader uses it.
 *
 * The runtime (runtime/thread_registry.c) claims and releases slots as threads attach and
 * exit; the crash path (crash/) and snapshots only pin, read and freeze them.  A reader pins a
 * slot before it touches the ring, and a detaching thread waits for the pins to drop before it
 * frees anything (or, during a crash, never frees).  Functions marked ASYNC-SIGNAL-SAFE may be
 * called from the crash path. */
#ifndef PTREC_THREAD_SLOTS_H
#define PTREC_THREAD_SLOTS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "capture/backend.h"

#define PTREC_MAX_THREADS 1024             /* slots; more threads run untraced */

/* States of a slot. */
enum ptrec_slot_state {
	PTREC_SLOT_FREE = 0,    /* unused */
	PTREC_SLOT_OPENING,     /* claimed by a thread that is attaching */
	PTREC_SLOT_ACTIVE,      /* attached: the crash path and snapshots may read it */
	PTREC_SLOT_CLOSING,     /* detaching: readers skip it */
	PTREC_SLOT_EXITED,      /* its thread exited while a crash signal held the ring pinned:
	                           the ring stays mapped; a later attach reclaims the slot once
	                           nothing pins it */
};

/* One attached thread.  Slots live in a static array so the crash path can walk them without
 * locks. */
struct ptrec_thread {
	_Atomic int state;                        /* enum ptrec_slot_state */
	_Atomic int pins;                         /* readers currently using the ring */
	pid_t tid;                                /* kernel thread id */
	unsigned flags;                           /* PTREC_THREAD_UNTRACED when no ring */
	const struct ptrec_backend_ops *ops;      /* backend that opened the ring, or NULL */
	struct ptrec_ring ring;                   /* the ring (valid when ops != NULL) */
	size_t charged;                           /* bytes charged to the memory budget */
	void *altstack;                           /* our sigaltstack mapping, or NULL */
	size_t altstack_len;                      /* bytes of that mapping (with guard page) */
	struct ptrec_ring_view snap;              /* snapshot: copied bytes (valid while
	                                             snap_buf != NULL) */
	uint8_t *snap_buf;                        /* snapshot copy buffer, or NULL */
	size_t snap_len;                          /* bytes mapped at snap_buf */
	char name[16];                            /* a snapshot copy's thread name, "" = the
	                                             dump writer reads it from /proc */
};

/* Returns slot i (0 <= i < PTREC_MAX_THREADS), or NULL past the end.  ASYNC-SIGNAL-SAFE. */
struct ptrec_thread *ptrec_slot_at(unsigned i);

/* Returns the calling thread's slot, or NULL if it is not attached.  ASYNC-SIGNAL-SAFE
 * (initial-exec TLS). */
struct ptrec_thread *ptrec_slot_self(void);

/* Records t (or NULL) as the calling thread's slot. */
void ptrec_slot_set_self(struct ptrec_thread *t);

/* Pins slot t if it is ACTIVE.  Returns 1 (pinned: call ptrec_slot_unpin when done, or never
 * during a crash) or 0.  ASYNC-SIGNAL-SAFE. */
int ptrec_slot_pin(struct ptrec_thread *t);
void ptrec_slot_unpin(struct ptrec_thread *t);

/* The crash path's pin: like ptrec_slot_pin, and also an EXITED slot, whose ring (of a thread
 * that ended while a crash signal was being handled, perhaps joined by the application's
 * handler) belongs in the dump too.  ASYNC-SIGNAL-SAFE. */
int ptrec_slot_pin_crash(struct ptrec_thread *t);

/* Set once a crash dump starts: detaching threads stop freeing rings.  ASYNC-SIGNAL-SAFE. */
extern _Atomic int ptrec_crash_in_progress;

/* Nonzero while a crash signal is being handled with every ring pinned (the application's
 * own handler runs; it may be joining the threads it owns, as Redis's does): an exiting
 * thread must not wait for the pins to drop, it leaves its slot EXITED.  ASYNC-SIGNAL-SAFE. */
extern _Atomic int ptrec_crash_holding;

/* Returns the kernel thread id of the caller.  ASYNC-SIGNAL-SAFE. */
pid_t ptrec_gettid(void);

#endif
