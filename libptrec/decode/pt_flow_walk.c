/* pt_flow_walk.c — the PT flow decoder's slow path (pt_flow_walk.h): the general walk from block
 * to block, the binding of IP events, disables and overflows to the code, the states other
 * than enabled (sync, disabled, resync), and the delivery of queued items. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "decode/pt_flow_blk.h"
#include "decode/pt_flow_query.h"
#include "decode/pt_flow_resync.h"
#include "decode/pt_flow_walk.h"

static void bind_overflow(struct ptrec_pt_flow *f, struct ptrec_pt_flow_run *run)
{
	struct nx *nx = &f->nx;
	ev_set(run, PTREC_BR_OVERFLOW, f->state == ST_ENABLED ? f->ip : 0,
	       nx->has_ip ? nx->ip : 0, nx->tflags, nx->tsc);
	run->offset = nx->off;
	f->stats.overflows++;
	pt_flow_trig_flush(f);
	f->tnt_n = 0;
	f->tnt = 0;
	f->ret_n = 0;
	f->cur_blk = -1;
	f->mode_known = 0; /* lost with the packets (ptxed reports the next MODE.Exec) */
	if (nx->has_ip) {
		f->ip = nx->ip;
		if (nx->has_mode) {
			f->mode = nx->new_mode;
			f->mode_known = 1;
		}
		f->state = ST_ENABLED;
		pt_flow_release_fup_held(f, nx->ip); /* MODE.TSX before the resume FUP */
	} else {
		f->ovf_lost_ip = (f->errata & PT_ERRATUM_SKD010) != 0;
		f->state = ST_DISABLED;
	}
	nx->kind = NX_NONE;
}

/* The packets ended while tracing: nothing proves that the instruction at f->ip executed, so
 * the flow stops before it (an END item at that IP; the run may hold instructions before it
 * that the packets did prove). */
static int end_of_trace(struct ptrec_pt_flow *f, struct ptrec_pt_flow_run *run)
{
	run->aux = PT_FLOW_AUX_END;
	run->aux_ip = f->ip;
	f->state = ST_END;
	f->cur_blk = -1;
	return 1;
}

/* Binds an IP event (FUP pair or PSB+ sync point) at the current ip.  Returns 1 if it produced
 * an event in run, 0 if the walk just goes on. */
static int bind_ip_event(struct ptrec_pt_flow *f, struct ptrec_pt_flow_run *run)
{
	struct nx *nx = &f->nx;
	switch (nx->kind) {
	case NX_SYNC:
		if (f->psb_mode_bad) {
			/* PSB+ restates the execution mode; a mode change is a MODE.Exec before
			 * the TIP of its branch.  A PSB+ whose mode is not the flow's says the
			 * decode went wrong before it: a gap (ptxed: "bad status update"), and
			 * decoding goes on from PSB+'s state, which is complete (a sync point). */
			f->psb_mode_bad = 0;
			pt_flow_gap(f, run, f->ip, -PTREC_ESTATE, "bad status update", nx->off,
			            RESYNC_AT_IP);
			run->offset = f->psb_mode_off; /* the packet that says it */
			return 1;
		}
		nx->kind = NX_NONE;
		pt_flow_psb_reached(f, nx->psb_off);
		return pt_flow_stop_at_sync(f, nx->psb_off);
	case NX_FUP_TIP:
		/* a CFE before the FUP is the event this pair reports: it comes first, at the
		 * FUP's IP ("the FUP provides the source IP for an instruction or event") */
		if (pt_flow_release_cfe(f, nx->ip))
			return 0;
		ev_set(run, nx->abort ? PTREC_BR_TSX_ABORT : PTREC_BR_INTERRUPT, nx->ip, nx->ip2,
		       nx->tflags, nx->tsc);
		run->offset = nx->off;
		f->ip = nx->ip2;
		if (nx->abort)
			f->spec = 0;
		pt_flow_apply_mode(f, nx);
		pt_flow_release_br_held(f, 1);
		f->cur_blk = -1;
		nx->kind = NX_NONE;
		return 1;
	case NX_FUP_PGD:
		if (nx->abort) {
			/* A transaction abort that also disables tracing: the abort happened at
			 * ip (its FUP), then tracing went off; say both, in that order. */
			nx->abort = 0;
			f->spec = 0;
			pt_flow_aux_push(f, PT_FLOW_AUX_TSX, 2, 0, nx->ip);
			return 0;
		}
		if (pt_flow_release_cfe(f, nx->ip)) /* (as for NX_FUP_TIP) */
			return 0;
		ev_set(run, PTREC_BR_DISABLE, nx->ip, nx->has_ip2 ? nx->ip2 : 0, nx->tflags, nx->tsc);
		run->offset = nx->off;
		pt_flow_release_br_held(f, 1);
		f->has_resume_ip = 1; /* a TIP.PGE at this IP resumes where tracing stopped */
		f->resume_ip = nx->ip;
		f->state = ST_DISABLED;
		f->cur_blk = -1;
		nx->kind = NX_NONE;
		return 1;
	case NX_FUP_END: /* the FUP proves the flow reached ip; nothing says more */
		return end_of_trace(f, run);
	case NX_FUP_AUX:
		nx->kind = NX_NONE;
		pt_flow_release_fup_held(f, nx->ip);
		return 0; /* delivered before the instruction at ip */
	default:
		return 0;
	}
}

static inline int nx_is_ip_event(unsigned k)
{
	return k == NX_FUP_TIP || k == NX_FUP_PGD || k == NX_FUP_END || k == NX_SYNC ||
	       k == NX_FUP_AUX;
}

/* Takes the next TNT bit.  Returns 0/1, or -1 if none is available (nx then says why). */
static inline int tnt_pop(struct ptrec_pt_flow *f)
{
	if (!f->tnt_n) {
		if (f->nx.kind != NX_NONE)
			return -1;
		pt_flow_lookahead(f, 0);
		if (!f->tnt_n)
			return -1;
	}
	f->tnt_n--;
	return (int)((f->tnt >> f->tnt_n) & 1);
}

/* A PTW without FUP (FUPonPTW off) is what the next PTWRITE the flow executes wrote: once
 * the packets before the code that follows are read, find that PTWRITE and deliver the
 * payload right after it; when a branch that needs a packet comes first, deliver it at once. */
static void ptw_seek(struct ptrec_pt_flow *f)
{
	if (!f->ptw_n || f->ptw_ip[f->ptw_head] || f->ptw_sought || f->state != ST_ENABLED ||
	    (f->ptw_fup && f->ptw_n == 1))
		return;
	f->ptw_sought = 1;
	f->ptw_ip[f->ptw_head] = pt_flow_straight_walk(f, f->ip, f->mode, 0, 1);
}


/* A disable at the branch at `at` (the branch executed; TIP.PGD gave its target or none).
 * Tracing stopped at that target; without one, at the instruction after the branch (fall):
 * a TIP.PGE there resumes where it stopped (a SYSCALL into an untraced kernel that
 * returns). */
static int disable_at_branch(struct ptrec_pt_flow *f, struct ptrec_pt_flow_run *run, uint64_t at,
                             uint64_t fall)
{
	struct nx *nx = &f->nx;
	/* SDM, PIP and VMCS: without a FUP before them they bind to the far branch (VMLAUNCH,
	 * VMRESUME, ...) found in the code and apply from it on, so they come right after that
	 * instruction, before the TIP.PGD that ends the compound packet event (with a FUP they
	 * apply at the TIP.PGD's IP: after the DISABLE, pt_flow_release_br_held(f, 1)). */
	if (f->br_held_n && !f->pgd_split) {
		f->pgd_split = 1;
		f->pgd_at = at;
		f->pgd_fall = fall;
		pt_flow_release_br_held(f, 0);
		f->ip = fall;
		f->cur_blk = -1;
		return 1; /* the run up to and with the branch; the DISABLE comes next */
	}
	f->pgd_split = 0;
	ev_set(run, PTREC_BR_DISABLE, at, nx->has_ip ? nx->ip : 0, nx->tflags, nx->tsc);
	run->offset = nx->off;
	nx->kind = NX_NONE;
	f->state = ST_DISABLED;
	f->has_resume_ip = 1;
	f->resume_ip = nx->has_ip ? nx->ip : fall;
	pt_flow_release_br_held(f, 0);
	return 1;
}

/* Walks from f->ip in state ST_ENABLED until one run is complete. */
static int walk(struct ptrec_pt_flow *f, struct ptrec_pt_flow_run *run)
{
	for (;;) {
		if (f->aux_n)
			return 2; /* auxiliary items come before the code that follows */
		if (f->pgd_split) {
			run->ip = f->pgd_at;
			run->mode = f->mode;
			return disable_at_branch(f, run, f->pgd_at, f->pgd_fall);
		}
		if (f->tnt_n == 0 && f->nx.kind == NX_NONE)
			pt_flow_lookahead(f, 0);
		ptw_seek(f);
		if (f->aux_n || pt_flow_ptw_due(f))
			return 2; /* deliver them (and due PTWRITE payloads) before the code */
		if (f->trig_n && f->trig[f->trig_head].ip == f->ip) {
			pt_flow_trig_release(f); /* before anything bound at this IP read after it */
			return 2;
		}
		struct nx *nx = &f->nx;
		if (f->tnt_n == 0) {
			if (nx->kind == NX_END && !nx->cut && !f->br_held_n) {
				run->ip = f->ip;
				run->mode = f->mode;
				return end_of_trace(f, run);
			}
			if (nx->kind == NX_OVF) {
				bind_overflow(f, run);
				return 1;
			}
			if (nx->kind == NX_ERR && nx->why == pt_flow_why_evd) {
				/* EVD and CFE packets that do not fit: the event they start is
				 * unknown, and what its FUP and TIP mean with it; no instruction is at
				 * fault (from 0).  Resume at the next PSB. */
				pt_flow_gap(f, run, 0, nx->err, nx->why, nx->off, (size_t)nx->off + 1);
				return 1;
			}
			if (nx->kind == NX_SYNC_OFF) {
				pt_flow_stop_at_sync(f, nx->psb_off);
				return 0;
			}
			if ((f->errata & PT_ERRATUM_BDM64) && nx->abort && nx->ip != f->ip &&
			    (nx->kind == NX_FUP_TIP || nx->kind == NX_FUP_PGD) &&
			    pt_flow_bdm64(f, nx->ip))
				f->ip = nx->ip;
			if (nx_is_ip_event(nx->kind) && nx->ip == f->ip && !pt_flow_skd022(f, nx)) {
				run->ip = f->ip;
				run->mode = f->mode;
				if (bind_ip_event(f, run))
					return 1;
				continue;
			}
			if (nx->kind == NX_PGE) {
				/* Enabled again without a disable: say so, never jump silently. */
				ev_set(run, PTREC_BR_ENABLE, f->ip, nx->ip, nx->tflags, nx->tsc);
				run->offset = nx->off;
				f->ip = nx->ip;
				pt_flow_apply_mode(f, nx);
				pt_flow_release_br_held(f, 0);
				f->cur_blk = -1;
				nx->kind = NX_NONE;
				return 1;
			}
		}
		if (++f->no_progress > NO_PROGRESS_LIMIT) {
			if (nx->kind == NX_END || nx->kind == NX_SYNC_OFF) {
				f->state = ST_END;
				return 0;
			}
			pt_flow_gap(f, run, f->ip, -PTREC_ESTATE, "no packet consumed for too long", f->pos,
			    RESYNC_AT_IP);
			return 1;
		}

		/* The block at ip. */
		if (ptrec_pt_img_generation(f->image) != f->image_gen || f->nblk + 2 > BLK_CACHE_MAX) {
			pt_flow_blk_flush(f);
			f->image_gen = ptrec_pt_img_generation(f->image);
		}
		int32_t bi = f->cur_blk;
		if (bi < 0 || f->blk[bi].start != f->ip || f->blk[bi].mode != f->mode) {
			bi = blk_get(f, f->ip, f->mode);
			if (bi < 0)
				return bi;
		}
		f->cur_blk = -1;
		const struct blk *b = &f->blk[bi];
		run->ip = b->start;
		run->mode = b->mode;
		run->flags = f->spec ? PT_FLOW_RUN_SPECULATIVE : 0;
		run->len = b->len;
		run->ninsn = b->ninsn;
		run->last_iclass = b->end == BLK_BRANCH ? b->iclass : X86_IC_OTHER;

		/* A PTWRITE whose payload is queued ends the run right after it: the payload is
		 * what that instruction wrote (delivered next). */
		uint64_t pw = f->ptw_n ? f->ptw_ip[f->ptw_head] : 0;
		/* A TRIG due inside the block ends the run before its IP (unless a PTWRITE or an
		 * IP event comes first). */
		uint64_t tg = f->trig_n ? f->trig[f->trig_head].ip : 0;
		if (tg > b->start && tg <= BLK_END_IP(b) && (!pw || pw < b->start || tg <= pw) &&
		    !(f->tnt_n == 0 && nx_is_ip_event(nx->kind) && nx->ip > b->start && nx->ip < tg)) {
			uint64_t a = b->start;
			uint32_t k = 0;
			while (k < b->ninsn && a < tg)
				a += run->len[k++];
			if (a == tg) {
				run->ninsn = k;
				run->last_iclass = X86_IC_OTHER;
				f->ip = a;
				return 1;
			}
		}
		if (pw && pw >= b->start && pw <= BLK_END_IP(b)) {
			uint64_t a = b->start;
			uint32_t k = 0;
			while (k < b->ninsn && a < pw)
				a += run->len[k++];
			if (a == pw && k < b->ninsn && (k + 1 < b->ninsn || b->end != BLK_BRANCH)) {
				a += run->len[k++];
				run->ninsn = k;
				run->last_iclass = X86_IC_OTHER;
				f->ip = a;
				f->ptw_done = 1;
				return 1;
			}
		}

		if (f->tnt_n == 0 && b->end == BLK_BRANCH && b->iclass == X86_IC_FAR &&
		    nx->ip == BLK_END_IP(b) && pt_flow_skd022(f, nx)) {
			nx->has_ip = nx->has_ip2;
			nx->ip = nx->ip2;
			return disable_at_branch(f, run, BLK_END_IP(b), b->dest[0]);
		}
		/* An IP event inside the block binds before that instruction executes. */
		if (f->tnt_n == 0 && nx_is_ip_event(nx->kind) && nx->ip > b->start &&
		    nx->ip <= BLK_END_IP(b)) {
			uint64_t a = b->start;
			uint32_t k = 0;
			while (k < b->ninsn && a < nx->ip)
				a += run->len[k++];
			if (a == nx->ip) {
				run->ninsn = k;
				run->last_iclass = X86_IC_OTHER;
				f->ip = a;
				if (bind_ip_event(f, run))
					return 1;
				return 1; /* a sync point: deliver the prefix, continue next call */
			}
		}

		if (b->end == BLK_ERROR) { /* reported where the decoder is (nx_at) */
			pt_flow_gap(f, run, BLK_END_IP(b), b->err,
			    b->err == -PTREC_ENOMAP ? "no code image at IP" : "undecodable instruction",
			    nx->kind != NX_NONE ? nx->off : f->pos, RESYNC_AT_IP);
			run->offset = nx->kind != NX_NONE ? nx_at(nx) : f->pos; /* see nx_at */
			return 1;
		}
		if (b->end == BLK_OPEN) {
			f->ip = b->dest[0];
			return 1;
		}
		if (b->end == BLK_CR3) {
			/* "MOV CR3 generates PIP": the oldest PIP waiting binds right after it; a
			 * TIP.PGD (the CR3 filter) disables tracing after it. */
			if (f->tnt_n == 0 && nx->kind == NX_PGD)
				return disable_at_branch(f, run, BLK_END_IP(b), b->dest[0]);
			pt_flow_release_one_pip(f);
			f->ip = b->dest[0];
			return 1;
		}

		uint64_t at = BLK_END_IP(b);
		uint64_t next = at + b->last_len;
		int bit;
		switch (b->iclass) {
		case X86_IC_JCC:
			bit = tnt_pop(f);
			if (bit < 0 && f->tnt_n == 0 && nx->kind == NX_PGD)
				/* "TIP.PGD is generated by the branch that leaves the traced region",
				 * a conditional one too: no TNT bit then */
				return disable_at_branch(f, run, at, next);
			if (bit < 0)
				goto no_decision;
			ev_set(run, PTREC_BR_JCC, at, bit ? b->dest[1] : next, f->tnt_tflags,
			       f->tnt_tsc);
			run->offset = f->tnt_off;
			if (bit)
				run->ev.flags |= PTREC_BRF_TAKEN;
			f->ip = bit ? b->dest[1] : next;
			f->no_progress = 0;
			if (b->succ[bit] < 0) {
				int32_t s = blk_get(f, f->ip, f->mode);
				if (s < 0)
					return s;
				b = &f->blk[bi]; /* blk_get may have moved the array */
				f->blk[bi].succ[bit] = s;
			}
			f->cur_blk = f->blk[bi].succ[bit];
			return 1;
		case X86_IC_JMP:
		case X86_IC_CALL:
			if (f->tnt_n == 0 && nx->kind == NX_PGD &&
			    ((nx->has_ip && nx->ip == b->dest[1]) ||
			     (!nx->has_ip && (f->errata & PT_ERRATUM_SKL014))))
				return disable_at_branch(f, run, at, next);
			ev_set(run, b->iclass == X86_IC_JMP ? PTREC_BR_JMP : PTREC_BR_CALL, at, b->dest[1],
			       f->tnt_tflags, f->tnt_tsc);
			run->offset = f->tnt_off;
			if (b->iclass == X86_IC_CALL)
				call_push(f, b);
			f->ip = b->dest[1];
			if (b->succ[1] < 0) {
				int32_t s = blk_get(f, f->ip, f->mode);
				if (s < 0)
					return s;
				f->blk[bi].succ[1] = s;
			}
			f->cur_blk = f->blk[bi].succ[1];
			return 1;
		case X86_IC_RET:
			if (f->tnt_n || (nx->kind == NX_NONE && (pt_flow_lookahead(f, 0), f->tnt_n))) {
				bit = tnt_pop(f);
				uint64_t to;
				if (!bit) {
					run->ninsn = b->ninsn - 1; /* the return is not reported */
					run->last_iclass = X86_IC_OTHER;
					pt_flow_gap(f, run, at, -PTREC_ESTATE, "compressed return not taken",
					    f->tnt_off, RESYNC_AT_IP);
					return 1;
				}
				if (ret_pop(f, &to)) {
					run->ninsn = b->ninsn - 1; /* the return is not reported */
					run->last_iclass = X86_IC_OTHER;
					pt_flow_gap(f, run, at, -PTREC_ESTATE, "compressed return with empty stack",
					    f->tnt_off, RESYNC_AT_IP);
					return 1;
				}
				ev_set(run, PTREC_BR_RET, at, to, f->tnt_tflags, f->tnt_tsc);
				run->ev.flags |= PTREC_BRF_COMPRESSED_RET;
				run->offset = f->tnt_off;
				f->ip = to;
				f->no_progress = 0;
				int32_t s = blk_get(f, to, f->mode);
				if (s < 0)
					return s;
				f->blk[bi].succ_ind = s;
				f->cur_blk = s;
				return 1;
			}
			/* An uncompressed return takes a TIP, like the indirect branches. */
			/* fall through */
		default: /* JMP_IND, CALL_IND, RET (TIP), FAR */
			if (nx->kind == NX_NONE)
				pt_flow_lookahead(f, 1);
			nx = &f->nx;
			if (nx->kind == NX_TIP) {
				if (!nx->has_ip) {
					pt_flow_gap(f, run, at, -PTREC_EFORMAT, "TIP without IP", nx->off,
					    RESYNC_AT_IP);
					f->nx.kind = NX_NONE;
					return 1;
				}
				unsigned kind = b->iclass == X86_IC_RET ? PTREC_BR_RET
				              : b->iclass == X86_IC_JMP_IND ? PTREC_BR_IND_JMP
				              : b->iclass == X86_IC_CALL_IND ? PTREC_BR_IND_CALL
				              : PTREC_BR_FAR;
				ev_set(run, kind, at, nx->ip, nx->tflags, nx->tsc);
				run->offset = nx->off;
				if (b->iclass == X86_IC_CALL_IND)
					ret_push(f, next);
				f->ip = nx->ip;
				pt_flow_apply_mode(f, nx);
				pt_flow_release_br_held(f, 0);
				nx->kind = NX_NONE;
				f->no_progress = 0;
				if (f->blk[bi].succ_ind >= 0 &&
				    f->blk[f->blk[bi].succ_ind].start == f->ip &&
				    f->blk[f->blk[bi].succ_ind].mode == f->mode) {
					f->cur_blk = f->blk[bi].succ_ind;
				} else {
					int32_t s = blk_get(f, f->ip, f->mode);
					if (s < 0)
						return s;
					f->blk[bi].succ_ind = s;
					f->cur_blk = s;
				}
				return 1;
			}
			if (nx->kind == NX_PGD) {
				if (b->iclass == X86_IC_CALL_IND)
					ret_push(f, next);
				return disable_at_branch(f, run, at, next);
			}
			goto no_decision;
		}
	no_decision:
		/* The branch at the end of the block cannot be resolved: it is not reported. */
		run->ninsn = b->ninsn - 1;
		run->last_iclass = X86_IC_OTHER;
		f->ip = at;
		nx = &f->nx;
		if (nx->kind == NX_END)
			return end_of_trace(f, run);
		if (nx->kind == NX_SYNC_OFF) {
			pt_flow_stop_at_sync(f, nx->psb_off);
			return 1;
		}
		if (nx->kind == NX_OVF) {
			bind_overflow(f, run);
			return 1;
		}
		/* The packets do not give where the branch went; the code up to it needs none, so
		 * it executed (ptxed lists it too): the gap is after it. */
		run->ninsn = b->ninsn;
		run->last_iclass = b->iclass;
		pt_flow_mismatch(f, run, at, b->iclass == X86_IC_JCC ? "conditional branch without TNT bit"
		                     : b->iclass == X86_IC_RET ? "return without TNT bit or TIP"
		                     : "indirect branch without TIP");
		return 1;
	}
}

/* Handles the states other than ST_ENABLED.  Returns 1 with a run, 0 at the end, or -1 to go
 * on (state changed). */
/* A TNT or TIP while tracing is off (after a TIP.PGD, a PSB+ without FUP, an OVF that no FUP
 * followed): both are sent only while PacketEn=1 (SDM 36.4.2.1 and 36.4.2.2, "Dependencies:
 * PacketEn"), so tracing was on and the flow does not know where: a gap (ptxed's "unexpected
 * packet context"), then the resync (pt_flow_step_resync) from the packet read, which stays the
 * look-ahead item. */
static void context_error(struct ptrec_pt_flow *f, struct ptrec_pt_flow_run *run, uint64_t off)
{
	pt_flow_gap(f, run, 0, -PTREC_ESTATE, "unexpected packet context (TNT or TIP while tracing "
	            "is off)", off, RESYNC_AT_IP);
}

static int step_other(struct ptrec_pt_flow *f, struct ptrec_pt_flow_run *run)
{
	switch (f->state) {
	case ST_END:
		return 0;
	case ST_SYNC: {
		long off = ptrec_pt_packet_find_psb(f->buf, f->len, f->pos);
		if (off < 0) {
			f->stats.skipped += f->len - f->pos;
			f->pos = f->len;
			f->state = ST_END;
			if (!f->synced_once) {
				f->synced_once = 1;
				pt_flow_gap(f, run, 0, -PTREC_ENOSYNC, "no PSB in the trace", 0, f->len);
				f->state = ST_END;
				return 1;
			}
			return 0;
		}
		f->stats.skipped += (uint64_t)off - f->pos;
		f->pos = (size_t)off;
		if (f->first_sync < 0 && f->stop_sync && (size_t)off >= f->stop_sync) {
			f->state = ST_END; /* nothing to sync at before the stop */
			return 0;
		}
		f->synced_once = 1;
		f->nx.kind = NX_NONE;
		f->tnt_n = 0;
		f->ret_n = 0;
		f->has_pending_mode = 0;
		f->cur_blk = -1;
		int have_fup;
		uint64_t ip = 0;
		int e = pt_flow_psb_plus(f, &have_fup, &ip);
		if (e == 1) {
			f->state = ST_END;
			return 0;
		}
		if (e < 0) {
			f->pos = (size_t)off + 1; /* skip this PSB, try the next one */
			return -1;
		}
		f->no_progress = 0;
		if (have_fup) {
			f->ip = ip;
			f->state = ST_ENABLED;
		} else {
			f->state = ST_DISABLED;
		}
		pt_flow_psb_reached(f, (uint64_t)off);
		if (f->first_sync < 0) {
			f->first_sync = off;
			pt_flow_key_take(f, &f->key_first);
		} else if (pt_flow_stop_at_sync(f, (uint64_t)off)) {
			return 0;
		}
		if (f->gap_open) { /* after an error of the packets: decoding resumes here */
			f->gap_open = 0;
			pt_flow_aux_push(f, PT_FLOW_AUX_RESYNC, (uint64_t)off,
			                 (uint64_t)off > f->gap_off ? (uint64_t)off - f->gap_off : 0,
			                 have_fup ? ip : 0);
		}
		return -1;
	}
	case ST_DISABLED: {
		struct nx *nx = &f->nx;
		if (!f->tnt_off_state)
			f->tnt_n = 0; /* bits from before tracing went off (dropped with it) */
		pt_flow_lookahead(f, 0);
		if (f->tnt_n)
			f->tnt_off_state = 1; /* a TNT packet while tracing is off */
		if (f->aux_n || f->ptw_n || f->trig_n)
			return -1; /* items read before the look-ahead item come first */
		if (f->tnt_off_state) {
			f->tnt_off_state = 0;
			context_error(f, run, f->tnt_off);
			return 1;
		}
		switch (nx->kind) {
		case NX_NONE:
			return -1;
		case NX_TIP: /* a TIP while tracing is off: decoding may resume there */
			context_error(f, run, nx_at(nx));
			return 1;
		case NX_FUP_AUX: /* nothing executes: they happen now */
			nx->kind = NX_NONE;
			pt_flow_release_fup_held(f, nx->ip);
			return -1;
		case NX_SYNC:
			if ((f->errata & PT_ERRATUM_BDM70) && pt_flow_peek(f, f->pos) == PT_PKT_TIP_PGE) {
				nx->kind = NX_NONE; /* BDM70: FUP in PSB+ although tracing is off */
				return -1;
			}
			if (f->ovf_lost_ip) { /* SKD010: the PSB+ after an OVF without FUP resumes */
				f->ovf_lost_ip = 0;
				f->ip = nx->ip;
				f->state = ST_ENABLED;
				f->cur_blk = -1;
				nx->kind = NX_NONE;
				pt_flow_psb_reached(f, nx->psb_off);
				pt_flow_stop_at_sync(f, nx->psb_off);
				return -1;
			}
			/* fall through */
		case NX_PGE: {
			int sync = nx->kind == NX_SYNC;
			ev_set(run, PTREC_BR_ENABLE, 0, nx->ip, nx->tflags, nx->tsc);
			run->offset = nx->off;
			if (f->has_resume_ip && f->resume_ip == nx->ip && !sync)
				run->flags |= PT_FLOW_RUN_RESUMED;
			f->has_resume_ip = 0;
			f->ovf_lost_ip = 0;
			f->ip = nx->ip;
			if (nx->has_mode)
				pt_flow_apply_mode(f, nx);
			else if (f->has_pending_mode) {
				f->mode = f->pending_mode;
				f->mode_known = 1;
				f->has_pending_mode = 0;
			}
			nx->kind = NX_NONE;
			f->state = ST_ENABLED;
			/* the block there when it is cached: the hot paths may go on from it */
			f->cur_blk = blk_find(f, f->ip, f->mode);
			if (sync) {
				pt_flow_psb_reached(f, nx->psb_off);
				pt_flow_stop_at_sync(f, nx->psb_off); /* after this ENABLE, if it is the stop */
			}
			return 1;
		}
		case NX_OVF:
			bind_overflow(f, run);
			return 1;
		case NX_END:
			f->state = ST_END;
			return 0;
		case NX_SYNC_OFF:
			pt_flow_stop_at_sync(f, nx->psb_off);
			return 0;
		case NX_ERR:
			pt_flow_gap(f, run, 0, nx->err, nx->why, nx->off, (size_t)nx->off + 1);
			return 1;
		default: /* TIP, PGD, FUP pairs while disabled: nothing executes */
			nx->kind = NX_NONE;
			return -1;
		}
	}
	case ST_RESYNC:
		return pt_flow_step_resync(f, run);
	default:
		return -1;
	}
}

int pt_flow_next_run_slow(struct ptrec_pt_flow *f, struct ptrec_pt_flow_run *run)
{
	*run = (struct ptrec_pt_flow_run){0};
	/* Bounded: each non-returning pass consumes trace bytes or changes state. */
	for (;;) {
		int r;
		ptw_seek(f);
		if (f->trig_n && f->state != ST_ENABLED)
			pt_flow_trig_flush(f);
		if (pt_flow_ptw_due(f)) {
			run->aux = PT_FLOW_AUX_PTW;
			run->aux_payload = f->ptw[f->ptw_head];
			run->aux_ip = f->ptw_sought ? 0 : f->ptw_ip[f->ptw_head]; /* from a FUP */
			run->ip = f->ip;
			run->mode = f->mode;
			f->ptw_head = (f->ptw_head + 1) % PTW_QUEUE;
			f->ptw_n--;
			f->ptw_done = f->ptw_sought = f->ptw_resumed = 0;
			return 1;
		}
		if (f->aux_n) {
			const struct aux_item *a = &f->aux[f->aux_head];
			*run = (struct ptrec_pt_flow_run){.ip = f->ip, .mode = f->mode, .aux = a->kind,
			                                  .aux_payload = a->payload, .aux_arg = a->arg,
			                                  .aux_ip = a->ip};
			f->aux_head = (f->aux_head + 1) % AUX_QUEUE;
			f->aux_n--;
			return 1;
		}
		if (f->state == ST_ENABLED) {
			r = walk(f, run);
			if (r < 0)
				return r;
			if (r == 2)
				continue; /* items come first: delivered above */
			if (r == 0 && run->ninsn == 0 && run->ev.kind == PTREC_BR_NONE)
				return 0;
			r = 1;
		} else {
			r = step_other(f, run);
			if (r < 0)
				continue;
		}
		if (r > 0) {
			f->stats.insns += run->ninsn;
			if (run->ev.kind != PTREC_BR_NONE)
				f->stats.events++;
			if (run->ninsn == 0 && run->ev.kind == PTREC_BR_NONE && run->aux == 0) {
				if (f->state == ST_END)
					return 0;
				continue;
			}
		}
		return r;
	}
}
