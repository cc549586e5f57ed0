/* thread_slots.c — the static table of attached threads' rings and the pin protocol
 * (thread_slots.h).  ASYNC-SIGNAL-SAFE throughout: no malloc, stdio, locks or lazy TLS (the
 * self pointer is initial-exec TLS). */
#include "config.h"

#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "capture/thread_slots.h"

static struct ptrec_thread slots[PTREC_MAX_THREADS];
static __thread struct ptrec_thread *self_slot __attribute__((tls_model("initial-exec")));

_Atomic int ptrec_crash_in_progress;
_Atomic int ptrec_crash_holding;

pid_t ptrec_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

struct ptrec_thread *ptrec_slot_at(unsigned i)
{
	return i < PTREC_MAX_THREADS ? &slots[i] : NULL;
}

struct ptrec_thread *ptrec_slot_self(void)
{
	return self_slot;
}

void ptrec_slot_set_self(struct ptrec_thread *t)
{
	self_slot = t;
}

/* Pins t if its state is ACTIVE, or EXITED when exited is set.  The pin is taken before the
 * state is read: a thread releasing or reclaiming the slot changes the state first and reads
 * the pins afterwards, so one of the two sees the other. */
static int pin_if(struct ptrec_thread *t, int exited)
{
	atomic_fetch_add(&t->pins, 1);
	int state = atomic_load(&t->state);
	if (state == PTREC_SLOT_ACTIVE || (exited && state == PTREC_SLOT_EXITED))
		return 1;
	atomic_fetch_sub(&t->pins, 1);
	return 0;
}

int ptrec_slot_pin(struct ptrec_thread *t)
{
	return pin_if(t, 0);
}

int ptrec_slot_pin_crash(struct ptrec_thread *t)
{
	return pin_if(t, 1);
}

void ptrec_slot_unpin(struct ptrec_thread *t)
{
	atomic_fetch_sub(&t->pins, 1);
}
