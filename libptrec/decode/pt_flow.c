/* pt_flow.c — Intel PT instruction flow decoder with a basic-block cache.
 *
 * Structure: a packet cursor with one item of look-ahead (the next non-TNT packet that matters:
 * TIP, TIP.PGE, TIP.PGD, FUP pair, PSB+ sync point, OVF, end, error) and a TNT queue; a block
 * cache (straight-line code up to and including the next branch, keyed by address and mode,
 * with cached successors); and the walker that moves from block to block consuming TNT bits and
 * IP packets.  See pt_flow.h for the semantics.
 *
 * This file holds the packet cursor, the general walk and the run interfaces; the state is in
 * pt_flow_state.h, the hot paths in pt_flow_fast.h, the block cache in pt_flow_blk.c,
 * ptrec_pt_flow_count and its chain cache in pt_flow_chain.c, the errata in pt_flow_errata.c. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "decode/pt_flow_fast.h"

/* ---- lifecycle -------------------------------------------------------------------------- */

static void cache_flush(struct ptrec_pt_flow *f)
{
	f->nblk = 0;
	f->retire = f->nchunk; /* freed at the next call: runs may still point there */
	f->chunk_used = CHUNK_SIZE;
	if (f->hash)
		memset(f->hash, 0xff, ((size_t)f->hash_mask + 1) * sizeof(*f->hash));
	pt_flow_chain_clear(f);
	f->cur_blk = -1;
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
	cache_flush(f);
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

/* ---- packets ---------------------------------------------------------------------------- */

static int ret_pop(struct ptrec_pt_flow *f, uint64_t *ip)
{
	if (!f->ret_n)
		return -1;
	f->ret_top = (f->ret_top + RETSTACK_SIZE - 1) % RETSTACK_SIZE;
	f->ret_n--;
	*ip = f->ret[f->ret_top];
	return 0;
}

static uint8_t exec_mode(uint32_t sub)
{
	if (sub & 1)
		return X86_MODE_64;
	return (sub & 2) ? X86_MODE_32 : X86_MODE_16;
}

static void set_err(struct ptrec_pt_flow *f, uint64_t off, int err, const char *why)
{
	f->nx.kind = NX_ERR;
	f->nx.err = err;
	f->nx.why = why;
	f->nx.off = off;
}

/* Reads one packet at pos.  Returns its size, 0 at the end of the trace (a partial packet at the
 * very end counts as the end), or a negative error. */
static int read_pkt(struct ptrec_pt_flow *f, struct ptrec_pt_packet *pkt)
{
	if (f->pos >= f->len)
		return 0;
	int n = ptrec_pt_packet_decode(f->buf + f->pos, f->len - f->pos, &f->ctx, pkt);
	if (n == -PTREC_ETRUNC)
		return 0;
	if (n <= 0)
		return n < 0 ? n : -PTREC_EFORMAT;
	/* SKD007: an OVF may replace the bytes after the first of a multi-byte CYC. */
	if (pkt->type == PT_PKT_CYC && n >= 2 && (f->errata & PT_ERRATUM_SKD007) &&
	    f->pos + 2 < f->len && f->buf[f->pos + 1] == 0x02 && f->buf[f->pos + 2] == 0xf3)
		return 1;
	return n;
}

/* Queues an auxiliary item for delivery (dropped when the queue is full). */
static void aux_push(struct ptrec_pt_flow *f, unsigned kind, uint64_t payload, uint64_t arg,
                     uint64_t ip)
{
	if (f->aux_n >= AUX_QUEUE)
		return;
	struct aux_item *a = &f->aux[(f->aux_head + f->aux_n) % AUX_QUEUE];
	a->kind = (uint8_t)kind;
	a->payload = payload;
	a->arg = arg;
	a->ip = ip;
	f->aux_n++;
}

/* Holds an item until its FUP (fup) or its branch (br). */
static void aux_hold(struct aux_item *held, unsigned *n, unsigned kind, uint64_t payload,
                     uint64_t arg)
{
	if (*n >= AUX_HELD)
		return;
	held[*n] = (struct aux_item){(uint8_t)kind, payload, arg, 0};
	(*n)++;
}

/* A PWRE read while an MWAIT or EXSTOP waited for its FUP is the C-state entry of that
 * MWAIT: it comes after them (once execution stopped there), or, when an OVF lost their FUP,
 * where the OVF is.  Empties the held items. */
static void release_held_pwre(struct ptrec_pt_flow *f)
{
	for (unsigned i = 0; i < f->fup_held_n; i++) {
		const struct aux_item *a = &f->fup_held[i];
		if (a->kind == PT_FLOW_AUX_PWRE)
			aux_push(f, a->kind, a->payload, a->arg, 0);
	}
	f->fup_held_n = 0;
}

/* An OVF lost the FUP the held items waited for: a PWRE is reported, then an MWAIT and an
 * EXSTOP without IP (they did happen; only where is lost); the others are dropped. */
static void release_held_lost_fup(struct ptrec_pt_flow *f)
{
	unsigned n = f->fup_held_n;
	release_held_pwre(f);
	for (unsigned i = 0; i < n; i++) {
		const struct aux_item *a = &f->fup_held[i];
		if (a->kind == PT_FLOW_AUX_MWAIT || a->kind == PT_FLOW_AUX_EXSTOP)
			aux_push(f, a->kind, a->payload, a->arg, 0);
	}
}

/* The FUP the held items waited for came: they happen at ip, before the instruction there.
 * A MODE.TSX begin or commit changes whether what follows is speculative. */
static void release_fup_held(struct ptrec_pt_flow *f, uint64_t ip)
{
	for (unsigned i = 0; i < f->fup_held_n; i++) {
		const struct aux_item *a = &f->fup_held[i];
		if (a->kind == PT_FLOW_AUX_TSX)
			f->spec = (uint8_t)a->payload;
		if (a->kind != PT_FLOW_AUX_PWRE)
			aux_push(f, a->kind, a->payload, a->arg, ip);
	}
	release_held_pwre(f);
}

/* The branch the held PIP/VMCS belonged to was delivered (async: an interrupt or an
 * asynchronous disable, which report the VMCS first). */
static void release_br_held(struct ptrec_pt_flow *f, int async)
{
	for (int pass = 0; pass < 2; pass++)
		for (unsigned i = 0; i < f->br_held_n; i++) {
			const struct aux_item *a = &f->br_held[i];
			if (async && (pass == 0) != (a->kind == PT_FLOW_AUX_VMCS))
				continue;
			if (!async && pass == 1)
				continue;
			aux_push(f, a->kind, a->payload, a->arg, 0);
		}
	f->br_held_n = 0;
}

/* A MOV CR3 executed: the oldest PIP waiting for its instruction belongs to it. */
static void release_one_pip(struct ptrec_pt_flow *f)
{
	for (unsigned i = 0; i < f->br_held_n; i++) {
		const struct aux_item *a = &f->br_held[i];
		if (a->kind != PT_FLOW_AUX_PAGING)
			continue;
		aux_push(f, a->kind, a->payload, a->arg, 0);
		memmove(&f->br_held[i], &f->br_held[i + 1], (f->br_held_n - i - 1) * sizeof(*a));
		f->br_held_n--;
		return;
	}
}

/* A MODE.Exec outside PSB+ took effect at the branch or enable just delivered. */
static void apply_mode(struct ptrec_pt_flow *f, const struct nx *nx)
{
	if (!nx->has_mode)
		return;
	f->mode = nx->new_mode;
	aux_push(f, PT_FLOW_AUX_EXEC_MODE, nx->new_mode, 0, 0);
}

static unsigned peek_flow_pkt(const struct ptrec_pt_flow *f, size_t pos);
static uint64_t straight_walk(const struct ptrec_pt_flow *f, uint64_t ip, unsigned mode,
                              unsigned n, int ptwrite);

/* TRIG without IP: the trigger fired ICNT instructions after its anchor (the last IP packet,
 * the end of the last TNT's branches when one came after it, or the previous TRIG); it is due
 * when the flow reaches the IP that many instructions on.
 * Without ICNT, while tracing is off, or when code that needs a packet lies in between, it is
 * delivered where it is read. */
static void trig_add(struct ptrec_pt_flow *f, const struct ptrec_pt_packet *pkt)
{
	uint64_t ip = 0;
	/* A TNT read after the anchor's packet reported later branches: with all its bits used
	 * the flow is right after the last of them, and ICNT counts from there. */
	if (f->state == ST_ENABLED && f->trig_anchor && !f->tnt_n &&
	    f->tnt_off > f->trig_anchor_off)
		f->trig_anchor = f->ip;
	if ((pkt->sub & 0x10000u) && (pkt->sub & 0xffffu) <= STRAIGHT_MAX &&
	    f->state == ST_ENABLED && f->trig_anchor && f->trig_n < TRIG_QUEUE)
		ip = straight_walk(f, f->trig_anchor, f->mode, pkt->sub & 0xffffu, 0);
	if (!ip) {
		aux_push(f, PT_FLOW_AUX_TRIG, pkt->payload, pkt->payload2, 0);
		return;
	}
	f->trig_anchor = ip;
	f->trig_anchor_off = f->pos;
	unsigned i = (f->trig_head + f->trig_n++) % TRIG_QUEUE;
	f->trig[i].ip = ip;
	f->trig[i].trbv = pkt->payload;
	f->trig[i].mult = pkt->payload2;
}

/* Delivers the oldest waiting TRIG (the flow is at its IP). */
static void trig_release(struct ptrec_pt_flow *f)
{
	unsigned i = f->trig_head;
	aux_push(f, PT_FLOW_AUX_TRIG, f->trig[i].trbv, f->trig[i].mult, f->trig[i].ip);
	f->trig_head = (i + 1) % TRIG_QUEUE;
	f->trig_n--;
}

/* The flow will not get to the waiting TRIGs' IPs (tracing went off, an overflow): deliver
 * them now. */
static void trig_flush(struct ptrec_pt_flow *f)
{
	while (f->trig_n)
		trig_release(f);
}

/* Decodes into *pkt, without consuming, the first packet at or after pos that skip() does
 * not pass over; 0 at the end of the trace or at a bad packet.  Every step moves forward. */
static int first_pkt(const struct ptrec_pt_flow *f, size_t pos,
                     int (*skip)(const struct ptrec_pt_flow *, const struct ptrec_pt_packet *),
                     struct ptrec_pt_packet *pkt)
{
	enum ptrec_pt_packet_ctx ctx = f->ctx;
	while (pos < f->len) {
		int n = ptrec_pt_packet_decode(f->buf + pos, f->len - pos, &ctx, pkt);
		if (n <= 0)
			return 0;
		if (!skip(f, pkt))
			return 1;
		pos += (size_t)n;
	}
	return 0;
}

/* Status and timing packets, which say nothing of the flow (and APL11's spurious TIP.PGD
 * after OVF). */
static int skip_status(const struct ptrec_pt_flow *f, const struct ptrec_pt_packet *pkt)
{
	switch (pkt->type) {
	case PT_PKT_PAD: case PT_PKT_TSC: case PT_PKT_MTC: case PT_PKT_TMA: case PT_PKT_CYC:
	case PT_PKT_CBR: case PT_PKT_MNT: case PT_PKT_PIP: case PT_PKT_VMCS:
	case PT_PKT_MODE_EXEC: case PT_PKT_MODE_TSX: case PT_PKT_PWRE: case PT_PKT_PWRX:
	case PT_PKT_MWAIT: case PT_PKT_EXSTOP:
		return 1;
	case PT_PKT_TIP_PGD:
		return (f->errata & PT_ERRATUM_APL11) != 0;
	default:
		return 0;
	}
}

/* What may stand between an MWAIT and the EXSTOP of its stop: timing, PAD, MNT, PWRE. */
static int skip_to_stop(const struct ptrec_pt_flow *f, const struct ptrec_pt_packet *pkt)
{
	(void)f;
	switch (pkt->type) {
	case PT_PKT_PAD: case PT_PKT_TSC: case PT_PKT_MTC: case PT_PKT_TMA: case PT_PKT_CYC:
	case PT_PKT_CBR: case PT_PKT_MNT: case PT_PKT_PWRE:
		return 1;
	default:
		return 0;
	}
}

/* 1 if the next packet at or after pos, past timing, PAD, MNT and PWRE packets, is an
 * EXSTOP with IP=1: the stop whose FUP gives the IP of an MWAIT or PWRE read before pos. */
static int exstop_ip_follows(const struct ptrec_pt_flow *f, size_t pos)
{
	struct ptrec_pt_packet pkt;
	return first_pkt(f, pos, skip_to_stop, &pkt) && pkt.type == PT_PKT_EXSTOP && pkt.ip_bit;
}

/* Applies a status-only packet (in_psb: inside PSB+, where PIP and VMCS only refresh the
 * state).  Returns 1 if pkt was one, else 0.  f->pos is at pkt. */
static int status_pkt(struct ptrec_pt_flow *f, const struct ptrec_pt_packet *pkt, int in_psb)
{
	switch (pkt->type) {
	case PT_PKT_PAD:
	case PT_PKT_PSBEND:
	case PT_PKT_BBP:
	case PT_PKT_BIP:
	case PT_PKT_EVD:
		return 1;
	case PT_PKT_MWAIT: /* binds to the IP of the FUP after the EXSTOP that follows */
		if (exstop_ip_follows(f, f->pos + pkt->size))
			aux_hold(f->fup_held, &f->fup_held_n, PT_FLOW_AUX_MWAIT,
			         pkt->payload & 0xffffffffu, pkt->payload >> 32);
		else /* no EXSTOP.IP, so no FUP of its own: it has no IP */
			aux_push(f, PT_FLOW_AUX_MWAIT, pkt->payload & 0xffffffffu, pkt->payload >> 32, 0);
		return 1;
	case PT_PKT_PWRE: {
		/* The C-state entry of an MWAIT or EXSTOP (IP=1) waiting for its FUP, or of the
		 * EXSTOP (IP=1) that follows: it comes after them, where execution stopped
		 * (release_held_pwre). */
		int stop = !in_psb && exstop_ip_follows(f, f->pos + pkt->size);
		for (unsigned i = 0; i < f->fup_held_n && !in_psb && !stop; i++)
			stop = f->fup_held[i].kind == PT_FLOW_AUX_MWAIT ||
			       f->fup_held[i].kind == PT_FLOW_AUX_EXSTOP;
		if (stop)
			aux_hold(f->fup_held, &f->fup_held_n, PT_FLOW_AUX_PWRE, pkt->sub,
			         pkt->payload2);
		else
			aux_push(f, PT_FLOW_AUX_PWRE, pkt->sub, pkt->payload2, 0);
		return 1;
	}
	case PT_PKT_PWRX:
		aux_push(f, PT_FLOW_AUX_PWRX, pkt->payload2, 0, 0);
		return 1;
	case PT_PKT_TRACESTOP:
		aux_push(f, PT_FLOW_AUX_STOP, 0, 0, 0);
		return 1;
	case PT_PKT_MNT:
		aux_push(f, PT_FLOW_AUX_MNT, pkt->payload, 0, 0);
		return 1;
	case PT_PKT_TSC:
	case PT_PKT_MTC:
	case PT_PKT_TMA:
	case PT_PKT_CYC:
	case PT_PKT_CBR:
		ptrec_pt_time_update(&f->time, pkt);
		if (pkt->type == PT_PKT_CBR && !in_psb) /* a frequency change (in PSB+ it only
		                                            * restates the ratio) */
			aux_push(f, PT_FLOW_AUX_CBR, pkt->payload, 0, 0);
		return 1;
	case PT_PKT_PIP:
	case PT_PKT_VMCS: {
		unsigned kind = pkt->type == PT_PKT_PIP ? PT_FLOW_AUX_PAGING : PT_FLOW_AUX_VMCS;
		uint64_t arg = pkt->type == PT_PKT_PIP ? pkt->payload2 : 0;
		if (pkt->type == PT_PKT_PIP)
			f->cr3 = pkt->payload;
		else
			f->vmcs = pkt->payload;
		if (in_psb)
			return 1;
		if (f->state == ST_ENABLED) /* the SDM binds it to the far branch or async event */
			aux_hold(f->br_held, &f->br_held_n, kind, pkt->payload, arg);
		else
			aux_push(f, kind, pkt->payload, arg, 0);
		return 1;
	}
	case PT_PKT_MODE_EXEC: {
		unsigned iflag = (pkt->sub >> 2) & 1, changed = iflag != f->iflag;
		f->iflag = (uint8_t)iflag;
		/* Event trace: an instruction that changes RFLAGS.IF (STI, CLI, POPF) gives a
		 * MODE.Exec with the new IF and then a FUP with the IP where it took effect; the
		 * execution mode is the same and that FUP starts no asynchronous event.  (A far
		 * branch's MODE.Exec comes before its TIP, an interrupt's after its FUP.) */
		if (!in_psb && changed && peek_flow_pkt(f, f->pos + pkt->size) == PT_PKT_FUP) {
			f->fup_skip = 1;
			aux_hold(f->fup_held, &f->fup_held_n, PT_FLOW_AUX_IFLAGS, iflag, 0);
			return 1;
		}
		f->pending_mode = exec_mode(pkt->sub);
		f->has_pending_mode = 1;
		return 1;
	}
	case PT_PKT_MODE_TSX:
		f->in_tx = pkt->sub & 1;
		if (!in_psb && f->state != ST_ENABLED && f->nx.kind != NX_OVF) {
			/* tracing off: no FUP follows; the state holds from the next TIP.PGE on */
			f->spec = pkt->sub & 1;
			aux_push(f, PT_FLOW_AUX_TSX, (pkt->sub & 2) ? 2 : pkt->sub & 1, 0, 0);
		} else if (pkt->sub & 2) {
			f->tsx_abort = 1;
		} else {
			f->fup_skip = 1;
			if (!in_psb)
				aux_hold(f->fup_held, &f->fup_held_n, PT_FLOW_AUX_TSX, pkt->sub & 1, 0);
		}
		return 1;
	case PT_PKT_PTW:
		f->ptw_fup = 0;
		if (f->ptw_n < PTW_QUEUE) {
			f->ptw[(f->ptw_head + f->ptw_n) % PTW_QUEUE] = pkt->payload;
			f->ptw_ip[(f->ptw_head + f->ptw_n) % PTW_QUEUE] = 0;
			f->ptw_n++;
			f->ptw_fup = pkt->ip_bit;
		}
		if (pkt->ip_bit)
			f->fup_skip = 1;
		return 1;
	case PT_PKT_EXSTOP:
		if (pkt->ip_bit) {
			f->fup_skip = 1;
			aux_hold(f->fup_held, &f->fup_held_n, PT_FLOW_AUX_EXSTOP, 0, 0);
		} else {
			aux_push(f, PT_FLOW_AUX_EXSTOP, 0, 0, 0);
		}
		return 1;
	case PT_PKT_TRIG:
		if (pkt->ip_bit) { /* a FUP follows: the IP of the triggering instruction */
			f->fup_skip = 1;
			if (!in_psb)
				aux_hold(f->fup_held, &f->fup_held_n, PT_FLOW_AUX_TRIG, pkt->payload,
				         pkt->payload2);
		} else if (!in_psb) {
			trig_add(f, pkt);
		}
		return 1;
	case PT_PKT_BEP:
	case PT_PKT_CFE:
		if (pkt->ip_bit)
			f->fup_skip = 1;
		return 1;
	default:
		return 0;
	}
}

/* Decodes the IP of an IP packet into *ip.  Returns 1 with an IP, 0 when suppressed, or
 * -PTREC_EFORMAT. */
static int pkt_ip(struct ptrec_pt_flow *f, const struct ptrec_pt_packet *pkt, uint64_t *ip)
{
	int e = ptrec_pt_last_ip_update(&f->last_ip, pkt, ip);
	if (e == -PTREC_ENOMAP)
		return 0;
	if (e < 0)
		return -PTREC_EFORMAT;
	f->trig_anchor = *ip;
	f->trig_anchor_off = f->pos;
	return 1;
}

/* Processes PSB+ starting at the PSB at pos.  Sets have_fup and fup.  Returns 0, 1 if the trace
 * ended inside it, 2 if an OVF ended it (pos is at the OVF: "an overflow inside PSB+ ends it;
 * no PSBEND follows"), or a negative error (pos is then at the bad packet). */
static int psb_plus(struct ptrec_pt_flow *f, int *have_fup, uint64_t *fup)
{
	struct ptrec_pt_packet pkt;
	*have_fup = 0;
	int n = read_pkt(f, &pkt);
	if (n <= 0 || pkt.type != PT_PKT_PSB)
		return n == 0 ? 1 : -PTREC_EFORMAT;
	f->pos += (size_t)n;
	f->last_ip = 0;
	f->ctx = PT_CTX_NONE;
	f->fup_skip = 0;
	f->tsx_abort = 0;
	f->has_pending_mode = 0;
	f->fup_held_n = f->br_held_n = 0;
	ptrec_pt_time_psb(&f->time); /* the TSC in PSB+ starts the time again */
	for (;;) {
		n = read_pkt(f, &pkt);
		if (n == 0)
			return 1;
		if (n < 0)
			return n;
		switch (pkt.type) {
		case PT_PKT_PSBEND:
			f->pos += (size_t)n;
			f->spec = f->in_tx; /* MODE.TSX in PSB+ says whether execution is in a
			                       transaction there */
			return 0;
		case PT_PKT_FUP: {
			uint64_t ip;
			int e = pkt_ip(f, &pkt, &ip);
			if (e < 0)
				return e;
			if (e > 0) {
				*have_fup = 1;
				*fup = ip;
			}
			break;
		}
		case PT_PKT_MODE_EXEC:
			f->mode = exec_mode(pkt.sub);
			f->has_pending_mode = 0;
			break;
		case PT_PKT_MODE_TSX:
			f->in_tx = pkt.sub & 1;
			break;
		case PT_PKT_OVF:
			f->spec = f->in_tx;
			ptrec_pt_time_update(&f->time, &pkt);
			return 2;
		case PT_PKT_PSB:
		case PT_PKT_TNT:
		case PT_PKT_TIP:
		case PT_PKT_TIP_PGE:
		case PT_PKT_TIP_PGD:
			return -PTREC_EFORMAT;
		default:
			status_pkt(f, &pkt, 1);
			break;
		}
		f->pos += (size_t)n;
	}
}

static void psb_reached(struct ptrec_pt_flow *f, uint64_t psb_off);

/* The type of the first packet at or after pos that is not a status or timing packet
 * (PT_PKT_INVALID at the end or at a bad packet); reads without consuming. */
static unsigned peek_flow_pkt(const struct ptrec_pt_flow *f, size_t pos)
{
	struct ptrec_pt_packet pkt;
	return first_pkt(f, pos, skip_status, &pkt) ? pkt.type : (unsigned)PT_PKT_INVALID;
}

/* After OVF: 1 if a FUP (or, with SKD010, a TIP) says where execution resumes. */
static int ovf_fup_follows(struct ptrec_pt_flow *f)
{
	unsigned t = peek_flow_pkt(f, f->pos);
	return t == PT_PKT_FUP || (t == PT_PKT_TIP && (f->errata & PT_ERRATUM_SKD010));
}

/* Reads packets until the look-ahead item is known or, unless want_tip, a TNT packet was
 * queued.  Bounded by the trace length: every iteration consumes at least one byte or stops. */
void pt_flow_lookahead(struct ptrec_pt_flow *f, int want_tip)
{
	struct ptrec_pt_packet pkt;
	if (f->nx.kind == NX_NONE)
		memset(&f->nx, 0, sizeof(f->nx));
	while (f->nx.kind == NX_NONE) {
		uint64_t off = f->pos;
		int n = read_pkt(f, &pkt);
		if (n == 0) {
			f->nx.kind = NX_END;
			f->nx.cut = off < f->len;
			f->nx.off = off;
			nx_time(f);
			return;
		}
		if (n < 0) {
			set_err(f, off, -PTREC_EFORMAT, "bad packet");
			return;
		}
		switch (pkt.type) {
		case PT_PKT_TNT:
			if (f->tnt_n + pkt.tnt_count > 64) {
				if (want_tip)
					set_err(f, off, -PTREC_ESTATE, "more than 64 TNT bits before a TIP");
				return;
			}
			f->tnt = (f->tnt << pkt.tnt_count) |
			         (pkt.payload & ((1ull << pkt.tnt_count) - 1));
			f->tnt_n += pkt.tnt_count;
			f->pos += (size_t)n;
			f->no_progress = 0;
			f->tnt_tflags = (uint8_t)ptrec_pt_time_now(&f->time, &f->tnt_tsc);
			f->tnt_off = off;
			if (!want_tip)
				return;
			continue;
		case PT_PKT_TIP:
		case PT_PKT_TIP_PGE:
		case PT_PKT_TIP_PGD: {
			uint64_t ip = 0;
			int e = pkt_ip(f, &pkt, &ip);
			if (e < 0) {
				set_err(f, off, e, "bad IP compression");
				return;
			}
			f->pos += (size_t)n;
			f->no_progress = 0;
			f->nx.kind = pkt.type == PT_PKT_TIP ? NX_TIP
			           : pkt.type == PT_PKT_TIP_PGE ? NX_PGE : NX_PGD;
			f->nx.has_ip = e > 0;
			f->nx.ip = ip;
			f->nx.off = off;
			f->nx.has_mode = f->has_pending_mode;
			f->nx.new_mode = f->pending_mode;
			if (pkt.type != PT_PKT_TIP_PGD)
				f->has_pending_mode = 0;
			nx_time(f);
			if (pkt.type == PT_PKT_TIP_PGE && !f->nx.has_ip)
				set_err(f, off, -PTREC_EFORMAT, "TIP.PGE without IP");
			return;
		}
		case PT_PKT_FUP: {
			uint64_t ip;
			int e = pkt_ip(f, &pkt, &ip);
			if (e <= 0) {
				set_err(f, off, -PTREC_EFORMAT, e < 0 ? "bad IP compression"
				                                      : "FUP without IP");
				return;
			}
			f->pos += (size_t)n;
			f->no_progress = 0;
			if (f->fup_skip) { /* bound to PTW/TSX/EXSTOP/...: nothing else to do */
				if (f->ptw_fup) /* the PTWRITE's own IP: deliver it there */
					f->ptw_ip[(f->ptw_head + f->ptw_n - 1) % PTW_QUEUE] = ip;
				f->ptw_fup = 0;
				f->fup_skip = 0;
				if (f->fup_held_n) { /* what they say happens at ip */
					f->nx.kind = NX_FUP_AUX;
					f->nx.ip = ip;
					f->nx.has_ip = 1;
					f->nx.off = off;
					nx_time(f);
					return;
				}
				continue;
			}
			/* An asynchronous event: FUP then TIP or TIP.PGD. */
			f->nx.ip = ip;
			f->nx.off = off;
			f->nx.abort = f->tsx_abort;
			f->tsx_abort = 0;
			nx_time(f);
			for (;;) {
				uint64_t off2 = f->pos;
				n = read_pkt(f, &pkt);
				if (n == 0) {
					f->nx.kind = NX_FUP_END;
					return;
				}
				if (n < 0) {
					set_err(f, off2, -PTREC_EFORMAT, "bad packet");
					return;
				}
				if (pkt.type == PT_PKT_TIP || pkt.type == PT_PKT_TIP_PGD) {
					uint64_t to = 0;
					e = pkt_ip(f, &pkt, &to);
					if (e < 0) {
						set_err(f, off2, e, "bad IP compression");
						return;
					}
					f->pos += (size_t)n;
					f->nx.kind = pkt.type == PT_PKT_TIP ? NX_FUP_TIP : NX_FUP_PGD;
					f->nx.has_ip2 = e > 0;
					f->nx.ip2 = to;
					f->nx.has_mode = f->has_pending_mode;
					f->nx.new_mode = f->pending_mode;
					if (pkt.type == PT_PKT_TIP)
						f->has_pending_mode = 0;
					if (pkt.type == PT_PKT_TIP && !f->nx.has_ip2)
						set_err(f, off2, -PTREC_EFORMAT, "async branch TIP without IP");
					return;
				}
				if (!status_pkt(f, &pkt, 0) || pkt.type == PT_PKT_PTW) {
					set_err(f, off2, -PTREC_ESTATE, "FUP not followed by TIP or TIP.PGD");
					return;
				}
				f->pos += (size_t)n;
			}
		}
		case PT_PKT_PSB: {
			int have_fup;
			uint64_t ip = 0;
			int e = psb_plus(f, &have_fup, &ip);
			if (e == 1) {
				f->nx.kind = NX_END;
				f->nx.off = off;
				nx_time(f);
				return;
			}
			if (e < 0) {
				set_err(f, f->pos, e, "bad packet in PSB+");
				return;
			}
			f->no_progress = 0;
			if (have_fup && e != 2) { /* (an OVF ends PSB+: what it said is lost) */
				f->nx.kind = NX_SYNC;
				f->nx.ip = ip;
				f->nx.has_ip = 1;
				f->nx.off = off;
				f->nx.psb_off = off;
				nx_time(f);
				return;
			}
			/* Tracing is off here. */
			psb_reached(f, off);
			if (f->stop_sync && (size_t)off >= f->stop_sync) {
				f->nx.kind = NX_SYNC_OFF;
				f->nx.off = off;
				f->nx.psb_off = off;
				return;
			}
			continue;
		}
		case PT_PKT_OVF: {
			f->pos += (size_t)n;
			f->no_progress = 0;
			f->nx.kind = NX_OVF;
			f->nx.off = off;
			f->nx.has_ip = 0;
			f->nx.ip = 0;
			release_held_lost_fup(f);
			nx_time(f);
			ptrec_pt_time_update(&f->time, &pkt);
			if (!ovf_fup_follows(f))
				return; /* what follows OVF comes after the overflow */
			/* What follows says where execution resumes. */
			for (;;) {
				uint64_t off2 = f->pos;
				n = read_pkt(f, &pkt);
				if (n <= 0)
					return; /* end or error: reported when read again */
				if (pkt.type == PT_PKT_FUP || (pkt.type == PT_PKT_TIP &&
				                               (f->errata & PT_ERRATUM_SKD010))) {
					uint64_t ip;
					int e = pkt_ip(f, &pkt, &ip);
					if (e <= 0)
						return;
					f->pos += (size_t)n;
					if (pkt.type == PT_PKT_FUP && (f->errata & PT_ERRATUM_APL12) &&
					    peek_flow_pkt(f, f->pos) == PT_PKT_TIP_PGE)
						return; /* APL12: tracing is off; the FUP was spurious */
					f->nx.has_ip = 1;
					f->nx.ip = ip;
					f->nx.has_mode = f->has_pending_mode;
					f->nx.new_mode = f->pending_mode;
					f->has_pending_mode = 0;
					f->fup_skip = 0;
					return;
				}
				if (pkt.type == PT_PKT_TIP_PGD && (f->errata & PT_ERRATUM_APL11)) {
					f->pos += (size_t)n;
					continue;
				}
				if (pkt.type == PT_PKT_PTW || !status_pkt(f, &pkt, 0))
					return; /* TIP.PGE, PSB, ...: handled in the following state */
				(void)off2;
				f->pos += (size_t)n;
			}
		}
		default:
			if (!status_pkt(f, &pkt, 0)) {
				set_err(f, off, -PTREC_EFORMAT, "unknown packet");
				return;
			}
			f->pos += (size_t)n;
			continue;
		}
	}
}

/* ---- segments ----------------------------------------------------------------------------- */

static void key_take(const struct ptrec_pt_flow *f, struct flow_key *k)
{
	memset(k, 0, sizeof(*k));
	k->valid = 1;
	k->state = f->state;
	k->ip = f->state == ST_ENABLED ? f->ip : 0;
	k->last_ip = f->last_ip;
	k->mode = f->mode;
	k->has_pending_mode = f->has_pending_mode;
	k->pending_mode = f->has_pending_mode ? f->pending_mode : 0;
	k->fup_skip = f->fup_skip;
	k->tsx_abort = f->tsx_abort;
	k->in_tx = f->in_tx;
	k->tnt_n = f->tnt_n;
	k->ret_n = f->ret_n;
	k->ptw_n = f->ptw_n;
	k->aux_n = f->aux_n;
	k->tnt_tsc = f->tnt_tsc;
	k->tnt_tflags = f->tnt_tflags;
	k->time = f->time;
}

/* Execution reached the PSB+ at psb_off: what happens from here depends only on PSB+ (its
 * state was applied when it was read).  Direct branches from here on carry its time. */
static void psb_reached(struct ptrec_pt_flow *f, uint64_t psb_off)
{
	f->ret_n = 0; /* only calls after a PSB can be returned to by compressed RETs */
	f->tnt_tflags = (uint8_t)ptrec_pt_time_now(&f->time, &f->tnt_tsc);
	f->tnt_off = psb_off;
}

/* A PSB+ at psb_off was just bound: stop there if it is at or after stop_sync.  Returns 1 if
 * the decoder stopped (state ST_END). */
static int stop_at_sync(struct ptrec_pt_flow *f, uint64_t psb_off)
{
	if (!f->stop_sync || psb_off < f->stop_sync)
		return 0;
	key_take(f, &f->key_stop);
	f->stopped = 1;
	f->state = ST_END;
	f->cur_blk = -1;
	return 1;
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
	f->ptw_fup = f->ptw_done = f->ptw_sought = 0;
	f->trig_head = f->trig_n = 0;
	f->trig_anchor = f->trig_anchor_off = 0;
	f->aux_head = f->aux_n = 0;
	f->fup_held_n = f->br_held_n = 0;
	f->spec = f->ovf_lost_ip = f->has_resume_ip = f->pgd_split = 0;
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

/* ---- the walk --------------------------------------------------------------------------- */

static void ev_set(struct ptrec_pt_flow_run *run, unsigned kind, uint64_t from, uint64_t to,
                   unsigned tflags, uint64_t tsc)
{
	run->ev.kind = (uint8_t)kind;
	run->ev.from = from;
	run->ev.to = to;
	run->ev.flags = (uint8_t)tflags;
	run->ev.timestamp = (tflags & PTREC_BRF_HAS_TIME) ? tsc : 0;
}

/* gap()'s resync_from for errors of the flow (not of the packets): the packet stream is
 * intact, so decoding resumes at the next packet that gives an IP (ST_RESYNC), the look-ahead
 * item included. */
#define RESYNC_AT_IP SIZE_MAX

/* Turns the current situation into a GAP event and schedules a resync.  off is where the
 * problem is; resync starts at resync_from: the next PSB from there, or with RESYNC_AT_IP the
 * next packet that gives an IP. */
static void gap(struct ptrec_pt_flow *f, struct ptrec_pt_flow_run *run, uint64_t from, int err,
                const char *why, uint64_t off, size_t resync_from)
{
	unsigned tflags = ptrec_pt_time_now(&f->time, &run->ev.timestamp);
	ev_set(run, PTREC_BR_GAP, from, 0, tflags, run->ev.timestamp);
	run->ev.reason = (uint16_t)(err < 0 ? -err : err);
	run->why = why;
	run->offset = off;
	f->stats.gaps++;
	f->fup_held_n = f->br_held_n = 0;
	if (resync_from == RESYNC_AT_IP) {
		f->state = ST_RESYNC;
	} else {
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
static void mismatch(struct ptrec_pt_flow *f, struct ptrec_pt_flow_run *run, uint64_t from, const char *why)
{
	struct nx *nx = &f->nx;
	if (nx->kind == NX_ERR)
		gap(f, run, from, nx->err, nx->why, nx->off, (size_t)nx->off + 1);
	else if (nx->kind == NX_SYNC)
		gap(f, run, from, -PTREC_ESTATE, "PSB+ IP not reached by the code", nx->off,
		    RESYNC_AT_IP);
	else
		gap(f, run, from, -PTREC_ESTATE, why, nx->off, RESYNC_AT_IP);
}

static void bind_overflow(struct ptrec_pt_flow *f, struct ptrec_pt_flow_run *run)
{
	struct nx *nx = &f->nx;
	ev_set(run, PTREC_BR_OVERFLOW, f->state == ST_ENABLED ? f->ip : 0,
	       nx->has_ip ? nx->ip : 0, nx->tflags, nx->tsc);
	run->offset = nx->off;
	f->stats.overflows++;
	trig_flush(f);
	f->tnt_n = 0;
	f->tnt = 0;
	f->ret_n = 0;
	f->cur_blk = -1;
	if (nx->has_ip) {
		f->ip = nx->ip;
		if (nx->has_mode)
			f->mode = nx->new_mode;
		f->state = ST_ENABLED;
		release_fup_held(f, nx->ip); /* MODE.TSX before the resume FUP */
	} else {
		f->ovf_lost_ip = (f->errata & PT_ERRATUM_SKD010) != 0;
		f->state = ST_DISABLED;
	}
	nx->kind = NX_NONE;
}

/* BDM64 ("an incorrect FUP IP may be recorded on a TSX abort right after a branch"): 1 if
 * target cannot be reached from f->ip by straight-line code, i.e. the abort's FUP disagrees
 * with where the last branch went; the abort then binds where the flow is. */
static int bdm64_unreachable(struct ptrec_pt_flow *f, uint64_t target)
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
		nx->kind = NX_NONE;
		psb_reached(f, nx->psb_off);
		return stop_at_sync(f, nx->psb_off);
	case NX_FUP_TIP:
		ev_set(run, nx->abort ? PTREC_BR_TSX_ABORT : PTREC_BR_INTERRUPT, nx->ip, nx->ip2,
		       nx->tflags, nx->tsc);
		run->offset = nx->off;
		f->ip = nx->ip2;
		if (nx->abort)
			f->spec = 0;
		apply_mode(f, nx);
		release_br_held(f, 1);
		f->cur_blk = -1;
		nx->kind = NX_NONE;
		return 1;
	case NX_FUP_PGD:
		if (nx->abort) {
			/* A transaction abort that also disables tracing: the abort happened at
			 * ip (its FUP), then tracing went off; say both, in that order. */
			nx->abort = 0;
			f->spec = 0;
			aux_push(f, PT_FLOW_AUX_TSX, 2, 0, nx->ip);
			return 0;
		}
		ev_set(run, PTREC_BR_DISABLE, nx->ip, nx->has_ip2 ? nx->ip2 : 0, nx->tflags, nx->tsc);
		run->offset = nx->off;
		release_br_held(f, 1);
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
		release_fup_held(f, nx->ip);
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

/* 1 if the oldest queued PTWRITE payload is due now: its PTWRITE (the IP its FUP gave) was
 * just reported, its IP is unknown, or tracing is not on. */
static int ptw_due(const struct ptrec_pt_flow *f);

/* Follows code that needs no packet (straight line, direct JMP/CALL) from ip: returns the
 * address of the first PTWRITE (ptwrite != 0) or the address reached after n instructions;
 * 0 if a branch that needs a packet, or no code, comes first. */
static uint64_t straight_walk(const struct ptrec_pt_flow *f, uint64_t ip, unsigned mode,
                              unsigned n, int ptwrite)
{
	for (unsigned i = 0; i <= STRAIGHT_MAX; i++) {
		if (!ptwrite && i == n)
			return ip;
		uint8_t b[15];
		struct ptrec_x86_insn insn;
		size_t got = ptrec_pt_img_read(f->image, ip, b, sizeof(b));
		int len = ptrec_x86_ild_decode(b, got, ip, (enum ptrec_x86_mode)mode, &insn);
		if (len <= 0)
			return 0;
		if (ptwrite && insn.iclass == X86_IC_PTWRITE)
			return ip;
		if (insn.iclass == X86_IC_OTHER || insn.iclass == X86_IC_PTWRITE)
			ip += (uint64_t)len;
		else if ((insn.iclass == X86_IC_JMP || insn.iclass == X86_IC_CALL) &&
		         (insn.flags & X86_INSN_HAS_TARGET))
			ip = insn.target;
		else
			return 0;
	}
	return 0;
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
	f->ptw_ip[f->ptw_head] = straight_walk(f, f->ip, f->mode, 0, 1);
}

static int ptw_due(const struct ptrec_pt_flow *f)
{
	if (!f->ptw_n)
		return 0;
	return f->ptw_done || !f->ptw_ip[f->ptw_head] || f->state != ST_ENABLED;
}

/* SKD022: "a VM entry that clears TraceEn may generate a FUP before the TIP.PGD": a FUP
 * + TIP.PGD at a VMLAUNCH/VMRESUME is then the disable of that (executed) instruction. */
static int skd022(struct ptrec_pt_flow *f, const struct nx *nx)
{
	uint8_t b[3];
	return nx->kind == NX_FUP_PGD && (f->errata & PT_ERRATUM_SKD022) &&
	       ptrec_pt_img_read(f->image, nx->ip, b, 3) == 3 && b[0] == 0x0f && b[1] == 0x01 &&
	       (b[2] == 0xc2 || b[2] == 0xc3);
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
	 * apply at the TIP.PGD's IP: after the DISABLE, release_br_held(f, 1)). */
	if (f->br_held_n && !f->pgd_split) {
		f->pgd_split = 1;
		f->pgd_at = at;
		f->pgd_fall = fall;
		release_br_held(f, 0);
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
	release_br_held(f, 0);
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
		if (f->aux_n || ptw_due(f))
			return 2; /* deliver them (and due PTWRITE payloads) before the code */
		if (f->trig_n && f->trig[f->trig_head].ip == f->ip) {
			trig_release(f); /* before anything bound at this IP read after it */
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
			if (nx->kind == NX_SYNC_OFF) {
				stop_at_sync(f, nx->psb_off);
				return 0;
			}
			if ((f->errata & PT_ERRATUM_BDM64) && nx->abort && nx->ip != f->ip &&
			    (nx->kind == NX_FUP_TIP || nx->kind == NX_FUP_PGD) &&
			    bdm64_unreachable(f, nx->ip))
				f->ip = nx->ip;
			if (nx_is_ip_event(nx->kind) && nx->ip == f->ip && !skd022(f, nx)) {
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
				apply_mode(f, nx);
				release_br_held(f, 0);
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
			gap(f, run, f->ip, -PTREC_ESTATE, "no packet consumed for too long", f->pos,
			    RESYNC_AT_IP);
			return 1;
		}

		/* The block at ip. */
		if (ptrec_pt_img_generation(f->image) != f->image_gen || f->nblk + 2 > BLK_CACHE_MAX) {
			cache_flush(f);
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
		    nx->ip == BLK_END_IP(b) && skd022(f, nx)) {
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

		if (b->end == BLK_ERROR) {
			gap(f, run, BLK_END_IP(b), b->err,
			    b->err == -PTREC_ENOMAP ? "no code image at IP" : "undecodable instruction",
			    f->pos, RESYNC_AT_IP);
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
			release_one_pip(f);
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
					gap(f, run, at, -PTREC_ESTATE, "compressed return not taken",
					    f->tnt_off, RESYNC_AT_IP);
					return 1;
				}
				if (ret_pop(f, &to)) {
					run->ninsn = b->ninsn - 1; /* the return is not reported */
					run->last_iclass = X86_IC_OTHER;
					gap(f, run, at, -PTREC_ESTATE, "compressed return with empty stack",
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
					gap(f, run, at, -PTREC_EFORMAT, "TIP without IP", nx->off,
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
				apply_mode(f, nx);
				release_br_held(f, 0);
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
			stop_at_sync(f, nx->psb_off);
			return 1;
		}
		if (nx->kind == NX_OVF) {
			bind_overflow(f, run);
			return 1;
		}
		mismatch(f, run, at, b->iclass == X86_IC_JCC ? "conditional branch without TNT bit"
		                     : b->iclass == X86_IC_RET ? "return without TNT bit or TIP"
		                     : "indirect branch without TIP");
		return 1;
	}
}

/* ST_RESYNC: after an error of the flow (no code image at an IP, a packet the code does not
 * call for, a bad compressed return, ...) the packets are still in step, so the next one that
 * says where execution is ends the gap: a TIP's target, the TIP after a FUP, a FUP bound to
 * PTWRITE/MODE.TSX/EXSTOP, a PSB+ FUP; a TIP.PGE or TIP.PGD says that tracing was off.  TNT
 * bits before it are dropped (the code they belong to is unknown).  Returns like step_other. */
static int step_resync(struct ptrec_pt_flow *f, struct ptrec_pt_flow_run *run)
{
	f->tnt_n = 0;
	pt_flow_lookahead(f, 0);
	if (f->aux_n || f->ptw_n || f->trig_n)
		return -1; /* items read before the look-ahead item come first */
	struct nx *nx = &f->nx;
	uint64_t ip;
	switch (nx->kind) {
	case NX_NONE:
		return -1; /* a TNT packet was read (and dropped) */
	case NX_TIP:
	case NX_FUP_TIP:
		if (nx->kind == NX_TIP ? !nx->has_ip : !nx->has_ip2) {
			nx->kind = NX_NONE;
			return -1;
		}
		ip = nx->kind == NX_TIP ? nx->ip : nx->ip2;
		apply_mode(f, nx);
		break;
	case NX_FUP_AUX:
		ip = nx->ip;
		release_fup_held(f, ip);
		break;
	case NX_SYNC:
		ip = nx->ip;
		psb_reached(f, nx->psb_off);
		if (stop_at_sync(f, nx->psb_off)) {
			nx->kind = NX_NONE;
			return -1;
		}
		break;
	case NX_PGD:
	case NX_FUP_PGD: { /* tracing went off somewhere in the gap */
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

/* Handles the states other than ST_ENABLED.  Returns 1 with a run, 0 at the end, or -1 to go
 * on (state changed). */
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
				gap(f, run, 0, -PTREC_ENOSYNC, "no PSB in the trace", 0, f->len);
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
		int e = psb_plus(f, &have_fup, &ip);
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
		psb_reached(f, (uint64_t)off);
		if (f->first_sync < 0) {
			f->first_sync = off;
			key_take(f, &f->key_first);
		} else if (stop_at_sync(f, (uint64_t)off)) {
			return 0;
		}
		return -1;
	}
	case ST_DISABLED: {
		f->tnt_n = 0; /* bits while disabled carry no flow */
		pt_flow_lookahead(f, 0);
		if (f->aux_n || f->ptw_n || f->trig_n)
			return -1; /* items read before the look-ahead item come first */
		struct nx *nx = &f->nx;
		switch (nx->kind) {
		case NX_NONE:
			return -1; /* a TNT packet was read (and dropped) */
		case NX_FUP_AUX: /* nothing executes: they happen now */
			nx->kind = NX_NONE;
			release_fup_held(f, nx->ip);
			return -1;
		case NX_SYNC:
			if ((f->errata & PT_ERRATUM_BDM70) && peek_flow_pkt(f, f->pos) == PT_PKT_TIP_PGE) {
				nx->kind = NX_NONE; /* BDM70: FUP in PSB+ although tracing is off */
				return -1;
			}
			if (f->ovf_lost_ip) { /* SKD010: the PSB+ after an OVF without FUP resumes */
				f->ovf_lost_ip = 0;
				f->ip = nx->ip;
				f->state = ST_ENABLED;
				f->cur_blk = -1;
				nx->kind = NX_NONE;
				psb_reached(f, nx->psb_off);
				stop_at_sync(f, nx->psb_off);
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
				apply_mode(f, nx);
			else if (f->has_pending_mode) {
				f->mode = f->pending_mode;
				f->has_pending_mode = 0;
			}
			nx->kind = NX_NONE;
			f->state = ST_ENABLED;
			f->cur_blk = -1;
			if (sync) {
				psb_reached(f, nx->psb_off);
				stop_at_sync(f, nx->psb_off); /* after this ENABLE, if it is the stop */
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
			stop_at_sync(f, nx->psb_off);
			return 0;
		case NX_ERR:
			gap(f, run, 0, nx->err, nx->why, nx->off, (size_t)nx->off + 1);
			return 1;
		default: /* TIP, PGD, FUP pairs while disabled: nothing executes */
			nx->kind = NX_NONE;
			return -1;
		}
	}
	case ST_RESYNC:
		return step_resync(f, run);
	default:
		return -1;
	}
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

int pt_flow_next_run_slow(struct ptrec_pt_flow *f, struct ptrec_pt_flow_run *run)
{
	memset(run, 0, sizeof(*run));
	/* Bounded: each non-returning pass consumes trace bytes or changes state. */
	for (;;) {
		int r;
		ptw_seek(f);
		if (f->trig_n && f->state != ST_ENABLED)
			trig_flush(f);
		if (ptw_due(f)) {
			run->aux = PT_FLOW_AUX_PTW;
			run->aux_payload = f->ptw[f->ptw_head];
			run->aux_ip = f->ptw_sought ? 0 : f->ptw_ip[f->ptw_head]; /* from a FUP */
			run->ip = f->ip;
			run->mode = f->mode;
			f->ptw_head = (f->ptw_head + 1) % PTW_QUEUE;
			f->ptw_n--;
			f->ptw_done = f->ptw_sought = 0;
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
				return next_run_refill(f, run); /* one PTW item: no recursion beyond */
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
	int ret = 0;
	for (unsigned long n = 1;; n++) {
		int e = ptrec_pt_flow_next_run(f, &run); /* the same runs, times ordered the same way */
		if (e <= 0) {
			ret = e;
			break;
		}
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
