/* assert.c — PTREC_ASSERT failures: the message is formatted into a static buffer at failure
 * time, then the rings are frozen and the dump and report written (as for a crash, one per
 * process), then abort().  The SIGABRT that follows finds the dump done and only chains to the
 * default action, so the process dies with SIGABRT as with assert().
 *
 * Not a signal handler, but it runs in a process that is known to be broken: it does not use
 * malloc or stdio (vsnprintf formats into the static buffer), and the dump path it calls is the
 * async-signal-safe crash path. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include "core/safe_str.h"
#include "runtime/recorder.h"

static char assert_text[512];

PTREC_API void ptrec_assert_fail(const char *expr, const char *file, int line, const char *func,
                                 const char *fmt, ...)
{
	struct ptrec_sbuf b;
	ucontext_t uc;

	ptrec_sbuf_init(&b, assert_text, sizeof(assert_text));
	ptrec_sbuf_str(&b, expr ? expr : "?");
	ptrec_sbuf_str(&b, " at ");
	ptrec_sbuf_str(&b, file ? file : "?");
	ptrec_sbuf_char(&b, ':');
	ptrec_sbuf_dec(&b, line);
	ptrec_sbuf_str(&b, " in ");
	ptrec_sbuf_str(&b, func ? func : "?");
	ptrec_sbuf_str(&b, "()");
	if (fmt && b.len + 3 < sizeof(assert_text)) {
		va_list ap;
		ptrec_sbuf_str(&b, ": ");
		va_start(ap, fmt);
		vsnprintf(assert_text + b.len, sizeof(assert_text) - b.len, fmt, ap);
		va_end(ap);
	}

	int expect = 0;
	if (atomic_load(&ptrec_rec.initialized) &&
	    atomic_compare_exchange_strong(&ptrec_crash_owner, &expect, (int)ptrec_gettid())) {
		/* The one stderr line names the assertion, the thread and the files. */
		getcontext(&uc);
		ptrec_crash_dump_owned(SIGABRT, NULL, &uc, PTREC_EVENT_ASSERT, assert_text);
	} else {
		ptrec_stderr("ptrec: assertion failed: ");
		ptrec_stderr(assert_text);
		ptrec_stderr("\n");
	}
	abort();
}
