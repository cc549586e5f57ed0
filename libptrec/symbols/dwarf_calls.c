/* dwarf_calls.c — the tail calls between two frames, from the call sites of the debug
 * information (ptrec_dwarf_tail_calls), as gdb finds them: a frame's caller called T, the frame
 * runs in another function F, and the tail calls recorded in T's body lead to F one way only. */
#include "config.h"

#include <string.h>

#include "symbols/dwarf_line.h"

#define TAIL_DEPTH 8     /* tail calls in one chain at most */
#define TAIL_VISITS 256  /* functions looked at per question at most (else: not known) */

struct chain_walk {
	const struct ptrec_dwarf *d;
	uint64_t callee;             /* the function to reach */
	uint64_t path[TAIL_DEPTH];   /* the tail calls taken so far, outermost first */
	uint64_t found[TAIL_DEPTH];  /* the first chain that reached callee */
	size_t nfound_len;
	unsigned chains;             /* chains found (2: more than one, or not known) */
	unsigned visits;
};

/* The index of the first call site whose return address is above addr. */
static size_t first_after(const struct ptrec_dwarf *d, uint64_t addr)
{
	size_t lo = 0, hi = d->ncalls;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (d->calls[mid].ret <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Follows the tail calls of the function entered at fn, depth of them taken already. */
static void walk(struct chain_walk *w, uint64_t fn, size_t depth)
{
	const struct ptrec_dwarf_func *f = ptrec_dwarf_lookup_func(w->d, fn);
	if (w->chains > 1)
		return;
	if (++w->visits > TAIL_VISITS) {
		w->chains = 2;
		return;
	}
	if (!f || f->lo != fn)
		return;
	/* its call sites: return addresses in (lo, hi] (a jump may end the function) */
	for (size_t i = first_after(w->d, f->lo); i < w->d->ncalls && w->d->calls[i].ret <= f->hi;
	     i++) {
		const struct ptrec_dwarf_call *c = &w->d->calls[i];
		if (!c->tail || depth == TAIL_DEPTH)
			continue;
		w->path[depth] = c->ret;
		if (c->target == w->callee) {
			if (!w->chains++) {
				for (size_t k = 0; k <= depth; k++)
					w->found[k] = w->path[k];
				w->nfound_len = depth + 1;
			}
			if (w->chains > 1)
				return;
			continue;
		}
		walk(w, c->target, depth + 1);
	}
}

const struct ptrec_dwarf_call *ptrec_dwarf_call_at(const struct ptrec_dwarf *d, uint64_t ret)
{
	size_t i = ret ? first_after(d, ret - 1) : d->ncalls;
	return i < d->ncalls && d->calls[i].ret == ret ? &d->calls[i] : NULL;
}

uint64_t ptrec_dwarf_entry_by_name(const struct ptrec_dwarf *d, const char *name)
{
	size_t lo = 0, hi = d->nnames;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(d->names[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == d->nnames || strcmp(d->names[lo].name, name))
		return 0;
	uint64_t entry = d->names[lo].entry;
	for (size_t k = lo + 1; k < d->nnames && !strcmp(d->names[k].name, name); k++)
		if (d->names[k].entry != entry)
			return 0;
	return entry;
}

size_t ptrec_dwarf_tail_chain(const struct ptrec_dwarf *d, uint64_t from, uint64_t callee,
                              uint64_t *out, size_t max)
{
	if (!from || from == callee)
		return 0;
	struct chain_walk w = {.d = d, .callee = callee};
	walk(&w, from, 0);
	if (w.chains != 1 || w.nfound_len > max)
		return 0;
	for (size_t k = 0; k < w.nfound_len; k++)
		out[k] = w.found[w.nfound_len - 1 - k];
	return w.nfound_len;
}
