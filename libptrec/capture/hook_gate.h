/* hook_gate.h — the switch that stops every instrumentation hook while a crash is handled.
 *
 * Once a crash signal arrives, the application's own handler may rewrite any writable memory
 * (a memory test over every anonymous mapping) and run instrumented code.  The hooks then must
 * neither fault nor record, so before anything else they read this gate, which lives alone in a
 * page of the library's data segment: read PC-relative or through a GOT entry that RELRO
 * makes read-only (no pointer to it sits in memory the application could rewrite), and made
 * read-only itself while stopped (a scan of writable mappings skips it). */
#ifndef PTREC_HOOK_GATE_H
#define PTREC_HOOK_GATE_H

#define PTREC_GATE_PAGE 4096u

/* The gate's page. */
struct ptrec_hook_gate {
	volatile int stopped;                       /* 1: hooks return at once */
	char pad[PTREC_GATE_PAGE - sizeof(int)];    /* the rest of the page, unused */
};

extern struct ptrec_hook_gate __ptrec_hook_gate;

/* Stops the hooks and write-protects the gate.  Idempotent: returns 1 when this call stopped
 * them, 0 when they were stopped already.  ASYNC-SIGNAL-SAFE. */
int ptrec_hooks_stop(void);

/* Makes the gate writable again and lets the hooks record.  ASYNC-SIGNAL-SAFE. */
void ptrec_hooks_resume(void);

/* In a fork child: no other thread is changing the gate (one of the parent's may have been at
 * the fork).  ASYNC-SIGNAL-SAFE. */
void ptrec_hooks_after_fork(void);

#endif
