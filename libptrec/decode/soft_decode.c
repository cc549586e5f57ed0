/* soft_decode.c — instrumented (soft) record decoding: record kinds to branch events, returns
 * inferred from entry-only records' stack pointers, and time unwrapping. */
#include "config.h"

#include <string.h>

#include "decode/soft_decode.h"

#define SHADOW_MAX 512          /* entry-only frames remembered for return inference */
#define HAS_X 0x80u             /* internal flag while decoding: timestamp holds raw x */

/* Entry-only frames still open, newest on top; the oldest are forgotten when full. */
struct shadow {
	struct {
		uint64_t site, fn;
		uint32_t sp;            /* (sp >> 3) modulo 2^28 */
	} f[SHADOW_MAX];
	size_t top, n;              /* next free index (circular), frames held */
};

/* The newest max events, kept in a circle. */
struct sink {
	struct ptrec_branch *out;
	size_t max, w, n;
	struct ptrec_bts_stats *st;
};

static void emit(struct sink *s, unsigned kind, uint64_t from, uint64_t to, uint64_t ts,
                 unsigned flags)
{
	struct ptrec_branch b;

	memset(&b, 0, sizeof(b));
	b.kind = (uint8_t)kind;
	b.from = from;
	b.to = to;
	b.timestamp = ts;
	b.flags = (uint8_t)flags;
	s->st->events++;
	if (!s->max)
		return;
	s->out[s->w] = b;
	s->w = (s->w + 1) % s->max;
	s->n++;
}

/* Is (sp >> 3) value a at or above b, modulo 2^28 (a signed 28-bit difference)? */
static int sp_at_or_above(uint32_t a, uint32_t b)
{
	return !(((a - b) & PTREC_SOFT_X_MASK) & (1u << 27));
}

/* Emits a RET for every open frame that must have returned by the time the stack pointer was
 * sp: those entered at or below it (strict: below it). */
static void pop_returned(struct shadow *sh, struct sink *s, uint32_t sp, int strict)
{
	while (sh->n) {
		size_t i = (sh->top + SHADOW_MAX - 1) % SHADOW_MAX;
		if (!sp_at_or_above(sp, sh->f[i].sp) || (strict && sp == sh->f[i].sp))
			return;
		emit(s, PTREC_BR_RET, sh->f[i].fn, sh->f[i].site, 0, 0);
		sh->top = i;
		sh->n--;
	}
}

static void push_frame(struct shadow *sh, uint64_t site, uint64_t fn, uint32_t sp)
{
	sh->f[sh->top].site = site;
	sh->f[sh->top].fn = fn;
	sh->f[sh->top].sp = sp;
	sh->top = (sh->top + 1) % SHADOW_MAX;
	if (sh->n < SHADOW_MAX)
		sh->n++;
}

static void reverse(struct ptrec_branch *v, size_t lo, size_t hi)
{
	while (lo + 1 < hi) {
		struct ptrec_branch t = v[lo];
		v[lo++] = v[--hi];
		v[hi] = t;
	}
}

/* Turns raw 28-bit times into full TSC values, newest first, from the newest anchor: each
 * record is taken to be at most one wrap (2^28 units) older than the next newer one. */
static void unwrap_times(struct ptrec_branch *v, size_t n, uint64_t freeze_tsc, unsigned shift)
{
	uint64_t cur = freeze_tsc >> shift;
	int anchored = freeze_tsc != 0;

	for (size_t k = n; k-- > 0;) {
		struct ptrec_branch *b = &v[k];
		if (b->kind == PTREC_BR_MARKER && (b->flags & PTREC_BRF_HAS_TIME)) {
			cur = b->timestamp >> shift;
			anchored = 1;
			continue;
		}
		if (!(b->flags & HAS_X))
			continue;
		b->flags &= (uint8_t)~HAS_X;
		uint64_t x = b->timestamp;
		if (!anchored) {
			/* No anchor newer than this record: times are right relative to each
			 * other, not in absolute terms. */
			cur = x;
			anchored = 1;
		}
		cur -= (cur - x) & PTREC_SOFT_X_MASK;
		b->timestamp = cur << shift;
		b->flags |= PTREC_BRF_HAS_TIME;
	}
}

size_t ptrec_soft_decode(const uint8_t *data, size_t size, uint64_t head,
                         const struct ptrec_soft_ring_info *info, struct ptrec_branch *out,
                         size_t max, struct ptrec_bts_stats *st)
{
	static const struct ptrec_soft_ring_info none;
	struct ptrec_bts_stats local;
	struct shadow sh;
	struct sink s = {out, max, 0, 0, NULL};
	const size_t rs = sizeof(struct ptrec_soft_record);
	size_t lead = 0;
	int entries = 0;

	if (!st)
		st = &local;
	if (!info)
		info = &none;
	memset(st, 0, sizeof(*st));
	sh.top = sh.n = 0;
	s.st = st;
	unsigned timed = (info->format & PTREC_SOFT_FMT_TIMED) ? HAS_X : 0;
	unsigned shift = PTREC_SOFT_FMT_SHIFT(info->format);
	lead = ptrec_ring_records(size, head, rs, st);
	for (uint64_t i = 0; i < st->records; i++) {
		struct ptrec_soft_record r;

		memcpy(&r, data + lead + i * rs, rs);
		if (!r.w0 && !r.w1) {
			st->empty++;
			continue;
		}
		uint64_t a = PTREC_SOFT_A(r.w0), b = PTREC_SOFT_B(r.w1);
		uint32_t x = (uint32_t)PTREC_SOFT_X(r.w0, r.w1);
		switch (PTREC_SOFT_KIND(r.w0)) {
		case PTREC_SOFT_CALL:
			emit(&s, PTREC_BR_CALL, a, b, timed ? x : 0, timed);
			break;
		case PTREC_SOFT_RET:
			emit(&s, PTREC_BR_RET, a, b, timed ? x : 0, timed);
			break;
		case PTREC_SOFT_EDGE:
			emit(&s, PTREC_BR_EDGE, a, 0, timed ? x : 0, timed);
			break;
		case PTREC_SOFT_MARK: {
			uint64_t tsc = r.w0 & PTREC_SOFT_TSC_MASK;
			emit(&s, PTREC_BR_MARKER, 0, r.w1, tsc, tsc ? PTREC_BRF_HAS_TIME : 0);
			break;
		}
		case PTREC_SOFT_ENTRY:
			pop_returned(&sh, &s, x, 0);
			push_frame(&sh, a, b, x);
			emit(&s, PTREC_BR_CALL, a, b, 0, 0);
			entries = 1;
			break;
		case PTREC_SOFT_BRANCH:
			if (x == PTREC_BR_NONE || x >= PTREC_BR_KIND_COUNT_) {
				st->bad_kind++;
				break;
			}
			emit(&s, x, a, b, 0, x == PTREC_BR_JCC ? PTREC_BRF_TAKEN : 0);
			break;
		default:
			st->bad_kind++;
			break;
		}
	}
	if (entries && info->final_sp)
		pop_returned(&sh, &s, (uint32_t)((info->final_sp >> 3) & PTREC_SOFT_X_MASK), 1);
	if (s.n > max) {
		/* out is a full circle whose oldest element is at w: rotate left by w. */
		reverse(out, 0, s.w);
		reverse(out, s.w, max);
		reverse(out, 0, max);
		s.n = max;
	}
	if (timed)
		unwrap_times(out, s.n, info->freeze_tsc, shift);
	return s.n;
}
