/* pt_flow_chain.c — ptrec_pt_flow_count: totals without runs, through a cache of chains (what
 * the hot path does from a cached block with the next TNT bits queued and a TIP read ahead,
 * counted in one step), a cache of spans (the chains through the next 24 to 40 trace bytes,
 * keyed by those bytes, in one step), and one run at a time through the general walk for
 * everything else. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "decode/pt_flow_fast.h"
#include "decode/pt_flow_query.h"
#include "decode/pt_flow_walk.h"

#define CHAIN_BITS 32         /* TNT bits one chain consumes at most */
#define CHAIN_STEPS 80        /* branches in one chain at most */
#define CHAIN_PUSH 4          /* return addresses a chain may push (and not pop) at most */
#define CHAIN_POP 4           /* returns to calls made before it a chain may take at most */
#define CHAIN_LOG_MAX 12      /* log2 of the chain cache's slots (direct mapped) at most */
#define SPAN_BYTES 40         /* trace bytes a span covers at most */
#define SPAN_PUSH 4           /* return addresses a span may leave pushed at most */
#define SPAN_POP 4            /* returns to calls made before it a span may take at most */
#define SPAN_STEPS 1024       /* branch events in one span at most */
#define SPAN_BACKOFF_MAX 1023 /* places without a span lookup after failed builds, at most */

/* A chain (ptrec_pt_flow_count): what the hot path does from a cached block with the next TNT
 * bits queued and, when they are all in the key, the TIP target read ahead: block after block,
 * through conditional branches, direct jumps and calls, compressed returns (to calls made inside
 * the chain, or to those made before it whose return addresses it checks on the return stack)
 * and at most one indirect branch, the one that takes that TIP; keyed by the block, those bits
 * and the TIP target.  128 bytes. */
struct chain {
	int32_t blk;        /* key: the block it starts at (-1: empty slot) */
	uint32_t bits;      /* key: the oldest min(queued, CHAIN_BITS) TNT bits, oldest highest */
	uint64_t tip;       /* key: the target of the TIP read ahead (0: none usable) */
	int32_t end;        /* the block it ends at (the current block afterwards) */
	uint32_t insns;     /* instructions */
	uint8_t nb;         /* key: bits queued, capped at CHAIN_BITS + 1 (more than the window) */
	uint8_t used;       /* bits consumed */
	uint8_t trail;      /* direct jumps and calls after the last bit consumed (no TIP taken) */
	uint8_t steps;      /* branch events (0: the chain is empty, take single steps) */
	uint8_t jcc, taken, jmp, call, ret; /* events by kind; ret: compressed returns */
	uint8_t ind;        /* PTREC_BR_* of the branch that took the TIP (0: it is still ahead) */
	uint8_t npush;      /* return addresses it leaves pushed (push[0] first) */
	uint8_t npop;       /* entries of the return stack it returns to (pop[0] the top one) */
	int8_t rn_add;      /* the return stack's fill afterwards: min(ret_n + rn_add, rn_cap) */
	uint8_t rn_cap;
	uint8_t keep;       /* 0: it stopped at a successor not cached yet: build it again */
	uint8_t end_ic;     /* the iclass of block end (read without loading the block) */
	uint64_t counts;    /* jcc, jmp, call, ret, taken in 12-bit fields (chain_counts_add) */
	uint8_t pad_[4];    /* zero */
	uint32_t end_h;     /* chain_hash_blk(end): the block's part of the next chain's slot */
	uint64_t to;        /* the IP it ends at */
	uint64_t push[CHAIN_PUSH]; /* those return addresses */
	uint64_t pop[CHAIN_POP];   /* the return addresses it found on the stack, top first */
};

_Static_assert(sizeof(struct chain) == 128, "a chain is two cache lines");

/* A span (ptrec_pt_flow_count): what the chains do from a cached block where no TNT bit is queued
 * and nothing is looked ahead, through the TNT and TIP packets of the next SPAN_HASHED to
 * SPAN_BYTES trace bytes up to the next such place, in one step: keyed by the block, those bytes
 * but the payloads of the MTCs among them (they only move the clock, which the span replays),
 * the bits of the last IP its first TIP takes, and checked against the return addresses it
 * returns to (calls made before it).  192 bytes. */
struct span {
	int32_t nblk;       /* key: ~ the block it starts at (0: empty slot, as calloc leaves it) */
	uint8_t len;        /* key: trace bytes (SPAN_HASHED .. SPAN_BYTES) */
	uint8_t npush;      /* return addresses it leaves pushed (push[0] first) */
	uint8_t npop;       /* entries of the return stack it returns to (pop[0] the top one) */
	uint8_t ip_bytes;   /* key: IPBytes of its first TIP (0: none), which bits of last_ip it takes */
	uint64_t w[SPAN_BYTES / 8]; /* key: the bytes (little-endian words; zero past len and in
	                               its MTCs' payloads) */
	uint64_t m[SPAN_BYTES / 8 - SPAN_HASHED / 8]; /* the words past SPAN_HASHED: which bits are
	                               compared (its bytes but its MTCs' payloads; the words before
	                               it: all but span_pay's) */
	uint64_t tpos;      /* bit i: an MTC starts at its byte i */
	uint64_t ip_key;    /* key: those bits of last_ip */
	uint64_t counts;    /* jcc, jmp, call, compressed ret, taken (chain_counts_flush's fields) */
	uint64_t to;        /* the IP it ends at */
	uint64_t last_ip;   /* its last TIP's IP (tip_rel < 0xff) */
	int32_t end;        /* the block it ends at */
	uint32_t end_h;     /* chain_hash_blk(end) */
	uint32_t insns;     /* instructions */
	uint32_t ind;       /* uncompressed ret, ind jmp, ind call, far: 8-bit fields */
	uint16_t events;    /* branch events */
	uint8_t end_ic;     /* the iclass of block end */
	uint8_t tnt_rel;    /* its last TNT's offset from its start (0xff: it has none) */
	uint8_t tip_rel;    /* its last TIP's (0xff: it has none) */
	uint8_t no_progress; /* no_progress afterwards */
	int8_t rn_add;      /* the return stack's fill afterwards: min(ret_n + rn_add, rn_cap) */
	uint8_t rn_cap;
	uint64_t push[SPAN_PUSH]; /* those return addresses */
	uint64_t pop[SPAN_POP];   /* the return addresses it found on the stack, top first */
} __attribute__((aligned(64)));

_Static_assert(sizeof(struct span) == 192, "a span is three cache lines");
_Static_assert(SPAN_BYTES < 64, "tpos has a bit per byte");

/* ---- chains (ptrec_pt_flow_count) --------------------------------------------------------- */

/* Empties the chain and span caches of ptrec_pt_flow_count (nothing when it has none); they
 * hold block indices, so a block cache flush (pt_flow_blk_flush) makes them stale. */
static void chain_clear(struct ptrec_pt_flow *f)
{
	f->chain_flushes = f->blk_flushes;
	for (uint32_t i = 0; f->chain && i < (1u << f->chain_log); i++) {
		f->chain[i].blk = -1;
		if (f->span)
			f->span[i].nblk = 0;
	}
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

/* What span_build gathers while the chains run: the return stack's changes (pushes still held,
 * the entries from before the span it returned to, the fill as min(n + add, cap)), the branches
 * that took a TIP by kind, and whether a TNT packet was read. */
struct span_rec {
	unsigned sp, np;
	uint64_t push[SPAN_PUSH], pop[SPAN_POP];
	int add, cap;
	uint32_t ind;  /* 8-bit fields: PTREC_BR_RET, _IND_JMP, _IND_CALL, _FAR */
	int tnt_seen;
	int bad;       /* it cannot be kept as a span */
};

/* One return into r: of a call made inside the span, or one before it (to, recorded). */
static inline void span_rec_pop(struct span_rec *r, uint64_t to)
{
	if (r->sp)
		r->sp--;
	else if (r->np < SPAN_POP)
		r->pop[r->np++] = to;
	else
		r->bad = 1;
}

/* The fill function min(n + add, cap) followed by min(n + a, c). */
static inline void span_rec_fill(struct span_rec *r, int a, int c)
{
	r->cap = r->cap + a < c ? r->cap + a : c;
	r->add += a;
}

/* Chain ch into r. */
static inline void span_rec_chain(struct span_rec *r, const struct chain *ch)
{
	if (!ch->keep)
		r->bad = 1;
	for (unsigned i = 0; i < ch->npop; i++)
		span_rec_pop(r, ch->pop[i]);
	for (unsigned i = 0; i < ch->npush; i++) {
		if (r->sp < SPAN_PUSH)
			r->push[r->sp++] = ch->push[i];
		else
			r->bad = 1;
	}
	span_rec_fill(r, ch->rn_add, ch->rn_cap);
	if (ch->ind)
		r->ind += 1u << 8 * (ch->ind - PTREC_BR_RET);
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
 * r (span_build; NULL in the hot loop) records what it did.  Returns 1, or 0 (nothing changed
 * but a TIP read ahead) when it is empty. */
static inline __attribute__((always_inline)) int chain_step(struct ptrec_pt_flow *f,
                                                            struct ptrec_pt_flow_counts *c,
                                                            uint64_t *insns, uint64_t *events,
                                                            unsigned *ic, uint32_t *hc,
                                                            uint64_t *acc, struct span_rec *r)
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
	if (r)
		span_rec_chain(r, ch);
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
			if (r) {
				span_rec_pop(r, to);
				span_rec_fill(r, -1, 255);
			}
		}
	}
	return 1;
}

/* ---- spans (several chains per lookup, keyed by the trace bytes) --------------------------- */

/* The SPAN_BYTES trace bytes at p as little-endian words (one load each: a memcpy of them all
 * becomes a `rep movs` here). */
static inline __attribute__((always_inline)) void span_words(uint64_t *w, const uint8_t *p)
{
#pragma GCC unroll 8
	for (unsigned i = 0; i < SPAN_BYTES / 8; i++)
		memcpy(&w[i], p + 8 * i, 8);
}

/* The bits of trace word x that choose a span's slot once a span holds an MTC (f->span_mtc):
 * without the byte after a 0x59 (an MTC's payload), found byte by byte without reading packet by
 * packet, so also after a 0x59 that is no MTC header, the same in every copy of the same key
 * but for an MTC payload that is 0x59 itself (then the span is only missed).  *after carries
 * the flag of x's last byte to the next word. */
static inline __attribute__((always_inline)) uint64_t span_hash_bits(uint64_t x, uint64_t *after)
{
	const uint64_t lo7 = 0x7f7f7f7f7f7f7f7full, b01 = 0x0101010101010101ull;
	uint64_t y = x ^ (0x59 * b01);
	uint64_t z = ~(((y & lo7) + lo7) | y | lo7); /* 0x80 in each byte that is 0x59 */
	uint64_t after1 = (z << 8 | *after) >> 7;    /* 0x01 in each byte after one */
	*after = z >> 56;
	return x & ~((after1 << 8) - after1);
}

/* The slot of the span at the current block (its chain_hash_blk hc) and the first SPAN_HASHED
 * bytes w of the trace: all their bits until a span holds an MTC (this is on the path from one
 * span to the next), then span_hash_bits (the spans kept before whose bytes hold a 0x59 are then
 * missed once). */
static inline __attribute__((always_inline)) uint32_t span_slot(const struct ptrec_pt_flow *f,
                                                                uint32_t hc, const uint64_t *w)
{
	static const uint64_t mul[4] = {0xff51afd7ed558ccdull, 0x9e3779b97f4a7c15ull,
	                                0xc4ceb9fe1a85ec53ull, 0xd6e8feb86659fd93ull};
	_Static_assert(SPAN_HASHED % 8 == 0 && SPAN_HASHED <= 32, "whole words hashed");
	uint64_t k = 0, after = 0;
	if (!f->span_mtc) {
#pragma GCC unroll 4
		for (unsigned i = 0; i < SPAN_HASHED / 8; i++)
			k ^= w[i] * mul[i];
	} else {
#pragma GCC unroll 4
		for (unsigned i = 0; i < SPAN_HASHED / 8; i++)
			k ^= span_hash_bits(w[i], &after) * mul[i];
	}
	return (hc ^ (uint32_t)(k >> 32)) >> (32 - f->chain_log);
}

/* The bits of the last IP that a first TIP with IPBytes b takes (0: none; IPBytes 3 and 6
 * give all of them). */
static const uint64_t span_ip_mask[8] = {0, ~UINT64_C(0xffff), ~UINT64_C(0xffffffff), 0,
                                         ~UINT64_C(0xffffffffffff), 0, 0, 0};

/* A span's key from its n bytes at p, packets that span_time, fast_tnt and fast_tip read (no
 * CYC): into s->w their words but the MTCs' payloads (zero), into s->m the bits of the words past
 * SPAN_HASHED that are compared (its bytes but the payloads), into pay those of the words before
 * that are not (the payloads), into s->tpos where the MTCs start, into s->ip_bytes the IPBytes of
 * its first TIP. */
static void span_key(struct span *s, uint64_t pay[SPAN_HASHED / 8], const uint8_t *p, size_t n)
{
	static const uint8_t tip_size[8] = {0, 3, 5, 7, 7, 0, 9, 0};
	uint8_t b[SPAN_BYTES], m[SPAN_BYTES];
	memset(b, 0, sizeof(b));
	memcpy(b, p, n);
	memset(m, 0, sizeof(m));
	memset(m, 0xff, n);
	s->tpos = 0;
	s->ip_bytes = 0;
	for (size_t i = 0; i < n;) {
		if (b[i] == 0x02) { /* long TNT */
			i += 8;
		} else if (!(b[i] & 1)) { /* short TNT, PAD */
			i++;
		} else if (b[i] == 0x59) { /* MTC */
			s->tpos |= UINT64_C(1) << i;
			b[i + 1] = m[i + 1] = 0;
			i += 2;
		} else { /* TIP */
			unsigned ipb = b[i] >> 5;
			if (!s->ip_bytes)
				s->ip_bytes = (uint8_t)ipb;
			i += tip_size[ipb] ? tip_size[ipb] : 1;
		}
	}
	memcpy(s->w, b, sizeof(b));
	memcpy(s->m, m + SPAN_HASHED, sizeof(s->m));
	memcpy(pay, m, SPAN_HASHED);
	for (unsigned i = 0; i < SPAN_HASHED / 8; i++)
		pay[i] = ~pay[i];
}

/* fast_time for span_build: MTCs and PADs, but not a CYC (where it stops: fast_tnt and fast_tip
 * do not read one, so no span is kept through it). */
static inline void span_time(struct ptrec_pt_flow *f)
{
	while (f->pos < f->len) {
		if (f->buf[f->pos] == 0x59 && f->len - f->pos >= 2) {
			ptrec_pt_time_mtc(&f->time, f->buf[f->pos + 1]);
			f->pos += 2;
		} else if (f->buf[f->pos] == 0x00) {
			f->pos++;
		} else {
			return;
		}
	}
}

/* Applies the MTCs of the span at pos whose bits in *todo (its tpos) are below `before`, and
 * clears those bits. */
static inline void span_mtc(struct ptrec_pt_flow *f, size_t pos, uint64_t *todo, unsigned before)
{
	uint64_t t = *todo;
	for (; t && (unsigned)__builtin_ctzll(t) < before; t &= t - 1)
		ptrec_pt_time_mtc(&f->time, f->buf[pos + __builtin_ctzll(t) + 1]);
	*todo = t;
}

/* On a span miss, where no TNT bit is queued and nothing is looked ahead: reads the next TNT or
 * TIP (after MTCs and PADs, span_time) and runs the chains as the hot loop would (chain_step),
 * packet after packet while each step is a chain, until such a place comes again at least
 * SPAN_HASHED bytes further.  If nothing else was needed on the way (no other packet, a CYC
 * included, no other step, no chain that stopped at a successor not cached yet) and it is at
 * most SPAN_BYTES further, keeps in s what they did: it depends only on the key (the block,
 * those bytes but the MTCs' payloads, the bits of last_ip the first TIP takes) and on the return
 * addresses the chains returned to from before it.  The clock is the one thing the payloads
 * change: span_step applies them as fast_time would and reads the clock where the span's last
 * TNT and TIP were read, as they left it.  Of the events' times only the last one counts (the
 * first is counted before any span is taken), and it is the clock after the span's last packet:
 * every event inside it takes the time of a packet read before it (an MTC never moves the clock
 * back) or, for direct jumps before its first TIP, the time of the last TNT before it, so where
 * neither that TNT's time nor the last event's is after the clock at the span's start
 * (span_step checks it), no stamp is after the last one and order_time leaves the last one as
 * it is.  (CYCs are left out: with cycle-accurate tracing one comes before nearly every packet,
 * the spans would rarely repeat and their replay would cost what the chains do.)  Everything it
 * did is counted as chain_step counts it; a span that cannot be kept makes the hot loop pass the
 * next places without a lookup, more of them after each such span in a row.  Returns 1, or 0
 * when it did nothing (the next packet is not a TNT or TIP). */
static __attribute__((noinline)) int span_build(struct ptrec_pt_flow *f,
                                                struct ptrec_pt_flow_counts *c, uint64_t *insns,
                                                uint64_t *events, unsigned *ic, uint32_t *hc,
                                                uint64_t *acc)
{
	size_t pos0 = f->pos;
	uint32_t hc0 = *hc;
	int32_t blk0 = f->cur_blk;
	uint64_t last_ip0 = f->last_ip;
	struct span_rec r;
	uint64_t a = 0, n_insns = 0, n_events = 0;
	int did = 0;
	memset(&r, 0, sizeof(r));
	r.cap = 255;
	for (;;) {
		if (!f->tnt_n && f->nx.kind == NX_NONE) {
			if (f->pos - pos0 >= SPAN_HASHED)
				break;
			span_time(f);
			if (fast_tnt(f)) {
				r.tnt_seen = 1;
			} else if (!fast_tip(f)) {
				r.bad = 1;
				break;
			}
			did = 1;
		}
		if (!(f->tnt_n ? *ic != X86_IC_OTHER : f->nx.kind == NX_TIP && *ic > X86_IC_JCC) ||
		    n_events + CHAIN_STEPS + 1 > SPAN_STEPS ||
		    !chain_step(f, c, &n_insns, &n_events, ic, hc, &a, &r)) {
			r.bad = 1;
			break;
		}
		did = 1;
	}
	*acc += a;
	*insns += n_insns;
	*events += n_events;
	size_t n = f->pos - pos0;
	if (r.bad || n > SPAN_BYTES || f->no_progress > 255) {
		f->span_wait = f->span_backoff;
		f->span_backoff = f->span_backoff * 2 + 1 < SPAN_BACKOFF_MAX ? f->span_backoff * 2 + 1
		                                                             : SPAN_BACKOFF_MAX;
		return did;
	}
	f->span_backoff = 0;
	if (!f->span) { /* the first span: zeroed (empty) without touching its pages */
		f->span_mem = calloc(((size_t)1 << f->chain_log) + 1, sizeof(*f->span));
		if (!f->span_mem)
			return did;
		f->span = (struct span *)(((uintptr_t)f->span_mem + 63) & ~(uintptr_t)63);
	}
	const uint8_t *p = f->buf + pos0;
	struct span k, *s = &k;
	uint64_t pay[SPAN_HASHED / 8];
	memset(s, 0, sizeof(*s));
	s->nblk = ~blk0;
	s->len = (uint8_t)n;
	span_key(s, pay, p, n);
	if (s->tpos && !f->span_pay) { /* from now on (the spans kept before have no MTC) */
		f->span_pay = calloc((size_t)1 << f->chain_log, sizeof(*f->span_pay));
		if (!f->span_pay)
			return did;
		f->span_mtc = 1;
	}
	s->ip_key = last_ip0 & span_ip_mask[s->ip_bytes];
	s->last_ip = f->last_ip;
	s->tip_rel = f->trig_anchor_off >= pos0 ? (uint8_t)(f->trig_anchor_off - pos0) : 0xff;
	s->tnt_rel = r.tnt_seen ? (uint8_t)(f->tnt_off - pos0) : 0xff;
	s->counts = a;
	s->insns = (uint32_t)n_insns;
	s->events = (uint16_t)n_events;
	s->ind = r.ind;
	s->to = f->ip;
	s->end = f->cur_blk;
	s->end_ic = (uint8_t)*ic;
	s->end_h = *hc;
	s->no_progress = (uint8_t)f->no_progress;
	s->npush = (uint8_t)r.sp;
	s->npop = (uint8_t)r.np;
	s->rn_add = (int8_t)r.add;
	s->rn_cap = (uint8_t)(r.cap < 255 ? r.cap : 255);
	memcpy(s->push, r.push, sizeof(s->push));
	memcpy(s->pop, r.pop, sizeof(s->pop));
	uint64_t w[SPAN_BYTES / 8];
	span_words(w, p);
	uint32_t slot = span_slot(f, hc0, w);
	f->span[slot] = k;
	if (f->span_pay)
		memcpy(f->span_pay[slot], pay, sizeof(pay));
	return did;
}

/* Span s at pos, replayed: the decoder as its last TIP (if any) left it, read by fast_tip
 * with the time tf, tsc and taken. */
static inline __attribute__((always_inline)) void span_replay_tip(struct ptrec_pt_flow *f,
                                                                  const struct span *s,
                                                                  size_t pos, unsigned tf,
                                                                  uint64_t tsc)
{
	f->last_ip = s->last_ip;
	f->trig_anchor = s->last_ip;
	f->trig_anchor_off = pos + s->tip_rel;
	memset(&f->nx, 0, sizeof(f->nx));
	f->nx.has_ip = 1;
	f->nx.ip = s->last_ip;
	f->nx.off = pos + s->tip_rel;
	f->nx.new_mode = f->pending_mode;
	f->nx.tflags = (uint8_t)tf;
	f->nx.tsc = tsc;
}

/* Span s at pos with MTCs, replayed: applies them to the clock in order and leaves the decoder
 * as its last TNT and its last TIP, read in between, left it. */
static __attribute__((noinline)) void span_replay_time(struct ptrec_pt_flow *f,
                                                       const struct span *s, size_t pos)
{
	uint64_t todo = s->tpos, tsc;
	unsigned tnt_at = s->tnt_rel, tip_at = s->tip_rel; /* 0xff: none */
	unsigned at[2] = {tnt_at < tip_at ? tnt_at : tip_at, tnt_at < tip_at ? tip_at : tnt_at};
	for (unsigned k = 0; k < 2 && at[k] != 0xff; k++) {
		span_mtc(f, pos, &todo, at[k]);
		unsigned tf = ptrec_pt_time_now(&f->time, &tsc);
		if (at[k] == tnt_at) {
			f->tnt_off = pos + tnt_at;
			f->tnt_tflags = (uint8_t)tf;
			f->tnt_tsc = tsc;
		} else {
			span_replay_tip(f, s, pos, tf, tsc);
		}
	}
	span_mtc(f, pos, &todo, SPAN_BYTES); /* (none: it ends with a TNT or TIP) */
}

/* Where no TNT bit is queued and nothing is looked ahead (the hot loop of ptrec_pt_flow_count,
 * in its state): the span from the current block through the next trace bytes, counted and
 * the decoder left exactly as its chains would (the TNT and TIP packets read, the return stack,
 * the block), built on a miss (span_build).  Returns 1, or 0 when nothing was done. */
static inline __attribute__((always_inline)) int span_step(struct ptrec_pt_flow *f,
                                                           struct ptrec_pt_flow_counts *c,
                                                           uint64_t *insns, uint64_t *events,
                                                           unsigned *ic, uint32_t *hc,
                                                           uint64_t *acc)
{
	size_t pos = f->pos;
	/* (SPAN_BYTES + 8: every packet check of fast_tnt and fast_tip inside it passes) */
	if (f->len - pos < SPAN_BYTES + 8 || f->ctx != PT_CTX_NONE || f->has_pending_mode ||
	    f->br_held_n)
		return 0;
	if (!f->span)
		return span_build(f, c, insns, events, ic, hc, acc);
	uint64_t w[SPAN_BYTES / 8];
	span_words(w, f->buf + pos);
	uint32_t slot = span_slot(f, *hc, w);
	const struct span *s = &f->span[slot];
	uint64_t d = 0;
	if (f->span_pay) { /* the MTC payloads there are not compared */
#pragma GCC unroll 4
		for (unsigned i = 0; i < SPAN_HASHED / 8; i++)
			d |= (w[i] & ~f->span_pay[slot][i]) ^ s->w[i];
	} else {
#pragma GCC unroll 4
		for (unsigned i = 0; i < SPAN_HASHED / 8; i++)
			d |= w[i] ^ s->w[i];
	}
#pragma GCC unroll 4
	for (unsigned i = SPAN_HASHED / 8; i < SPAN_BYTES / 8; i++)
		d |= (w[i] & s->m[i - SPAN_HASHED / 8]) ^ s->w[i];
	if (s->nblk != ~f->cur_blk || d ||
	    (f->last_ip & span_ip_mask[s->ip_bytes]) != s->ip_key || s->npop > f->ret_n)
		return span_build(f, c, insns, events, ic, hc, acc);
	unsigned top = f->ret_top;
	for (unsigned i = 0; i < s->npop; i++)
		if (f->ret[(top + 2 * RETSTACK_SIZE - 1 - i) % RETSTACK_SIZE] != s->pop[i])
			return span_build(f, c, insns, events, ic, hc, acc);
	/* its last event's time is the clock after it where no time counted before is after the
	 * clock now (see span_build; the first time is counted before any span) */
	uint64_t tsc;
	unsigned tf = ptrec_pt_time_now(&f->time, &tsc);
	if ((tf & PTREC_BRF_HAS_TIME) &&
	    (!c->have_time || (!f->raw_time && f->ev_tsc > tsc) ||
	     ((f->tnt_tflags & PTREC_BRF_HAS_TIME) && f->tnt_tsc > tsc)))
		return span_build(f, c, insns, events, ic, hc, acc);
	f->span_backoff = 0;
	f->pos = pos + s->len;
	if (s->tpos) {
		span_replay_time(f, s, pos);
		tf = ptrec_pt_time_now(&f->time, &tsc);
	} else {
		if (s->tnt_rel != 0xff) {
			f->tnt_off = pos + s->tnt_rel;
			f->tnt_tflags = (uint8_t)tf;
			f->tnt_tsc = tsc;
		}
		if (s->tip_rel != 0xff)
			span_replay_tip(f, s, pos, tf, tsc);
	}
	top = (top + RETSTACK_SIZE - s->npop) % RETSTACK_SIZE;
	for (unsigned i = 0; i < s->npush; i++)
		f->ret[(top + i) % RETSTACK_SIZE] = s->push[i];
	f->ret_top = (top + s->npush) % RETSTACK_SIZE;
	int rn = (int)f->ret_n + s->rn_add;
	f->ret_n = (unsigned)(rn < s->rn_cap ? rn : s->rn_cap);
	f->cur_blk = s->end;
	f->ip = s->to;
	f->no_progress = s->no_progress;
	count_time(f, c, tf, tsc);
	*acc += s->counts;
	*insns += s->insns;
	*events += s->events;
	c->kind[PTREC_BR_RET] += s->ind & 0xff;
	c->kind[PTREC_BR_IND_JMP] += (s->ind >> 8) & 0xff;
	c->kind[PTREC_BR_IND_CALL] += (s->ind >> 16) & 0xff;
	c->kind[PTREC_BR_FAR] += s->ind >> 24;
	*ic = s->end_ic;
	*hc = s->end_h;
	return 1;
}

/* next_runs without the runs: the hot loop of next_runs counting in place, with spans and
 * chains, and everything else one run at a time through next_run_slow. */
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
		chain_clear(f);
	}
	for (;;) {
		/* Nothing handed out needs its lengths: retired chunks can go at once. */
		if (f->retire)
			pt_flow_retire_chunks(f);
		if (f->chain_flushes != f->blk_flushes) /* the slow path flushed the blocks */
			chain_clear(f);
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
				if (!f->tnt_n && f->nx.kind == NX_NONE && f->chain) {
					if (f->span_wait) {
						f->span_wait--;
					} else {
						fast_time(f); /* as fast_read: a span starts after */
						if (span_step(f, c, &t.insns, &events, &ic, &hc, &acc))
							continue;
					}
				}
				if (!f->tnt_n && f->nx.kind == NX_NONE && !fast_read(f)) {
					pt_flow_lookahead(f, 0);
					if (f->aux_n || f->ptw_n || f->trig_n)
						break;
					ic = f->blk[f->cur_blk].iclass;
					hc = chain_hash_blk(f->cur_blk);
				}
				if (f->chain && (f->tnt_n ? ic != X86_IC_OTHER
				                          : f->nx.kind == NX_TIP && ic > X86_IC_JCC) &&
				    chain_step(f, c, &t.insns, &events, &ic, &hc, &acc, NULL))
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
