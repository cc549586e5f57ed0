/* pt_flow_fast.h — private to the PT flow decoder (pt_flow.c, pt_flow_chain.c): its hot paths,
 * inline: the steps from a cached block that need no general walk (fast_step), the common packets
 * read without the packet decoder (fast_read), runs of conditional branches (jcc_burst).  Each
 * takes a step only where the slow path (pt_flow_walk.c) would take it the same way, and
 * changes nothing where it declines. */
#ifndef PTREC_DECODE_PT_FLOW_FAST_H
#define PTREC_DECODE_PT_FLOW_FAST_H

#include "decode/pt_flow_blk.h"

/* A compressed return on the hot paths (fast_step, chain_step): with the next TNT bit 1 and the
 * return stack not empty, pops both and returns the cached block of the return address (in
 * *to), or returns -1 and changes nothing (a 0 bit, an empty stack or a block not cached: the
 * general walk handles it). */
static inline __attribute__((always_inline)) int32_t compressed_ret(struct ptrec_pt_flow *f,
                                                                   uint64_t *to)
{
	if (!f->tnt_n || !((f->tnt >> (f->tnt_n - 1)) & 1) || !f->ret_n)
		return -1;
	unsigned top = (f->ret_top + RETSTACK_SIZE - 1) % RETSTACK_SIZE;
	int32_t next = ind_succ(f, f->ret[top]);
	if (next < 0)
		return -1;
	*to = f->ret[top];
	f->tnt_n--;
	f->ret_top = top;
	f->ret_n--;
	f->no_progress = 0;
	return next;
}

/* The hot path: the current block is cached and its final branch can be resolved without the
 * general walk: a conditional branch or compressed return with TNT bits queued, a direct
 * jump/call, or an indirect branch whose TIP is the look-ahead item, with the successor block
 * cached.  Either TNT bits are queued or the look-ahead item is a TIP, so no IP-bound event,
 * overflow or disable can bind in this block; or it is a TIP.PGD that a direct jump/call at
 * the end of the block does not take (it binds to a later branch).  Fills the whole run and
 * returns 1 (the caller counts it in the stats), or returns 0 without changing anything when
 * the general walk must handle the step. */
static inline __attribute__((always_inline)) int fast_step(struct ptrec_pt_flow *f,
                                                         struct ptrec_pt_flow_run *run)
{
	const struct blk *b = &f->blk[f->cur_blk];
	struct nx *nx = &f->nx;
	int32_t next;
	uint64_t to, tsc = f->tnt_tsc, off = f->tnt_off;
	unsigned kind, flags = f->tnt_tflags;
	int tip = nx->kind == NX_TIP;
	/* The most frequent case first, outside the switch (its jump table predicts badly). */
	if (b->iclass == X86_IC_JCC && f->tnt_n) {
		unsigned bit = (unsigned)(f->tnt >> (f->tnt_n - 1)) & 1;
		next = b->succ[bit];
		if (next < 0)
			return 0;
		f->tnt_n--;
		to = b->dest[bit];
		kind = PTREC_BR_JCC;
		flags |= bit ? PTREC_BRF_TAKEN : 0;
		f->no_progress = 0;
		goto out;
	}
	if (b->end != BLK_BRANCH)
		return 0;
	if (!f->tnt_n && !tip) {
		/* A direct jump or call before the TIP.PGD read ahead, when the TIP.PGD is not
		 * its own (another target, or none and no SKL014): the general walk takes it as
		 * with a TIP read (a call to a PLT stub whose indirect jump leaves the traced
		 * region). */
		if (nx->kind != NX_PGD || (b->iclass != X86_IC_JMP && b->iclass != X86_IC_CALL) ||
		    (nx->has_ip ? nx->ip == b->dest[1] : (f->errata & PT_ERRATUM_SKL014) != 0))
			return 0;
	}
	switch (b->iclass) {
	case X86_IC_JCC: /* with a TNT bit queued it was taken above */
		return 0;
	case X86_IC_JMP:
	case X86_IC_CALL:
		next = b->succ[1];
		if (next < 0 || f->no_progress >= NO_PROGRESS_LIMIT)
			return 0;
		f->no_progress++;
		to = b->dest[1];
		if (b->iclass == X86_IC_CALL) {
			call_push(f, b);
			kind = PTREC_BR_CALL;
		} else {
			kind = PTREC_BR_JMP;
		}
		break;
	case X86_IC_RET:
		if (f->tnt_n) {
			next = compressed_ret(f, &to);
			if (next < 0)
				return 0;
			kind = PTREC_BR_RET;
			flags |= PTREC_BRF_COMPRESSED_RET;
			break;
		}
		/* An uncompressed return takes the TIP. */
		/* fall through */
	case X86_IC_JMP_IND:
	case X86_IC_CALL_IND:
	case X86_IC_FAR:
		/* (the general walk delivers held PIP/VMCS items here) */
		if (!tip || !nx->has_ip || nx->has_mode || f->br_held_n)
			return 0;
		to = nx->ip;
		next = ind_succ(f, to);
		if (next < 0)
			return 0;
		kind = b->iclass == X86_IC_RET ? PTREC_BR_RET
		     : b->iclass == X86_IC_JMP_IND ? PTREC_BR_IND_JMP
		     : b->iclass == X86_IC_CALL_IND ? PTREC_BR_IND_CALL : PTREC_BR_FAR;
		if (b->iclass == X86_IC_CALL_IND)
			ret_push(f, b->dest[0]);
		flags = nx->tflags;
		tsc = nx->tsc;
		off = nx->off;
		nx->kind = NX_NONE;
		f->no_progress = 0;
		break;
	default:
		return 0;
	}
out:
	run->ip = b->start;
	run->ninsn = b->ninsn;
	run->mode = b->mode;
	run->last_iclass = b->iclass;
	run->aux = 0;
	run->flags = f->spec ? PT_FLOW_RUN_SPECULATIVE : 0;
	run->len = b->len;
	/* tsc is 0 without PTREC_BRF_HAS_TIME (ptrec_pt_time_now) */
	run->ev = (struct ptrec_branch){BLK_END_IP(b), to, tsc, (uint8_t)kind, (uint8_t)flags, 0, 0};
	run->why = NULL;
	run->offset = off;
	f->ip = to;
	f->cur_blk = next;
	return 1;
}

/* Where pt_flow_lookahead(f, 0) is to read the next packet: first the timing packets the hot paths
 * meet between TNTs and TIPs, one-byte CYCs and MTCs (and PADs), applied to the clock exactly as
 * lookahead applies them (status_pkt; not progress), without the packet decoder. */
static inline __attribute__((always_inline)) void fast_time(struct ptrec_pt_flow *f)
{
	while (f->pos < f->len && f->ctx == PT_CTX_NONE) {
		unsigned b = f->buf[f->pos];
		if ((b & 7) == 3) { /* CYC without Exp: the count is in this byte */
			ptrec_pt_time_cyc(&f->time, b >> 3);
			f->pos++;
		} else if (b == 0x59 && f->len - f->pos >= 2) {
			ptrec_pt_time_mtc(&f->time, f->buf[f->pos + 1]);
			f->pos += 2;
		} else if (b == 0x00) {
			f->pos++;
		} else {
			return;
		}
	}
}

/* The common packet when the TNT queue is empty and nothing is looked ahead: a TNT, short
 * (header bit 0 clear, not PAD 0x00 or the extension prefix 0x02, not a BIP inside a BBP block)
 * or long (02 a3 and 6 payload bytes with a stop bit), queued exactly as pt_flow_lookahead(f, 0) queues
 * it.  Returns 1, or 0 (nothing consumed) for any other packet or the end of the trace. */
static inline __attribute__((always_inline)) int fast_tnt(struct ptrec_pt_flow *f)
{
	if (f->pos >= f->len)
		return 0;
	const uint8_t *p = f->buf + f->pos;
	unsigned b = p[0], cnt, size = 1;
	uint64_t bits;
	if (b == 0x02) {
		if (f->len - f->pos < 8 || p[1] != 0xa3)
			return 0;
		memcpy(&bits, p, 8);
		bits >>= 16; /* the 6 payload bytes, little-endian */
		if (bits < 2)
			return 0; /* no branch bit: lookahead reports the bad packet */
		cnt = 63u - (unsigned)__builtin_clzll(bits);
		size = 8;
	} else {
		if ((b & 1) || b <= 2 || (f->ctx != PT_CTX_NONE && (b & 7) == 4))
			return 0;
		cnt = 30u - (unsigned)__builtin_clz(b); /* bits below the stop bit, 1..6 */
		bits = b >> 1;
	}
	f->tnt = (f->tnt << cnt) | (bits & ((UINT64_C(1) << cnt) - 1));
	f->tnt_n = cnt;
	f->ctx = PT_CTX_NONE;
	f->tnt_off = f->pos;
	f->pos += size;
	f->no_progress = 0;
	f->tnt_tflags = (uint8_t)ptrec_pt_time_now(&f->time, &f->tnt_tsc);
	return 1;
}

/* The other common packet there: a TIP with an IP (IPBytes 1, 2, 3, 4 or 6) and at least 8
 * bytes after its header, made the look-ahead item exactly as pt_flow_lookahead(f, 0) makes it.
 * Returns 1, or 0 (nothing consumed). */
static inline __attribute__((always_inline)) int fast_tip(struct ptrec_pt_flow *f)
{
	/* by IPBytes: the packet's size (0: not here) and the IP bits it gives (the others come
	 * from the last IP, or with IPBytes 3 from sign-extending bit 47) */
	static const uint8_t size[8] = {0, 3, 5, 7, 7, 0, 9, 0};
	static const uint64_t given[8] = {0, 0xffff, 0xffffffff, UINT64_C(0xffffffffffff),
	                                  UINT64_C(0xffffffffffff), 0, ~UINT64_C(0), 0};
	if (f->len - f->pos < 9)
		return 0;
	const uint8_t *p = f->buf + f->pos;
	unsigned ipb = p[0] >> 5;
	if ((p[0] & 0x1f) != 0x0d || !size[ipb])
		return 0;
	uint64_t v;
	memcpy(&v, p + 1, 8);
	uint64_t m = given[ipb];
	v = (f->last_ip & ~m) | (v & m);
	if (ipb == 3) /* (a conditional move, not a jump table over IPBytes) */
		v = (uint64_t)((int64_t)(v << 16) >> 16);
	memset(&f->nx, 0, sizeof(f->nx));
	f->last_ip = v;
	f->trig_anchor = v; /* as pkt_ip */
	f->trig_anchor_off = f->pos;
	f->ctx = PT_CTX_NONE;
	f->nx.kind = NX_TIP;
	f->nx.has_ip = 1;
	f->nx.ip = v;
	f->nx.off = f->pos;
	f->nx.has_mode = f->has_pending_mode;
	f->nx.new_mode = f->pending_mode;
	f->has_pending_mode = 0;
	f->pos += size[ipb];
	f->no_progress = 0;
	nx_time(f);
	return 1;
}

/* The next packet where the TNT queue is empty and nothing is looked ahead, on the hot paths:
 * the timing packets before it (fast_time), then a TNT or a TIP.  Returns 1, or 0 when
 * pt_flow_lookahead(f, 0) must read it. */
static inline __attribute__((always_inline)) int fast_read(struct ptrec_pt_flow *f)
{
	fast_time(f);
	return fast_tnt(f) || fast_tip(f);
}

/* Events come in execution order, so their times must not go back.  A stamp taken at an
 * earlier packet (a direct branch after an indirect one stamped at the TNT before the TIP,
 * branches behind a deferred TIP) is raised to the last event's time; a stamp more than
 * PT_TIME_SLIP behind is a new time (lost trace, a new run) and is kept. */
static inline void order_time(struct ptrec_pt_flow *f, struct ptrec_pt_flow_run *run)
{
	if (!f->raw_time)
		ptrec_pt_flow_order_time(&f->ev_tsc, &run->ev);
}

/* What jcc_burst adds up besides the runs. */
struct jcc_tally {
	uint64_t insns; /* instructions */
	uint64_t taken; /* taken branches */
	uint64_t tsc;   /* the (ordered) time stamp of the last burst's events */
};

/* fast_step for a run of conditional branches with TNT bits queued, the decoder state held in
 * registers: fills runs[n..) up to max while the current block ends with a JCC whose successor
 * for the next bit is cached and bits remain (runs NULL: only counts them).  Every run has the
 * same time stamp, so order_time is applied once.  Returns the new n (n itself when the first
 * successor is not cached); adds to *t. */
static inline __attribute__((always_inline)) size_t jcc_burst(struct ptrec_pt_flow *f,
                                                            struct ptrec_pt_flow_run *runs,
                                                            size_t n, size_t max,
                                                            struct jcc_tally *t)
{
	const struct blk *blk = f->blk;
	int32_t cur = f->cur_blk;
	const struct blk *b = &blk[cur];
	unsigned tn = f->tnt_n, flags = f->tnt_tflags;
	/* the time stamp of events decided by the queued bits, ordered (order_time) after the
	 * last event's; *last is only changed when an event is produced */
	uint64_t last = f->ev_tsc;
	uint64_t tsc = flags & PTREC_BRF_HAS_TIME ? ptrec_pt_time_order(&last, f->tnt_tsc) : f->tnt_tsc;
	uint64_t tnt = f->tnt, off = f->tnt_off, to = f->ip, sum = 0;
	uint64_t taken = 0;
	size_t n0 = n;
	do {
		unsigned bit = (unsigned)(tnt >> (tn - 1)) & 1;
		int32_t next = b->succ[bit];
		if (next < 0)
			break;
		tn--;
		to = b->dest[bit];
		taken += bit;
		sum += b->ninsn;
		cur = next;
		if (!runs) {
			n++;
			b = &blk[cur];
			continue;
		}
		struct ptrec_pt_flow_run *run = &runs[n++];
		run->ip = b->start;
		run->ninsn = b->ninsn;
		run->mode = b->mode;
		run->last_iclass = X86_IC_JCC;
		run->aux = 0;
		run->flags = f->spec ? PT_FLOW_RUN_SPECULATIVE : 0;
		run->len = b->len;
		run->ev = (struct ptrec_branch){b->at, to, tsc, PTREC_BR_JCC,
		                                (uint8_t)(flags | (bit ? PTREC_BRF_TAKEN : 0)), 0, 0};
		run->why = NULL;
		run->offset = off;
		b = &blk[cur];
	} while (n < max && tn && b->iclass == X86_IC_JCC);
	if (n != n0) {
		f->tnt_n = tn;
		f->cur_blk = cur;
		f->ip = to;
		f->no_progress = 0;
		if (!f->raw_time)
			f->ev_tsc = last;
		t->insns += sum;
		t->taken += taken;
		t->tsc = tsc;
	}
	return n;
}

#endif
