/* pt_flow_chain.c — ptrec_pt_flow_count: totals without runs, through a cache of chains (what
 * the hot path does from a cached block with the next TNT bits queued and a TIP read ahead,
 * counted in one step), and one run at a time through the general walk for everything else. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "decode/pt_flow_fast.h"

/* ---- chains (ptrec_pt_flow_count) --------------------------------------------------------- */

/* Empties the chain cache of ptrec_pt_flow_count (nothing when it has none). */
void pt_flow_chain_clear(struct ptrec_pt_flow *f)
{
	for (uint32_t i = 0; f->chain && i < (1u << f->chain_log); i++)
		f->chain[i].blk = -1;
}

/* Adds one run's event or auxiliary item to c (the instructions are counted by the caller). */
static inline __attribute__((always_inline)) void count_run(struct ptrec_pt_flow_counts *c,
                                                            const struct ptrec_pt_flow_run *run)
{
	const struct ptrec_branch *ev = &run->ev;
	if (run->aux) {
		c->aux++;
		c->ptw += run->aux == PT_FLOW_AUX_PTW;
	}
	if (ev->kind == PTREC_BR_NONE || ev->kind >= PTREC_BR_KIND_COUNT_)
		return;
	c->kind[ev->kind]++;
	c->jcc_taken += ev->kind == PTREC_BR_JCC && (ev->flags & PTREC_BRF_TAKEN);
	c->ret_compressed += !!(ev->flags & PTREC_BRF_COMPRESSED_RET);
	if (ev->flags & PTREC_BRF_HAS_TIME) {
		if (!c->have_time)
			c->time_first = ev->timestamp;
		c->have_time = 1;
		c->time_last = ev->timestamp;
	}
}

/* The current block's part of a chain's slot number (see chain_step): kept with each chain for
 * the block it ends at, so the next slot is found without a multiplication after the chain. */
static inline uint32_t chain_hash_blk(int32_t cur)
{
	return (uint32_t)(((uint64_t)(uint32_t)cur * 0x9e3779b97f4a7c15ull) >> 32);
}

/* A chain's branch counts packed into one word, 12 bits each (a chain has at most CHAIN_STEPS),
 * so that the hot loop adds them up with one addition: jcc, jmp, call, ret (compressed), taken
 * jcc.  The sum is moved to the counts (chain_counts_flush) before a field can overflow. */
#define CC_JCC 0
#define CC_JMP 12
#define CC_CALL 24
#define CC_RET 36
#define CC_TAKEN 48
#define CC_FULL (0x800ull << CC_JCC | 0x800ull << CC_JMP | 0x800ull << CC_CALL | \
                 0x800ull << CC_RET | 0x800ull << CC_TAKEN) /* a field is >= 2048 */
_Static_assert(CHAIN_STEPS + 1 < 2048, "a field holds 2048 + a chain's counts");

static inline void chain_counts_flush(struct ptrec_pt_flow_counts *c, uint64_t *acc)
{
	uint64_t a = *acc;
	c->kind[PTREC_BR_JCC] += (a >> CC_JCC) & 0xfff;
	c->kind[PTREC_BR_JMP] += (a >> CC_JMP) & 0xfff;
	c->kind[PTREC_BR_CALL] += (a >> CC_CALL) & 0xfff;
	c->kind[PTREC_BR_RET] += (a >> CC_RET) & 0xfff;
	c->ret_compressed += (a >> CC_RET) & 0xfff;
	c->jcc_taken += (a >> CC_TAKEN) & 0xfff;
	*acc = 0;
}

/* Fills c (its key aside) with what fast_step would do, step after step, from block cur with
 * the w oldest queued TNT bits `bits` (more: further bits are queued behind them) and, when
 * tip is not 0, a TIP to tip read ahead behind the last of them: conditional branches and
 * compressed returns take a bit each (a return to a call made inside the chain, or to one made
 * before it: the return address on f's return stack now, recorded in pop[] and checked before
 * each use), direct jumps and calls only while a bit remains queued or the TIP is read (fast_step
 * takes them only then; otherwise it reads the next packet first, which may change their time),
 * and once the bits are used up, the indirect branch (or uncompressed return) that takes the
 * TIP, where it ends (what follows depends on the next packet).  It stops before any other step
 * and before a successor that is not cached (then keep = 0). */
static void chain_build(const struct ptrec_pt_flow *f, struct chain *c, int32_t cur, uint32_t bits,
                        unsigned w, int more, uint64_t tip)
{
	uint64_t stk[CHAIN_PUSH];
	unsigned sp = 0;
	int add = 0, cap = 255; /* the fill as a function of the fill before: min(n + add, cap) */
	memset(c, 0, sizeof(*c));
	c->keep = 1;
	c->to = f->blk[cur].start;
	for (unsigned step = 0; step < CHAIN_STEPS && !c->ind; step++) {
		const struct blk *b = &f->blk[cur];
		unsigned bit = c->used < w ? (bits >> (w - 1 - c->used)) & 1 : 0;
		int bits_left = c->used < w || more;
		int32_t next;
		uint64_t to;
		if (b->end != BLK_BRANCH)
			break;
		switch (b->iclass) {
		case X86_IC_JCC:
			if (c->used == w)
				goto stop;
			next = b->succ[bit];
			to = b->dest[bit];
			break;
		case X86_IC_JMP:
		case X86_IC_CALL:
			if (!bits_left && !tip)
				goto stop;
			if (b->iclass == X86_IC_CALL && b->dest[1] != b->dest[0] && sp == CHAIN_PUSH)
				goto stop;
			next = b->succ[1];
			to = b->dest[1];
			break;
		case X86_IC_RET:
			if (c->used < w) { /* compressed */
				if (!bit)
					goto stop;
				if (sp) {
					to = stk[sp - 1];
				} else {
					/* the fill before this return is min(ret_n + add, cap) */
					int n = (int)f->ret_n + add < cap ? (int)f->ret_n + add : cap;
					if (c->npop == CHAIN_POP || n <= 0)
						goto stop;
					to = f->ret[(f->ret_top + 2 * RETSTACK_SIZE - 1 - c->npop) %
					            RETSTACK_SIZE];
				}
				next = blk_peek(f, to, b->mode);
				break;
			}
			if (more)
				goto stop;
			/* uncompressed: it takes the TIP */
			/* fall through */
		case X86_IC_JMP_IND:
		case X86_IC_CALL_IND:
		case X86_IC_FAR:
			if (bits_left || !tip ||
			    (b->iclass == X86_IC_CALL_IND && sp == CHAIN_PUSH))
				goto stop;
			to = tip;
			next = blk_peek(f, to, b->mode);
			break;
		default:
			goto stop;
		}
		if (next < 0) {
			c->keep = 0;
			break;
		}
		switch (b->iclass) {
		case X86_IC_JCC:
			c->jcc++;
			c->taken += (uint8_t)bit;
			c->used++;
			c->trail = 0;
			break;
		case X86_IC_CALL:
			if (b->dest[1] != b->dest[0]) { /* call_push */
				stk[sp++] = b->dest[0];
				add++;
				cap = cap + 1 < RETSTACK_SIZE ? cap + 1 : RETSTACK_SIZE;
			}
			c->call++;
			c->trail++;
			break;
		case X86_IC_JMP:
			c->jmp++;
			c->trail++;
			break;
		case X86_IC_RET:
			if (c->used < w) {
				if (sp)
					sp--;
				else
					c->pop[c->npop++] = to;
				add--;
				cap--;
				c->ret++;
				c->used++;
				c->trail = 0;
				break;
			}
			c->ind = PTREC_BR_RET;
			c->trail = 0;
			break;
		case X86_IC_CALL_IND:
			stk[sp++] = b->dest[0]; /* ret_push */
			add++;
			cap = cap + 1 < RETSTACK_SIZE ? cap + 1 : RETSTACK_SIZE;
			c->ind = PTREC_BR_IND_CALL;
			c->trail = 0;
			break;
		case X86_IC_JMP_IND:
			c->ind = PTREC_BR_IND_JMP;
			c->trail = 0;
			break;
		default:
			c->ind = PTREC_BR_FAR;
			c->trail = 0;
			break;
		}
		c->steps++;
		c->insns += b->ninsn;
		c->to = to;
		cur = next;
	}
stop:
	c->end = cur;
	c->end_ic = f->blk[cur].iclass;
	c->counts = (uint64_t)c->jcc << CC_JCC | (uint64_t)c->jmp << CC_JMP |
	            (uint64_t)c->call << CC_CALL | (uint64_t)c->ret << CC_RET |
	            (uint64_t)c->taken << CC_TAKEN;
	c->end_h = chain_hash_blk(cur);
	c->npush = (uint8_t)sp;
	c->rn_add = (int8_t)add;
	c->rn_cap = (uint8_t)cap;
	memcpy(c->push, stk, sp * sizeof(stk[0]));
}

/* Counts one event's time stamp into c as order_time and count_run would. */
static inline void count_time(struct ptrec_pt_flow *f, struct ptrec_pt_flow_counts *c,
                              unsigned flags, uint64_t tsc)
{
	if (!(flags & PTREC_BRF_HAS_TIME))
		return;
	if (!f->raw_time)
		tsc = ptrec_pt_time_order(&f->ev_tsc, tsc);
	if (!c->have_time)
		c->time_first = tsc;
	c->have_time = 1;
	c->time_last = tsc;
}

/* 1 if the return addresses chain ch returns to (calls made before it) are those on f's return
 * stack now. */
static inline __attribute__((always_inline)) int chain_pops_ok(const struct ptrec_pt_flow *f,
                                                               const struct chain *ch)
{
	if (ch->npop > f->ret_n)
		return 0;
	for (unsigned i = 0; i < ch->npop; i++)
		if (f->ret[(f->ret_top + 2 * RETSTACK_SIZE - 1 - i) % RETSTACK_SIZE] != ch->pop[i])
			return 0;
	return 1;
}

/* One chain from the current block with TNT bits queued or a TIP read ahead (the hot loop of
 * ptrec_pt_flow_count, in its state), built on a miss: counts it into c, *acc (the branch
 * counts, see chain_counts_flush), *insns and *events exactly as fast_step's runs would add
 * up.  *ic and *hc are the current block's iclass and chain_hash_blk, before and after.
 * Returns 1, or 0 (nothing changed but a TIP read ahead) when it is empty. */
static inline __attribute__((always_inline)) int chain_step(struct ptrec_pt_flow *f,
                                                            struct ptrec_pt_flow_counts *c,
                                                            uint64_t *insns, uint64_t *events,
                                                            unsigned *ic, uint32_t *hc,
                                                            uint64_t *acc)
{
	unsigned tn = f->tnt_n;
	/* fast_step's limit on direct jumps without a packet consumed, for those before the
	 * first bit */
	if (f->no_progress + CHAIN_STEPS >= NO_PROGRESS_LIMIT)
		return 0;
	/* With every queued bit in the window, the TIP right behind them (if it is one) is read
	 * now instead of when they are used up: the same packet, read with the same time, the
	 * same compression state; no_progress as it would be then. */
	if (tn <= CHAIN_BITS && f->nx.kind == NX_NONE) {
		unsigned np = f->no_progress;
		if (fast_tip(f))
			f->no_progress = np;
	}
	const struct nx *nx = &f->nx;
	uint64_t tip = nx->kind == NX_TIP && nx->has_ip && !nx->has_mode && !f->br_held_n &&
	               tn <= CHAIN_BITS ? nx->ip : 0;
	unsigned w = tn < CHAIN_BITS ? tn : CHAIN_BITS;
	unsigned nb = tn <= CHAIN_BITS ? tn : CHAIN_BITS + 1;
	uint32_t bits = (uint32_t)((f->tnt >> (tn - w)) & ((UINT64_C(1) << w) - 1));
	int32_t cur = f->cur_blk;
	unsigned top = f->ret_top;
	/* The slot by the key; the return stack is not in it (it would lengthen the path from
	 * one chain to the next).  The same key with other return addresses on the stack (code
	 * returning to another caller) has a second slot, chosen by the top one. */
	uint64_t hk = (uint64_t)bits ^ (uint64_t)nb << 58 ^ tip;
	uint32_t h = (*hc ^ (uint32_t)((hk * 0xff51afd7ed558ccdull) >> 32)) >> (32 - f->chain_log);
	struct chain *ch = &f->chain[h];
	int key = ch->blk == cur && ch->bits == bits && ch->nb == nb && ch->tip == tip;
	if (!key || !chain_pops_ok(f, ch)) {
		if (key) {
			uint64_t tos = f->ret[(top + RETSTACK_SIZE - 1) % RETSTACK_SIZE];
			uint32_t h2 = (uint32_t)(((hk ^ tos ^ (uint64_t)(uint32_t)cur << 32) *
			                          0x9e3779b97f4a7c15ull) >> 32) >> (32 - f->chain_log);
			ch = &f->chain[h2 != h ? h2 : h ^ 1];
			key = ch->blk == cur && ch->bits == bits && ch->nb == nb && ch->tip == tip;
		}
		if (!key || !chain_pops_ok(f, ch)) {
			chain_build(f, ch, cur, bits, w, tn > w, tip);
			ch->blk = cur;
			ch->bits = bits;
			ch->nb = (uint8_t)nb;
			ch->tip = tip;
		}
	}
	if (!ch->keep)
		ch->blk = -1; /* build it again: the general walk will cache that successor */
	if (!ch->steps)
		return 0;
	/* The return stack as the pops and pushes would leave it: the entries it returned to
	 * popped, its own calls pushed (those it returned from popped again), the oldest entries
	 * lost where it went deeper than RETSTACK_SIZE. */
	top = (top + RETSTACK_SIZE - ch->npop) % RETSTACK_SIZE;
	for (unsigned i = 0; i < ch->npush; i++)
		f->ret[(top + i) % RETSTACK_SIZE] = ch->push[i];
	f->ret_top = (top + ch->npush) % RETSTACK_SIZE;
	int rn = (int)f->ret_n + ch->rn_add;
	f->ret_n = (unsigned)(rn < ch->rn_cap ? rn : ch->rn_cap);
	f->tnt_n = tn - ch->used;
	f->cur_blk = ch->end;
	f->ip = ch->to;
	/* a bit or the TIP sets it to 0, a direct jump adds 1 */
	f->no_progress = ch->used || ch->ind ? ch->trail : f->no_progress + ch->trail;
	unsigned before = (unsigned)ch->steps - (ch->ind != 0); /* events decided by the bits */
	if (before)
		count_time(f, c, f->tnt_tflags, f->tnt_tsc);
	*acc += ch->counts;
	*insns += ch->insns;
	*events += ch->steps;
	if (ch->ind) { /* the TIP was taken */
		c->kind[ch->ind]++;
		count_time(f, c, nx->tflags, nx->tsc);
		f->nx.kind = NX_NONE;
		*ic = ch->end_ic;
		*hc = ch->end_h;
		return 1;
	}
	/* Chains that stop at a return of a call made before them (more than CHAIN_POP, or
	 * the window's end): take it as fast_step would (compressed, its target's block cached),
	 * with the same time. */
	*ic = ch->end_ic;
	*hc = ch->end_h;
	if (ch->end_ic == X86_IC_RET) {
		const struct blk *b = &f->blk[ch->end];
		uint64_t to;
		int32_t next = compressed_ret(f, &to);
		if (next >= 0) {
			f->ip = to;
			f->cur_blk = next;
			*ic = f->blk[next].iclass;
			*hc = chain_hash_blk(next);
			*acc += 1ull << CC_RET;
			*insns += b->ninsn;
			++*events;
			count_time(f, c, f->tnt_tflags, f->tnt_tsc);
		}
	}
	return 1;
}

/* next_runs without the runs: the hot loop of next_runs counting in place, with chains, and
 * everything else one run at a time through next_run_slow. */
int ptrec_pt_flow_count(struct ptrec_pt_flow *f, struct ptrec_pt_flow_counts *c)
{
	struct ptrec_pt_flow_run run;
	uint64_t insns0 = f->stats.insns;
	int e;
	f->hot = 0; /* this changes the state behind ptrec_pt_flow_next_run's back */
	if (HOT_PATHS && !f->chain) { /* without memory for it: no chains */
		/* One slot per 512 bytes of trace: a short trace does not pay for a big table
		 * (512 KiB at most, a 64 KiB ring 32 KiB). */
		f->chain_log = 8;
		while (f->chain_log < CHAIN_LOG_MAX && ((size_t)1 << (f->chain_log + 9)) < f->len)
			f->chain_log++;
		f->chain = aligned_alloc(64, sizeof(*f->chain) << f->chain_log);
		pt_flow_chain_clear(f);
	}
	for (;;) {
		/* Nothing handed out needs its lengths: retired chunks can go at once. */
		if (f->retire)
			pt_flow_retire_chunks(f);
		if (HOT_PATHS && f->state == ST_ENABLED && f->cur_blk >= 0 &&
		    *f->gen_ref == f->image_gen &&
		    !f->aux_n && !f->ptw_n && !f->trig_n) {
			struct jcc_tally t = {0, 0, 0};
			uint64_t events = 0, jccs = 0;
			/* the current block's iclass, from the chain that reached it */
			unsigned ic = f->blk[f->cur_blk].iclass;
			uint32_t hc = chain_hash_blk(f->cur_blk); /* and its part of the slot number */
			uint64_t acc = 0; /* the chains' branch counts not yet in c */
			for (;;) {
				if (acc & CC_FULL)
					chain_counts_flush(c, &acc);
				if (!f->tnt_n && f->nx.kind == NX_NONE && !fast_read(f)) {
					pt_flow_lookahead(f, 0);
					if (f->aux_n || f->ptw_n || f->trig_n)
						break;
					ic = f->blk[f->cur_blk].iclass;
					hc = chain_hash_blk(f->cur_blk);
				}
				if (f->chain && (f->tnt_n ? ic != X86_IC_OTHER
				                          : f->nx.kind == NX_TIP && ic > X86_IC_JCC) &&
				    chain_step(f, c, &t.insns, &events, &ic, &hc, &acc))
					continue;
				if (f->tnt_n && ic == X86_IC_JCC) {
					size_t m = jcc_burst(f, NULL, 0, SIZE_MAX, &t);
					if (!m)
						break; /* the successor is not cached */
					jccs += m;
					ic = f->blk[f->cur_blk].iclass;
					hc = chain_hash_blk(f->cur_blk);
					if (f->tnt_tflags & PTREC_BRF_HAS_TIME) {
						if (!c->have_time)
							c->time_first = t.tsc;
						c->have_time = 1;
						c->time_last = t.tsc;
					}
					continue;
				}
				if (!fast_step(f, &run))
					break;
				t.insns += run.ninsn;
				order_time(f, &run);
				count_run(c, &run);
				events++;
				ic = f->blk[f->cur_blk].iclass;
				hc = chain_hash_blk(f->cur_blk);
			}
			chain_counts_flush(c, &acc);
			c->kind[PTREC_BR_JCC] += jccs;
			c->jcc_taken += t.taken;
			f->stats.insns += t.insns;
			f->stats.events += events + jccs;
		}
		e = pt_flow_next_run_slow(f, &run);
		if (e <= 0)
			break;
		order_time(f, &run);
		count_run(c, &run);
	}
	c->insns += f->stats.insns - insns0;
	return e;
}
