/* pt_tail.c — tail-first decoding of the last N branch events (see pt_tail.h): segments from
 * the newest PSB backwards, each joined to the next by the decoder state at the PSB between
 * them, times ordered across the joins. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ptrec.h"
#include "decode/pt_packet.h"
#include "decode/pt_tail.h"

#define TAIL_BATCH 64            /* runs per ptrec_pt_flow_next_runs call */
#define TAIL_KEEP_MIN (1u << 20) /* events kept before giving up on tail-first (times 4N) */

/* The events of one segment, oldest first. */
struct seg {
	struct ptrec_branch *ev;
	size_t n, cap;
};

/* The segments decoded so far, newest first (seg[0] ends at the end of the buffer). */
struct segs {
	struct seg *s;
	size_t n, cap;
	size_t stored;   /* events held in all of them */
};

static void segs_free(struct segs *ss)
{
	for (size_t i = 0; i < ss->n; i++)
		free(ss->s[i].ev);
	free(ss->s);
	memset(ss, 0, sizeof(*ss));
}

static int seg_push(struct seg *s, const struct ptrec_branch *ev)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		struct ptrec_branch *p = realloc(s->ev, cap * sizeof(*p));
		if (!p)
			return -PTREC_ENOMEM;
		s->ev = p;
		s->cap = cap;
	}
	s->ev[s->n++] = *ev;
	return 0;
}

static int segs_add(struct segs *ss, struct seg *s)
{
	if (ss->n == ss->cap) {
		size_t cap = ss->cap ? ss->cap * 2 : 16;
		struct seg *p = realloc(ss->s, cap * sizeof(*p));
		if (!p)
			return -PTREC_ENOMEM;
		ss->s = p;
		ss->cap = cap;
	}
	ss->s[ss->n++] = *s;
	return 0;
}

static int kept(const struct ptrec_branch *ev, int taken_only)
{
	return !(taken_only && ev->kind == PTREC_BR_JCC && !(ev->flags & PTREC_BRF_TAKEN));
}

/* What is known of the last ordered stamp (ptrec_pt_flow_order_time's *last) when decoding
 * started somewhere after the buffer's start: an interval that covers every possible value. */
struct order_iv {
	int known;       /* the value is w */
	uint64_t w;
	uint64_t lo, hi; /* else: it lies in [lo, hi] */
};

/* Applies the ordering of an event stamped r to the interval. */
static void iv_step(struct order_iv *v, uint64_t r)
{
	if (v->known) {
		struct ptrec_branch ev = {0, 0, r, PTREC_BR_JCC, PTREC_BRF_HAS_TIME, 0, 0};
		ptrec_pt_flow_order_time(&v->w, &ev);
		return;
	}
	/* Values in (r, r + SLIP] stay, every other becomes r. */
	uint64_t top = r > UINT64_MAX - PT_TIME_SLIP ? UINT64_MAX : r + PT_TIME_SLIP;
	uint64_t in_lo = v->lo > r ? v->lo : r + 1, in_hi = v->hi < top ? v->hi : top;
	int has_in = r < UINT64_MAX && in_lo <= in_hi;
	int has_out = v->lo <= r || v->hi > top;
	if (!has_in) {
		v->known = 1;
		v->w = r;
	} else if (has_out) {
		v->lo = r;
		v->hi = in_hi;
	} else {
		v->lo = in_lo;
		v->hi = in_hi;
	}
}

/* 1 if the last n kept events lie in the segments whose start was joined to an older one (all
 * but the oldest) and their times do not depend on what came before the oldest segment. */
static int enough(const struct segs *ss, size_t n, int taken_only)
{
	size_t total = 0, oldest = 0;
	for (size_t i = 0; i < ss->n; i++)
		for (size_t k = 0; k < ss->s[i].n; k++)
			if (kept(&ss->s[i].ev[k], taken_only)) {
				total++;
				if (i + 1 == ss->n)
					oldest++;
			}
	if (total - oldest < n)
		return 0;
	struct order_iv iv = {0, 0, 0, UINT64_MAX};
	size_t idx = 0, first = total - n;
	int in_window = 0;
	for (size_t i = ss->n; i-- > 0;)
		for (size_t k = 0; k < ss->s[i].n; k++) {
			const struct ptrec_branch *ev = &ss->s[i].ev[k];
			if (kept(ev, taken_only) && idx++ == first)
				in_window = 1;
			if (!(ev->flags & PTREC_BRF_HAS_TIME))
				continue;
			if (in_window)
				return iv.known; /* the first timed event of the window */
			iv_step(&iv, ev->timestamp);
		}
	return 1; /* no timed event in the window */
}

/* Decodes the current segment of f into s.  Returns 0, 1 when more than limit events are held
 * in all, or a negative error (-PTREC_ERATE: opts->stop). */
static int pass(struct ptrec_pt_flow *f, struct seg *s, struct segs *ss, size_t limit,
                const struct ptrec_pt_flow_last_opts *opts)
{
	struct ptrec_pt_flow_run runs[TAIL_BATCH];
	struct ptrec_branch evd = {0}, event; /* event trace: the EVD data before a CFE */
	for (unsigned long k = 1;; k++) {
		int n = ptrec_pt_flow_next_runs(f, runs, TAIL_BATCH);
		if (n <= 0)
			return n;
		for (int i = 0; i < n; i++) {
			if (runs[i].aux == PT_FLOW_AUX_RESYNC && s->n)
				ptrec_pt_flow_gap_resumed(&s->ev[s->n - 1], &runs[i]);
			if (runs[i].aux && ptrec_pt_flow_event_branch(&runs[i], &evd, &event) &&
			    seg_push(s, &event))
				return -PTREC_ENOMEM;
			if (runs[i].aux == PT_FLOW_AUX_PTW) { /* a marker where it was written, as
			                                         ptrec_pt_flow_decode_last keeps it */
				struct ptrec_branch mark = {.from = runs[i].ip, .to = runs[i].aux_payload,
				                            .kind = PTREC_BR_MARKER};
				if (seg_push(s, &mark))
					return -PTREC_ENOMEM;
			}
			if (runs[i].ev.kind != PTREC_BR_NONE && seg_push(s, &runs[i].ev))
				return -PTREC_ENOMEM;
		}
		if (ss->stored + s->n > limit)
			return 1;
		if (opts->stop && (k & 63) == 0 && opts->stop(opts->stop_arg))
			return -PTREC_ERATE;
	}
}

/* The last events of the decoded segments into ring, times ordered; returns the GAP count. */
static int assemble(const struct segs *ss, struct branch_ring *ring, int taken_only,
                    struct ptrec_pt_tail_info *info)
{
	uint64_t last = 0, gaps = 0;
	for (size_t i = ss->n; i-- > 0;)
		for (size_t k = 0; k < ss->s[i].n; k++) {
			struct ptrec_branch ev = ss->s[i].ev[k];
			ptrec_pt_flow_order_time(&last, &ev);
			info->events++;
			if (ev.kind == PTREC_BR_GAP)
				gaps++;
			if (kept(&ev, taken_only))
				ptrec_branch_ring_push(ring, &ev);
		}
	return gaps > 0x7fffffff ? 0x7fffffff : (int)gaps;
}

static int whole(const uint8_t *buf, size_t len, struct ptrec_pt_img *image,
                 const struct ptrec_pt_flow_last_opts *opts, struct branch_ring *ring,
                 struct ptrec_pt_tail_info *info)
{
	long first = ptrec_pt_packet_find_psb(buf, len, 0);
	memset(info, 0, sizeof(*info));
	info->whole = 1;
	info->reached_start = 1;
	info->from = first < 0 ? 0 : (uint64_t)first;
	info->bytes = len - info->from;
	int rc = ptrec_pt_flow_decode_last(buf, len, image, opts, ring, &info->stats);
	info->events = info->stats.events;
	info->segments = 1;
	if (rc == -PTREC_ERATE)
		info->stopped = 1;
	return rc;
}

int ptrec_pt_flow_decode_tail(const uint8_t *buf, size_t len, struct ptrec_pt_img *image,
                              const struct ptrec_pt_flow_last_opts *opts, struct branch_ring *ring,
                              struct ptrec_pt_tail_info *info)
{
	static const struct ptrec_pt_flow_last_opts none;
	struct ptrec_pt_tail_info local;
	if (!image || !ring || !ring->cap || (!buf && len))
		return -PTREC_EINVAL;
	if (!opts)
		opts = &none;
	if (!info)
		info = &local;
	memset(info, 0, sizeof(*info));
	ptrec_branch_ring_clear(ring);

	long p = ptrec_pt_packet_find_psb_before(buf, len, len);
	if (p < 0) /* no PSB: nothing to start at; the whole decoder says so */
		return whole(buf, len, image, opts, ring, info);
	size_t limit = ring->cap > TAIL_KEEP_MIN / 4 ? ring->cap * 4 : TAIL_KEEP_MIN;
	struct ptrec_pt_flow_config cfg = {buf, len, image, opts->errata, opts->time};
	struct ptrec_pt_flow *f = ptrec_pt_flow_new(&cfg);
	if (!f)
		return -PTREC_ENOMEM;
	struct segs ss = {0};
	size_t stop = 0;
	int rc = 0, fallback = 0;
	for (;;) {
		ptrec_pt_flow_restart(f, (size_t)p, stop);
		struct seg s = {0};
		int e = pass(f, &s, &ss, limit, opts);
		long sync = ptrec_pt_flow_first_sync(f);
		if (e == 0 && sync >= 0 && stop && !ptrec_pt_flow_joined(f))
			e = 1; /* this segment ends in another state than the next one started in */
		if (e == 0 && ptrec_pt_flow_time_calibrated(f))
			e = 1; /* its times depend on calibration from before it */
		if (e == 0 && sync >= 0) {
			if (segs_add(&ss, &s)) {
				free(s.ev);
				rc = -PTREC_ENOMEM;
				break;
			}
			ss.stored += s.n;
			stop = (size_t)sync;
			info->from = (uint64_t)sync;
			info->segments++;
		} else {
			free(s.ev);
		}
		if (e < 0) {
			if (e == -PTREC_ERATE)
				info->stopped = 1;
			else
				rc = e;
			break;
		}
		if (e > 0) {
			fallback = 1;
			break;
		}
		if (enough(&ss, ring->cap, opts->taken_only))
			break;
		p = ptrec_pt_packet_find_psb_before(buf, len, (size_t)p);
		if (p < 0) {
			info->reached_start = 1;
			break;
		}
		if (opts->stop && opts->stop(opts->stop_arg)) {
			info->stopped = 1;
			break;
		}
	}
	info->stats = *ptrec_pt_flow_stats(f);
	ptrec_pt_flow_free(f);
	if (fallback) {
		segs_free(&ss);
		return whole(buf, len, image, opts, ring, info);
	}
	if (rc == 0) {
		info->bytes = ss.n ? len - info->from : 0;
		rc = assemble(&ss, ring, opts->taken_only, info);
		if (info->stopped)
			rc = -PTREC_ERATE;
	}
	segs_free(&ss);
	return rc;
}
