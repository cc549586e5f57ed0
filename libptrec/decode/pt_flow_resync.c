/* pt_flow_resync.c — the PT flow decoder after an error (pt_flow_resync.h): gaps, the resync at
 * the next PSB or at the next packet that gives an IP, and the errata the walk asks about
 * (BDM64, SKD022).  Which errata a CPU has is pt_flow_errata.c's. */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "decode/pt_flow_blk.h"
#include "decode/pt_flow_query.h"
#include "decode/pt_flow_resync.h"


/* Turns the current situation into a GAP event and schedules a resync.  off is where the
 * problem is; resync starts at resync_from: the next PSB from there, or with RESYNC_AT_IP the
 * next packet that gives an IP. */
void pt_flow_gap(struct ptrec_pt_flow *f, struct ptrec_pt_flow_run *run, uint64_t from, int err,
                const char *why, uint64_t off, size_t resync_from)
{
	unsigned tflags = ptrec_pt_time_now(&f->time, &run->ev.timestamp);
	ev_set(run, PTREC_BR_GAP, from, 0, tflags, run->ev.timestamp);
	run->ev.reason = (uint16_t)(err < 0 ? -err : err);
	run->why = why;
	run->offset = off;
	f->stats.gaps++;
	f->gap_open = 1;
	f->gap_off = off;
	f->tnt_lost = f->tnt_n != 0; /* (bits queued for code now unknown) */
	f->br_held_n = 0; /* the branch they bind to is lost (ptxed drops them too) */
	f->evd_pending = 0;
	if (resync_from == RESYNC_AT_IP) {
		/* The packets are still in step: items held for a FUP happen at that FUP's IP,
		 * where the resync resumes. */
		f->state = ST_RESYNC;
	} else {
		f->fup_held_n = 0;
		f->state = ST_SYNC;
		f->pos = resync_from;
		f->nx.kind = NX_NONE;
	}
	f->tnt_n = 0;
	f->tnt = 0;
	f->ret_n = 0;
	f->cur_blk = -1;
}

/* The look-ahead item could not serve the decision the code asks for. */
void pt_flow_mismatch(struct ptrec_pt_flow *f, struct ptrec_pt_flow_run *run, uint64_t from, const char *why)
{
	struct nx *nx = &f->nx;
	if (nx->kind == NX_ERR)
		pt_flow_gap(f, run, from, nx->err, nx->why, nx->off, (size_t)nx->off + 1);
	else {
		pt_flow_gap(f, run, from, -PTREC_ESTATE,
		    nx->kind == NX_SYNC ? "PSB+ IP not reached by the code" : why, nx->off,
		    RESYNC_AT_IP);
		run->offset = nx_at(nx); /* reported where the decoder is (nx_at); the skipped
		                            bytes count from nx->off, the first packet not used */
	}
}

/* BDM64 ("an incorrect FUP IP may be recorded on a TSX abort right after a branch"): 1 if
 * target cannot be reached from f->ip by straight-line code, i.e. the abort's FUP disagrees
 * with where the last branch went; the abort then binds where the flow is. */
int pt_flow_bdm64(struct ptrec_pt_flow *f, uint64_t target)
{
	uint64_t ip = f->ip;
	for (int i = 0; i < 4; i++) {
		int32_t bi = blk_get(f, ip, f->mode);
		if (bi < 0)
			return 0;
		const struct blk *b = &f->blk[bi];
		uint64_t a = b->start;
		for (uint32_t k = 0; k < b->ninsn; k++) {
			if (a == target)
				return 0;
			a += b->len[k];
		}
		if (b->end == BLK_ERROR)
			return 0; /* no code there: the usual error, not the erratum */
		if (b->end != BLK_OPEN && b->end != BLK_CR3)
			return 1;
		ip = b->dest[0];
	}
	return 0;
}

/* SKD022: "a VM entry that clears TraceEn may generate a FUP before the TIP.PGD": a FUP
 * + TIP.PGD at a VMLAUNCH/VMRESUME is then the disable of that (executed) instruction. */
int pt_flow_skd022(struct ptrec_pt_flow *f, const struct nx *nx)
{
	uint8_t b[3];
	return nx->kind == NX_FUP_PGD && (f->errata & PT_ERRATUM_SKD022) &&
	       ptrec_pt_img_read(f->image, nx->ip, b, 3) == 3 && b[0] == 0x0f && b[1] == 0x01 &&
	       (b[2] == 0xc2 || b[2] == 0xc3);
}

/* The resync found where decoding resumes after the open gap: the RESYNC item (at ip, 0: none;
 * the packet at off), before what that packet says.  Returns 1 with it in run. */
static int resync_item(struct ptrec_pt_flow *f, struct ptrec_pt_flow_run *run, uint64_t ip,
                       uint64_t off)
{
	uint64_t skipped = off > f->gap_off ? off - f->gap_off : 0;
	f->gap_open = 0;
	f->stats.skipped += skipped;
	*run = (struct ptrec_pt_flow_run){.ip = ip, .mode = f->mode, .aux = PT_FLOW_AUX_RESYNC,
	                                  .aux_payload = off, .aux_arg = skipped, .aux_ip = ip};
	return 1;
}

/* ST_RESYNC: after an error of the flow (no code image at an IP, a packet the code does not
 * call for, a bad compressed return, a bad status update in PSB+, a packet that needs tracing
 * on while it is off, ...) the packets are still in step, so the next one that says where
 * execution is ends the gap: a TIP's target, a FUP + TIP (an asynchronous event in the gap:
 * reported, from the FUP's IP to the TIP's), a FUP bound to PTWRITE/MODE.TSX/MODE.Exec/EXSTOP
 * (what they say happens there), a PSB+ FUP; a TIP.PGE, TIP.PGD or OVF says that tracing went
 * on or off.  TNT bits before it are dropped (the code they belong to is unknown), and once
 * some are, a TIP is no resume point: SDM 36.4.2.3, "The processor may opt to defer sending
 * out the TNT when TIPs are generated ... Any number of TIP packets may be accumulated this
 * way, such that only once the TNT is filled, or once another packet (e.g., FUP) is generated,
 * the TNT will be sent, followed by all the deferred TIP packets": the dropped bits may be those
 * of the branches after that TIP's target.  The packets that force them out (FUP, TIP.PGD,
 * TIP.PGE, OVF, PSB) are.  (libipt's pt_insn_resync, ptxed --resync-on-error, resumes at the
 * TIP: "This may lead to subsequent errors when synchronizing at a deferred TIP".)  A RESYNC
 * item says where the gap ended, before what that packet says.  Returns like step_other. */
int pt_flow_step_resync(struct ptrec_pt_flow *f, struct ptrec_pt_flow_run *run)
{
	if (f->tnt_n)
		f->tnt_lost = 1;
	f->tnt_n = 0;
	pt_flow_lookahead(f, 0);
	if (f->aux_n || pt_flow_ptw_due(f))
		return -1; /* items read before the look-ahead item come first */
	struct nx *nx = &f->nx;
	uint64_t ip;
	if (f->ptw_n && f->ptw_ip[f->ptw_head] && !f->ptw_done && !f->ptw_resumed) {
		/* the FUP of a PTW, read before the look-ahead item: execution was at that
		 * PTWRITE (and goes on from there to what the look-ahead item says); once only:
		 * when the flow fails there too, the payload is delivered (pt_flow_ptw_due) */
		ip = f->ptw_ip[f->ptw_head];
		if (f->gap_open)
			return resync_item(f, run, ip, f->ptw_fup_off);
		f->ptw_resumed = 1;
		f->ip = ip;
		f->state = ST_ENABLED;
		f->cur_blk = -1;
		f->no_progress = 0;
		return -1;
	}
	switch (nx->kind) {
	case NX_NONE:
		return -1; /* a TNT packet was read (and dropped) */
	case NX_TIP:
	case NX_FUP_TIP:
		if (nx->kind == NX_TIP ? !nx->has_ip : !nx->has_ip2) {
			nx->kind = NX_NONE;
			return -1;
		}
		if (nx->kind == NX_TIP && f->tnt_lost) { /* maybe deferred: see above */
			pt_flow_apply_mode(f, nx); /* (a MODE.Exec before it changed the mode) */
			nx->kind = NX_NONE;
			return -1;
		}
		ip = nx->kind == NX_TIP ? nx->ip : nx->ip2;
		if (f->gap_open)
			return resync_item(f, run, ip, nx->off);
		if (nx->kind == NX_FUP_TIP) { /* SDM: the FUP gives the IP the event happened at */
			ev_set(run, nx->abort ? PTREC_BR_TSX_ABORT : PTREC_BR_INTERRUPT, nx->ip, ip,
			       nx->tflags, nx->tsc);
			run->offset = nx->off;
			if (nx->abort)
				f->spec = 0;
			pt_flow_apply_mode(f, nx);
			pt_flow_release_br_held(f, 1);
			nx->kind = NX_NONE;
			f->ip = ip;
			f->state = ST_ENABLED;
			f->cur_blk = -1;
			f->no_progress = 0;
			return 1;
		}
		pt_flow_apply_mode(f, nx);
		break;
	case NX_FUP_AUX:
		ip = nx->ip;
		if (f->gap_open)
			return resync_item(f, run, ip, nx->off);
		pt_flow_release_fup_held(f, ip);
		break;
	case NX_SYNC:
		ip = nx->ip;
		f->psb_mode_bad = 0; /* the flow takes PSB+'s state here */
		if (f->gap_open)
			return resync_item(f, run, ip, nx->off);
		pt_flow_psb_reached(f, nx->psb_off);
		if (pt_flow_stop_at_sync(f, nx->psb_off)) {
			nx->kind = NX_NONE;
			return -1;
		}
		break;
	case NX_PGD:
	case NX_FUP_PGD: { /* tracing went off somewhere in the gap */
		if (f->gap_open)
			return resync_item(f, run, 0, nx->off);
		int fup = nx->kind == NX_FUP_PGD;
		uint64_t to = fup ? (nx->has_ip2 ? nx->ip2 : 0) : (nx->has_ip ? nx->ip : 0);
		ev_set(run, PTREC_BR_DISABLE, fup ? nx->ip : 0, to, nx->tflags, nx->tsc);
		run->offset = nx->off;
		nx->kind = NX_NONE;
		f->state = ST_DISABLED;
		f->has_resume_ip = 0;
		return 1;
	}
	case NX_PGE:
	case NX_OVF:
		if (f->gap_open) /* decoding resumes at the enable, or where the OVF's FUP says */
			return resync_item(f, run, nx->has_ip ? nx->ip : 0, nx->off);
		if (nx->kind == NX_PGE) { /* SDM: TIP.PGE "indicates that tracing was enabled";
		                              so it was off somewhere in the gap: a DISABLE there */
			ev_set(run, PTREC_BR_DISABLE, 0, 0, nx->tflags, nx->tsc);
			run->offset = nx->off;
			f->state = ST_DISABLED; /* the ENABLE comes next */
			f->has_resume_ip = 0;
			return 1;
		}
		/* fall through */
	case NX_END:
	case NX_SYNC_OFF:
	case NX_ERR:
		f->state = ST_DISABLED; /* handled there: an enable, an overflow, the end, ... */
		return -1;
	default: /* NX_FUP_END */
		f->state = ST_END;
		return 0;
	}
	nx->kind = NX_NONE;
	f->ip = ip;
	f->state = ST_ENABLED;
	f->cur_blk = -1;
	f->no_progress = 0;
	return -1;
}
