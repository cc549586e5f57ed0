/* pt_flow.c — Intel PT instruction flow decoder with a basic-block cache: the driver.  The
 * interface of pt_flow.h but ptrec_pt_flow_count: the lifecycle, the runs (the hot path of
 * pt_flow_fast.h first, the slow path of pt_flow_walk.c when it declines), the instruction
 * iterator, the segments the tail-first decoder (pt_tail.c) restarts and joins, decode_last.
 *
 * The decoder's rooms and their one direction of dependencies are listed in pt_flow_state.h;
 * pt_flow.h gives the semantics. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode/pt_flow_fast.h"
#include "decode/pt_flow_query.h"
#include "decode/pt_flow_walk.h"

/* ---- lifecycle -------------------------------------------------------------------------- */

void ptrec_pt_flow_set_event_trace(struct ptrec_pt_flow *f, int on)
{
	if (f)
		f->event_trace = on != 0;
}

struct ptrec_pt_flow *ptrec_pt_flow_new(const struct ptrec_pt_flow_config *cfg)
{
	if (!cfg || (!cfg->buf && cfg->len) || !cfg->image)
		return NULL;
	struct ptrec_pt_flow *f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->buf = cfg->buf;
	f->len = cfg->len;
	f->image = cfg->image;
	f->errata = cfg->errata;
	f->first_sync = -1;
	f->next_sync = -1;
	f->mode = X86_MODE_64;
	f->cur_blk = -1;
	ptrec_pt_time_init(&f->time, &cfg->time);
	f->hash_mask = 4095;
	f->hash = malloc(((size_t)f->hash_mask + 1) * sizeof(*f->hash));
	if (!f->hash) {
		free(f);
		return NULL;
	}
	pt_flow_blk_flush(f);
	f->image_gen = ptrec_pt_img_generation(f->image);
	f->gen_ref = ptrec_pt_img_generation_ref(f->image);
	return f;
}

void ptrec_pt_flow_free(struct ptrec_pt_flow *f)
{
	if (!f)
		return;
	free(f->blk);
	free(f->hash);
	free(f->chain);
	free(f->span_mem);
	free(f->span_pay);
	for (uint32_t i = 0; i < f->nchunk; i++)
		free(f->chunk[i]);
	free(f->chunk);
	free(f);
}

const struct ptrec_pt_flow_stats *ptrec_pt_flow_stats(const struct ptrec_pt_flow *f)
{
	return &f->stats;
}

long ptrec_pt_flow_first_sync(const struct ptrec_pt_flow *f)
{
	return f->first_sync;
}

int ptrec_pt_flow_stopped(const struct ptrec_pt_flow *f)
{
	return f->stopped;
}

int ptrec_pt_flow_time_calibrated(const struct ptrec_pt_flow *f)
{
	return f->time.calib_dep;
}

int ptrec_pt_flow_restart(struct ptrec_pt_flow *f, size_t start, size_t stop_sync)
{
	if (!f)
		return -PTREC_EINVAL;
	if (f->first_sync >= 0) { /* the last segment that synchronised is the one to join */
		f->key_next = f->key_first;
		f->next_sync = f->first_sync;
	}
	f->pos = start < f->len ? start : f->len;
	f->ctx = PT_CTX_NONE;
	f->state = ST_SYNC;
	f->ip = 0;
	f->mode = X86_MODE_64;
	f->pending_mode = f->has_pending_mode = 0;
	f->fup_skip = f->tsx_abort = f->in_tx = f->iflag = 0;
	f->last_ip = f->cr3 = f->vmcs = 0;
	f->tnt = 0;
	f->tnt_n = 0;
	f->tnt_tsc = 0;
	f->tnt_tflags = 0;
	f->tnt_off = 0;
	memset(&f->nx, 0, sizeof(f->nx));
	f->ret_top = f->ret_n = 0;
	struct ptrec_pt_time_config tc = f->time.cfg;
	ptrec_pt_time_init(&f->time, &tc);
	f->ev_tsc = 0;
	f->ptw_head = f->ptw_n = 0;
	f->ptw_fup = f->ptw_done = f->ptw_sought = f->ptw_resumed = 0;
	f->trig_head = f->trig_n = 0;
	f->trig_anchor = f->trig_anchor_off = 0;
	f->aux_head = f->aux_n = 0;
	f->fup_held_n = f->br_held_n = 0;
	f->evd_pending = 0;
	f->spec = f->ovf_lost_ip = f->has_resume_ip = f->pgd_split = 0;
	f->mode_known = f->psb_mode_bad = f->gap_open = 0;
	f->tnt_lost = f->tnt_off_state = f->iflag_known = 0;
	f->gap_off = 0;
	f->no_progress = 0;
	f->cur_blk = -1;
	f->hot = 0;
	f->it_have = 0;
	f->stop_sync = stop_sync;
	f->raw_time = 1;
	f->stopped = 0;
	f->first_sync = -1;
	memset(&f->key_first, 0, sizeof(f->key_first));
	memset(&f->key_stop, 0, sizeof(f->key_stop));
	return 0;
}

int ptrec_pt_flow_joined(const struct ptrec_pt_flow *f)
{
	const struct flow_key *a = &f->key_stop, *b = &f->key_next;
	if (!f->stopped || !a->valid || !b->valid || f->next_sync < 0 ||
	    f->stop_sync != (size_t)f->next_sync)
		return 0;
	return a->state == b->state && a->ip == b->ip && a->last_ip == b->last_ip &&
	       a->mode == b->mode && a->has_pending_mode == b->has_pending_mode &&
	       a->pending_mode == b->pending_mode && a->fup_skip == b->fup_skip &&
	       a->tsx_abort == b->tsx_abort && a->in_tx == b->in_tx && a->tnt_n == b->tnt_n &&
	       a->ret_n == b->ret_n && a->ptw_n == b->ptw_n && a->aux_n == b->aux_n && a->tnt_tsc == b->tnt_tsc &&
	       a->tnt_tflags == b->tnt_tflags &&
	       ptrec_pt_time_same_run(&a->time, &b->time);
}

/* Tries the hot path for the next run (see fast_step). */
static inline __attribute__((always_inline)) int try_fast(struct ptrec_pt_flow *f,
                                                        struct ptrec_pt_flow_run *run)
{
	if (!HOT_PATHS || f->state != ST_ENABLED || f->cur_blk < 0 || *f->gen_ref != f->image_gen)
		return 0;
	if (!f->tnt_n && f->nx.kind == NX_NONE && !fast_read(f))
		pt_flow_lookahead(f, 0);
	if (f->aux_n || f->ptw_n || f->trig_n || !fast_step(f, run))
		return 0;
	f->stats.insns += run->ninsn;
	f->stats.events++;
	return 1;
}

static int next_run_refill(struct ptrec_pt_flow *f, struct ptrec_pt_flow_run *run)
	__attribute__((noinline));

/* The hot path makes no call (no registers to save): a step with a TNT bit queued or the
 * look-ahead item read; everything else, packet reading included, is in next_run_refill. */
int ptrec_pt_flow_next_run(struct ptrec_pt_flow *f, struct ptrec_pt_flow_run *run)
{
	if (f->hot && *f->gen_ref == f->image_gen && (f->tnt_n || f->nx.kind != NX_NONE) &&
	    fast_step(f, run)) { /* keeps everything f->hot stands for */
		f->stats.insns += run->ninsn;
		f->stats.events++;
		order_time(f, run);
		return 1;
	}
	return next_run_refill(f, run);
}

/* ptrec_pt_flow_next_run after its hot path declined (fast_step changes nothing when it does). */
static int next_run_refill(struct ptrec_pt_flow *f, struct ptrec_pt_flow_run *run)
{
	int e = 1;
	f->hot = 0; /* the slow path may call ptrec_pt_flow_next_run again */
	if (f->retire)
		pt_flow_retire_chunks(f);
	if (!try_fast(f, run))
		e = pt_flow_next_run_slow(f, run);
	if (e > 0)
		order_time(f, run);
	f->hot = HOT_PATHS && !f->retire && f->state == ST_ENABLED && f->cur_blk >= 0 && !f->aux_n &&
	         !f->ptw_n && !f->trig_n;
	return e;
}

static int next_runs(struct ptrec_pt_flow *f, struct ptrec_pt_flow_run *runs, size_t max);

int ptrec_pt_flow_next_runs(struct ptrec_pt_flow *f, struct ptrec_pt_flow_run *runs, size_t max)
{
	f->hot = 0; /* this changes the state behind ptrec_pt_flow_next_run's back */
	int e = next_runs(f, runs, max);
	f->hot = 0;
	return e;
}

static int next_runs(struct ptrec_pt_flow *f, struct ptrec_pt_flow_run *runs, size_t max)
{
	size_t n = 0;
	if (f->retire)
		pt_flow_retire_chunks(f);
	while (n < max) {
		/* The hot loop: the state, the cache and the image cannot change under fast_step. */
		if (HOT_PATHS && f->state == ST_ENABLED && f->cur_blk >= 0 &&
		    *f->gen_ref == f->image_gen &&
		    !f->aux_n && !f->ptw_n && !f->trig_n) {
			size_t n0 = n;
			struct jcc_tally t = {0, 0, 0};
			while (n < max) {
				if (!f->tnt_n && f->nx.kind == NX_NONE && !fast_read(f)) {
					pt_flow_lookahead(f, 0);
					if (f->aux_n || f->ptw_n || f->trig_n)
						break;
				}
				if (f->tnt_n && f->blk[f->cur_blk].iclass == X86_IC_JCC) {
					size_t m = jcc_burst(f, runs, n, max, &t);
					if (m == n)
						break; /* the successor is not cached */
					n = m;
					continue;
				}
				if (!fast_step(f, &runs[n]))
					break;
				t.insns += runs[n].ninsn;
				order_time(f, &runs[n]);
				n++;
			}
			f->stats.insns += t.insns;
			f->stats.events += n - n0;
			if (n == max)
				break;
		}
		int e = pt_flow_next_run_slow(f, &runs[n]);
		if (e < 0)
			return n ? (int)n : e;
		if (e == 0)
			break;
		order_time(f, &runs[n]);
		n++;
	}
	return (int)n;
}

int ptrec_pt_flow_next_insn(struct ptrec_pt_flow *f, struct ptrec_pt_flow_insn *insn, struct ptrec_branch *ev,
                      struct ptrec_pt_flow_run *run)
{
	for (;;) {
		if (f->it_have) {
			struct ptrec_pt_flow_run *r = &f->it_run;
			if (f->it_i < r->ninsn) {
				insn->ip = f->it_ip;
				insn->length = r->len[f->it_i];
				insn->mode = r->mode;
				insn->iclass = f->it_i + 1 == r->ninsn ? r->last_iclass : X86_IC_OTHER;
				f->it_ip += insn->length;
				f->it_i++;
				return PT_FLOW_INSN;
			}
			if (!f->it_event_done && (r->ev.kind != PTREC_BR_NONE || r->aux)) {
				f->it_event_done = 1;
				*ev = r->ev;
				if (run)
					*run = *r;
				return PT_FLOW_EVENT;
			}
			f->it_have = 0;
		}
		int e = ptrec_pt_flow_next_run(f, &f->it_run);
		if (e <= 0)
			return e;
		f->it_have = 1;
		f->it_i = 0;
		f->it_ip = f->it_run.ip;
		f->it_event_done = 0;
	}
}

void ptrec_pt_flow_gap_resumed(struct ptrec_branch *gap, const struct ptrec_pt_flow_run *resync)
{
	if (gap->kind != PTREC_BR_GAP || gap->to || gap->reserved)
		return;
	gap->to = resync->aux_ip;
	gap->reserved = resync->aux_arg > UINT32_MAX ? UINT32_MAX : (uint32_t)resync->aux_arg;
}

int ptrec_pt_flow_event_branch(const struct ptrec_pt_flow_run *run, struct ptrec_branch *acc,
                               struct ptrec_branch *out)
{
	if (run->aux == PT_FLOW_AUX_EVD) {
		if (run->aux_arg == PT_EVD_VMXR) { /* the VMCS field is 32 bits */
			acc->reserved = run->aux_payload > UINT32_MAX ? UINT32_MAX
			                                              : (uint32_t)run->aux_payload;
			acc->flags |= PTREC_BRF_EVENT_REASON;
		} else { /* CR2, exit qualification */
			acc->to = run->aux_payload;
			acc->flags |= PTREC_BRF_EVENT_DATA;
		}
		return 0;
	}
	if (run->aux != PT_FLOW_AUX_CFE)
		return 0;
	*out = *acc;
	out->kind = PTREC_BR_EVENT;
	out->from = run->aux_ip;
	out->reason = (uint16_t)((run->aux_payload & 0xff) << 8 | (run->aux_arg & 0xff));
	memset(acc, 0, sizeof(*acc));
	return 1;
}

const char *ptrec_pt_flow_event_text(const struct ptrec_branch *ev, char *buf, size_t len)
{
	unsigned type = ev->reason >> 8, vec = ev->reason & 0xff;
	const char *name = ptrec_pt_cfe_name(type);
	int n = name ? snprintf(buf, len, "%s", name) : snprintf(buf, len, "event type %u", type);
	if (ptrec_pt_cfe_has_vector(type) && n >= 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, type == PT_CFE_VMEXIT_INTR ? ", interrupt %u"
		                                                                 : " %u", vec);
	int vmexit = type == PT_CFE_VMEXIT || type == PT_CFE_VMEXIT_INTR;
	if ((ev->flags & PTREC_BRF_EVENT_REASON) && n >= 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, ", exit reason 0x%" PRIx32, ev->reserved);
	if ((ev->flags & PTREC_BRF_EVENT_DATA) && n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, ", %s 0x%" PRIx64,
		         vmexit ? "exit qualification" : "cr2", ev->to);
	return buf;
}

int ptrec_pt_flow_decode_last(const uint8_t *buf, size_t len, struct ptrec_pt_img *image,
                        const struct ptrec_pt_flow_last_opts *opts, struct branch_ring *ring,
                        struct ptrec_pt_flow_stats *stats)
{
	static const struct ptrec_pt_flow_last_opts none;
	if (!image || !ring || (!buf && len))
		return -PTREC_EINVAL;
	if (!opts)
		opts = &none;
	struct ptrec_pt_flow_config cfg = {buf, len, image, opts->errata, opts->time};
	struct ptrec_pt_flow *f = ptrec_pt_flow_new(&cfg);
	if (!f)
		return -PTREC_ENOMEM;
	ptrec_branch_ring_clear(ring);
	struct ptrec_pt_flow_run run;
	struct ptrec_branch evd = {0}, event; /* event trace: the EVD data before a CFE */
	int ret = 0;
	for (unsigned long n = 1;; n++) {
		int e = ptrec_pt_flow_next_run(f, &run); /* the same runs, times ordered the same way */
		if (e <= 0) {
			ret = e;
			break;
		}
		if (run.aux == PT_FLOW_AUX_RESYNC && ring->pushed) /* where the last GAP ended */
			ptrec_pt_flow_gap_resumed(&ring->slot[(ring->next + ring->cap - 1) % ring->cap],
			                          &run);
		if (run.aux && ptrec_pt_flow_event_branch(&run, &evd, &event))
			ptrec_branch_ring_push(ring, &event);
		if (run.aux == PT_FLOW_AUX_PTW) { /* a PTWRITE: a marker where it was written */
			struct ptrec_branch mark = {.from = run.ip, .to = run.aux_payload,
			                            .kind = PTREC_BR_MARKER};
			ptrec_branch_ring_push(ring, &mark);
		}
		if (run.ev.kind != PTREC_BR_NONE &&
		    !(opts->taken_only && run.ev.kind == PTREC_BR_JCC &&
		      !(run.ev.flags & PTREC_BRF_TAKEN)))
			ptrec_branch_ring_push(ring, &run.ev);
		if (opts->stop && (n & 4095) == 0 && opts->stop(opts->stop_arg)) {
			ret = -PTREC_ERATE;
			break;
		}
	}
	if (stats)
		*stats = f->stats;
	if (ret == 0)
		ret = f->stats.gaps > 0x7fffffff ? 0x7fffffff : (int)f->stats.gaps;
	ptrec_pt_flow_free(f);
	return ret;
}
