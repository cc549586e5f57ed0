/* rseq_pause.h — the crashing thread's rseq area taken from the kernel while the
 * application's crash handler runs (why: rseq_pause.c). */
#ifndef PTREC_CRASH_RSEQ_PAUSE_H
#define PTREC_CRASH_RSEQ_PAUSE_H

/* Unregisters the calling thread's rseq area, the one glibc registered, if any and not paused
 * already.  Async-signal-safe.  Returns 1 if it did (ptrec_rseq_resume gives it back), 0 if
 * there was nothing to pause or the kernel refused. */
int ptrec_rseq_pause(void);

/* Registers the calling thread's area again after ptrec_rseq_pause, unless its rseq_cs word
 * changed meanwhile (the kernel would kill the thread at its next preemption on a bad one:
 * the thread then goes on without rseq, as glibc allows).  Async-signal-safe; does nothing
 * when the thread is not paused. */
void ptrec_rseq_resume(void);

#endif
