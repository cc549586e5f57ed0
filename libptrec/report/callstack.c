/* callstack.c — call stack rebuilt from branch events. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "report/callstack.h"

#define STACK_MAX 4096

/* 1 if a return to `to` returns from the call at frame f. */
static int returns_to(const struct ptrec_frame *f, uint64_t to, int soft)
{
	if (f->site_is_return_address || soft)
		return f->site == to;
	return to > f->site && to - f->site <= 15;
}

size_t ptrec_callstack_rebuild(const struct ptrec_branch *b, size_t n, int soft,
                               struct ptrec_frame *out, size_t max,
                               struct ptrec_callstack_info *info)
{
	struct ptrec_frame st[STACK_MAX];
	size_t depth = 0, base = 0, w = 0;
	struct ptrec_callstack_info local;

	if (!info)
		info = &local;
	memset(info, 0, sizeof(*info));
	for (size_t i = 0; i < n; i++) {
		const struct ptrec_branch *e = &b[i];
		switch (e->kind) {
		case PTREC_BR_CALL:
		case PTREC_BR_IND_CALL: {
			struct ptrec_frame f;
			memset(&f, 0, sizeof(f));
			f.site = e->from;
			f.func = e->to;
			f.site_is_return_address = (uint8_t)(soft != 0);
			if (depth - base == STACK_MAX)
				base++; /* deepest recursion: forget the outermost frame */
			st[depth++ % STACK_MAX] = f;
			break;
		}
		case PTREC_BR_RET: {
			size_t k, limit = depth - base;
			for (k = 0; k < limit && k < 64; k++)
				if (returns_to(&st[(depth - 1 - k) % STACK_MAX], e->to, soft))
					break;
			if (k < limit && k < 64) {
				if (k)
					info->resync++;
				depth -= k + 1;
			} else if (limit) {
				depth--; /* no matching frame: assume the innermost returned */
			} else {
				/* Returned above the oldest call we saw: the caller becomes known. */
				struct ptrec_frame f;
				memset(&f, 0, sizeof(f));
				f.site = e->to;
				f.site_is_return_address = 1;
				f.resumed = 1;
				info->unmatched_returns++;
				st[depth++ % STACK_MAX] = f;
			}
			break;
		}
		case PTREC_BR_GAP:
		case PTREC_BR_OVERFLOW:
			info->gaps++;
			break;
		default:
			break;
		}
	}
	for (size_t k = depth; k > base; k--) {
		if (w == max) {
			info->dropped = k - base;
			break;
		}
		out[w++] = st[(k - 1) % STACK_MAX];
	}
	info->depth = w;
	return w;
}

/* 1 if unwound frame u returns into the call of frame f. */
static int confirms(const struct ptrec_frame *f, const struct ptrec_unwind_frame *u)
{
	return u->return_address && !u->signal_frame && returns_to(f, u->pc, 0);
}

/* 1 if the unwinder walked from frame a to frame b (a < b) by CFI alone (tail-call frames
 * lie between two frames it found so). */
static int straight_walk(const struct ptrec_unwind_frame *u, size_t a, size_t b)
{
	for (size_t k = a + 1; k <= b; k++)
		if ((u[k].how != PTREC_UNWIND_CFI && u[k].how != PTREC_UNWIND_TAILCALL) ||
		    u[k].signal_frame)
			return 0;
	return 1;
}

size_t ptrec_callstack_confirm(struct ptrec_frame *f, size_t n, const struct ptrec_unwind_frame *u,
                               size_t nu, struct ptrec_callstack_info *info)
{
	size_t next = 1, w = 0;
	size_t inner_i = 0, inner_j = 0; /* after the last confirmed frame; unwound #0 (the pc)
	                                    stands for it at first */

	if (!nu || u[0].how != PTREC_UNWIND_CONTEXT)
		return n;
	for (size_t i = 0; i < n; i++) {
		size_t j = next;
		/* An inlined call has its container's return address: the same frame again. */
		if (next > 1 && confirms(&f[i], &u[next - 1]))
			j = next - 1;
		else
			while (j < nu && !confirms(&f[i], &u[j]))
				j++;
		if (j == nu) {
			f[w++] = f[i]; /* not confirmed: kept unless a confirmed frame outside it drops it */
			continue;
		}
		/* Frames kept since the last confirmed one were not on a straight walk: drop them. */
		size_t pending = w - inner_i;
		if (pending && straight_walk(u, inner_j, j)) {
			w -= pending;
			info->skipped += pending;
		}
		f[w++] = f[i];
		inner_i = w;
		inner_j = j;
		next = j + 1;
	}
	info->depth = w;
	return w;
}
