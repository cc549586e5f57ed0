/* warnings.c — the warning list used by the dump, ELF and DWARF readers and the reports. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/warnings.h"

#define WARNINGS_MAX 1000

void ptrec_warn(struct ptrec_warnings *w, const char *fmt, ...)
{
	va_list ap;
	char *msg = NULL;
	int n;

	if (!w)
		return;
	if (w->count >= WARNINGS_MAX) {
		w->dropped++;
		return;
	}
	if (w->count == w->cap) {
		size_t ncap = w->cap ? w->cap * 2 : 8;
		char **p = realloc(w->items, ncap * sizeof(*p));
		if (!p) {
			w->dropped++;
			return;
		}
		w->items = p;
		w->cap = ncap;
	}
	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (n < 0) {
		w->dropped++;
		return;
	}
	w->items[w->count++] = msg;
}

void ptrec_warnings_free(struct ptrec_warnings *w)
{
	for (size_t i = 0; i < w->count; i++)
		free(w->items[i]);
	free(w->items);
	w->items = NULL;
	w->count = w->cap = w->dropped = 0;
}
