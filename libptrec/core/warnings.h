/* warnings.h — a growing list of one-line warnings (bad ELF, truncated dump, build-id
 * mismatch, ...) that readers append to and reports print in their warnings section.
 * Not async-signal-safe (uses malloc). */
#ifndef PTREC_WARNINGS_H
#define PTREC_WARNINGS_H

#include <stddef.h>

/* A list of warnings.  Zero-initialize; release with ptrec_warnings_free. */
struct ptrec_warnings {
	char **items;   /* NUL-terminated messages, oldest first */
	size_t count;   /* number of items */
	size_t cap;     /* allocated slots */
	size_t dropped; /* warnings not stored (allocation failed or over the cap) */
};

/* Appends a printf-formatted message.  At most 1000 messages are kept; further ones (and
 * ones that cannot be allocated) only count in dropped.  w may be NULL (no-op). */
void ptrec_warn(struct ptrec_warnings *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Frees all messages; w is empty and reusable afterwards. */
void ptrec_warnings_free(struct ptrec_warnings *w);

#endif
