/* pt_flow_state.h — private to the PT flow decoder (pt_flow*.c): its state (struct
 * ptrec_pt_flow), limits and cached blocks, the block cache lookups, the return stack push, and
 * the functions its files share.  Nothing else includes it: pt_flow.h is the interface. */
#ifndef PTREC_DECODE_PT_FLOW_STATE_H
#define PTREC_DECODE_PT_FLOW_STATE_H

#include <stdint.h>
#include <string.h>

#include "ptrec.h"
#include "decode/pt_flow.h"
#include "decode/pt_packet.h"

#define RETSTACK_SIZE 64      /* hardware return-compression depth */
#define BLK_MAX_INSN 512      /* longest block; longer straight code continues in a new block */
#define BLK_CACHE_MAX (1u << 22) /* blocks before the cache is flushed (memory bound) */
#define NO_PROGRESS_LIMIT 200000 /* blocks walked without consuming a packet before giving up */
#define PTW_QUEUE 64          /* PTWRITE payloads waiting to be delivered */
#define TRIG_QUEUE 8          /* TRIGs waiting for the flow to reach their IP */
#define STRAIGHT_MAX 256      /* instructions followed to place a TRIG or a PTW without FUP */
#define AUX_QUEUE 64          /* status events waiting to be delivered */
#define AUX_HELD 8            /* items waiting for their FUP or their branch */
#define CHUNK_SIZE 65536u     /* bytes per chunk of the instruction length pool */
#define CHAIN_BITS 32         /* TNT bits one chain consumes at most */
#define CHAIN_STEPS 80        /* branches in one chain at most */
#define CHAIN_PUSH 4          /* return addresses a chain may push (and not pop) at most */
#define CHAIN_POP 4           /* returns to calls made before it a chain may take at most */
#define CHAIN_LOG_MAX 12      /* log2 of the chain cache's slots (direct mapped) at most */
#define SPAN_HASHED 24        /* trace bytes a span covers at least (its slot is chosen by them) */
#define SPAN_BYTES 40         /* trace bytes a span covers at most */
#define SPAN_PUSH 4           /* return addresses a span may leave pushed at most */
#define SPAN_POP 4            /* returns to calls made before it a span may take at most */
#define SPAN_STEPS 1024       /* branch events in one span at most */
#define SPAN_BACKOFF_MAX 1023 /* places without a span lookup after failed builds, at most */

/* The hot paths (fast_step and the loops around it) only take steps the general walk would take
 * the same way.  A test build with PT_FLOW_GENERAL_ONLY (tests/ptgen/flow_compare_general) has
 * none, every step through the general walk: the reference they are checked against. */
#ifdef PT_FLOW_GENERAL_ONLY
#define HOT_PATHS 0
#else
#define HOT_PATHS 1
#endif

/* How a cached block ends. */
enum blk_end {
	BLK_BRANCH = 0, /* with a branch instruction (iclass in blk.iclass) */
	BLK_OPEN,       /* at BLK_MAX_INSN: continues at fall */
	BLK_ERROR,      /* at an address that does not decode (err): fall */
	BLK_CR3,        /* with a MOV to CR3 (a PIP or a TIP.PGD may bind there): fall */
};

/* A basic block: straight-line instructions up to the next branch.  64 bytes. */
struct blk {
	uint64_t start;     /* first instruction */
	uint64_t dest[2];   /* [0] fall: the address after the last instruction (BLK_ERROR: the
	                       undecodable address, with last_len 0; the last instruction is at
	                       fall - last_len); [1] the direct branch target (iclass
	                       JCC/JMP/CALL): indexed by a TNT bit */
	const uint8_t *len; /* instruction lengths (in a pool chunk) */
	uint16_t ninsn;     /* instructions, including the final branch */
	int16_t err;        /* BLK_ERROR: -PTREC_ENOMAP or -PTREC_EFORMAT */
	uint8_t mode;       /* enum ptrec_x86_mode decoded in */
	uint8_t iclass;     /* iclass of the last instruction (BLK_BRANCH) */
	uint8_t end;        /* enum blk_end */
	uint8_t last_len;   /* length of the last instruction */
	int32_t succ[2];    /* cached block index: [0] fall-through / not taken, [1] taken/target */
	int32_t succ_ind;   /* cached block index of the last indirect target (check start) */
	uint32_t pad_;      /* zero */
	uint64_t at;        /* address of the last instruction (BLK_ERROR: the undecodable one) */
};

/* Address of the last instruction of a block (BLK_ERROR: the undecodable address). */
#define BLK_END_IP(b) ((b)->at)

_Static_assert(sizeof(struct blk) == 64, "a block is one cache line");

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

/* The decoder's top-level state. */
enum flow_state {
	ST_SYNC = 0, /* looking for a PSB */
	ST_DISABLED, /* synchronised, tracing off until TIP.PGE */
	ST_ENABLED,  /* synchronised at ip */
	ST_END,      /* trace exhausted */
	ST_RESYNC,   /* after a decode error: waiting for the next packet that gives an IP */
};

/* An auxiliary item (enum ptrec_pt_flow_aux) waiting to be delivered. */
struct aux_item {
	uint8_t kind;      /* enum ptrec_pt_flow_aux */
	uint64_t payload;  /* see ptrec_pt_flow_run.aux_payload */
	uint64_t arg;      /* see ptrec_pt_flow_run.aux_arg */
	uint64_t ip;       /* see ptrec_pt_flow_run.aux_ip */
};

/* The look-ahead item: the next packet that is not a TNT, timing or status packet. */
enum nx_kind {
	NX_NONE = 0, /* not read yet */
	NX_TIP,      /* TIP: target */
	NX_PGE,      /* TIP.PGE */
	NX_PGD,      /* TIP.PGD (not preceded by FUP) */
	NX_FUP_TIP,  /* FUP(ip) + TIP(ip2): interrupt/exception or TSX abort */
	NX_FUP_PGD,  /* FUP(ip) + TIP.PGD: asynchronous disable */
	NX_FUP_END,  /* FUP(ip) and then the end of the trace */
	NX_SYNC,     /* PSB+ with FUP: execution must be at ip when the TNT queue empties */
	NX_OVF,      /* OVF; ip = resume IP when has_ip; resume_pge when TIP.PGE follows */
	NX_END,      /* end of the trace */
	NX_SYNC_OFF, /* PSB+ without FUP at or after stop_sync: the decoder stops there */
	NX_ERR,      /* a packet error at off */
	NX_FUP_AUX,  /* the FUP of held items (MWAIT, EXSTOP.IP, MODE.TSX): they happen at ip */
};

struct nx {
	uint8_t kind;      /* enum nx_kind */
	uint8_t has_ip;    /* ip is valid (TIP/PGD may suppress it) */
	uint8_t has_ip2;   /* ip2 is valid */
	uint8_t abort;     /* NX_FUP_TIP/PGD: the FUP belonged to a TSX abort */
	uint8_t has_mode;  /* a MODE.Exec preceded it: new_mode applies to its target */
	uint8_t new_mode;  /* that mode */
	uint8_t tflags;    /* time flags when it was read */
	uint8_t cut;       /* NX_END: a partial packet follows (the trace was cut inside it) */
	int err;           /* NX_ERR: -PTREC_E* */
	const char *why;   /* NX_ERR: text */
	uint64_t ip;       /* TIP/PGE/PGD target, FUP IP, PSB+ IP, OVF resume IP */
	uint64_t ip2;      /* the TIP/TIP.PGD target after a FUP */
	uint64_t off;      /* trace offset of the packet */
	uint64_t psb_off;  /* NX_SYNC: offset of its PSB (resync point on a mismatch) */
	uint64_t tsc;      /* time when it was read */
};

/* The decoder state that decides what comes next, taken where a PSB+ is bound (see
 * ptrec_pt_flow_joins). */
struct flow_key {
	int valid;                  /* taken */
	int state;                  /* enum flow_state */
	uint64_t ip;                /* ST_ENABLED: next instruction */
	uint64_t last_ip;           /* IP compression state */
	uint8_t mode, has_pending_mode, pending_mode, fup_skip, tsx_abort, in_tx;
	unsigned tnt_n, ret_n, ptw_n, aux_n;
	uint64_t tnt_tsc;           /* time given to direct branches */
	uint8_t tnt_tflags;
	struct ptrec_pt_time time;  /* timing */
};

struct ptrec_pt_flow {
	const uint8_t *buf;         /* trace */
	size_t len;                 /* trace size */
	size_t pos;                 /* next packet offset */
	struct ptrec_pt_img *image;     /* code */
	unsigned errata;            /* PT_ERRATUM_* */
	enum ptrec_pt_packet_ctx ctx;     /* BBP/BIP block context */
	int state;                  /* enum flow_state */
	int synced_once;            /* a PSB was found at least once */
	uint64_t ip;                /* next instruction (ST_ENABLED) */
	uint8_t mode;               /* current enum ptrec_x86_mode */
	uint8_t pending_mode;       /* MODE.Exec seen, applies at the next TIP/PGE */
	uint8_t has_pending_mode;   /* pending_mode is valid */
	uint8_t fup_skip;           /* the next FUP belongs to PTW/TSX/EXSTOP/...: consume it */
	uint8_t tsx_abort;          /* a MODE.TSX abort was seen: its FUP+TIP is an abort */
	uint8_t in_tx;              /* inside a transaction */
	uint8_t iflag;              /* RFLAGS.IF of the last MODE.Exec (event trace) */
	uint64_t last_ip;           /* IP compression state */
	uint64_t cr3;               /* last PIP */
	uint64_t vmcs;              /* last VMCS */
	uint64_t tnt;               /* queued TNT bits, oldest at bit tnt_n-1 */
	unsigned tnt_n;             /* number of queued bits */
	uint64_t tnt_tsc;           /* time of the last TNT packet */
	uint8_t tnt_tflags;         /* its time flags */
	uint64_t tnt_off;           /* its offset */
	struct nx nx;               /* look-ahead */
	uint64_t ret[RETSTACK_SIZE];/* return stack (circular) */
	unsigned ret_top;           /* index of the next push */
	unsigned ret_n;             /* entries held (<= RETSTACK_SIZE) */
	struct ptrec_pt_time time;        /* timing */
	uint64_t ev_tsc;            /* time of the last timed event (see order_time) */
	uint64_t ptw[PTW_QUEUE];    /* PTWRITE payloads to deliver */
	uint64_t ptw_ip[PTW_QUEUE]; /* the IP of each one's PTWRITE (its FUP), 0 = unknown */
	unsigned ptw_head, ptw_n;   /* queue head and count */
	uint8_t ptw_fup;            /* the next FUP is the IP of the newest PTW */
	uint8_t ptw_done;           /* the oldest PTW's PTWRITE was reported: deliver it now */
	uint8_t ptw_sought;         /* the oldest PTW has no IP: its PTWRITE was looked for */
	uint64_t trig_anchor;       /* where a TRIG's ICNT counts from: the IP of the last IP
	                               packet read, or where the last TRIG fired */
	uint64_t trig_anchor_off;   /* offset of the packet that set trig_anchor */
	struct { uint64_t ip, trbv, mult; } trig[TRIG_QUEUE]; /* TRIGs due at ip */
	unsigned trig_head, trig_n;
	struct aux_item aux[AUX_QUEUE]; /* auxiliary items to deliver, in order */
	unsigned aux_head, aux_n;   /* queue head and count */
	struct aux_item fup_held[AUX_HELD]; /* MWAIT, EXSTOP.IP, MODE.TSX, TRIG.IP: bound to the
	                                        IP of the FUP that follows them */
	unsigned fup_held_n;
	struct aux_item br_held[AUX_HELD];  /* PIP, VMCS while tracing: bound to the next branch
	                                        that changes context (far, async, disable) */
	unsigned br_held_n;
	uint8_t pgd_split;          /* a disable at the branch pgd_at (fall after it) comes next,
	                               after the PIP/VMCS bound to that branch */
	uint64_t pgd_at, pgd_fall;
	uint8_t ovf_lost_ip;        /* SKD010: an OVF without FUP; the next PSB+ resumes */
	uint8_t has_resume_ip;      /* tracing was last disabled asynchronously, at resume_ip */
	uint64_t resume_ip;         /* the IP an asynchronous disable stopped at */
	uint8_t spec;               /* the instructions now walked are speculative (in a TSX
	                               transaction at execution time; in_tx is at read time) */
	unsigned no_progress;       /* blocks walked since a packet was consumed */
	/* block cache */
	struct blk *blk;            /* blocks */
	uint32_t nblk, capblk;      /* used, allocated */
	int32_t *hash;              /* open-addressing table of block indices (-1 empty) */
	uint32_t hash_mask;         /* table size - 1 */
	uint8_t **chunk;            /* instruction length pool: chunks that never move */
	uint32_t nchunk, capchunk;  /* chunks allocated, slots */
	uint32_t cur_chunk;         /* chunk being filled */
	uint32_t chunk_used;        /* bytes used in it */
	uint32_t retire;            /* chunks [0, retire) belong to a flushed cache */
	uint64_t image_gen;         /* image generation the cache was built for */
	const uint64_t *gen_ref;    /* the image's live generation number */
	int32_t cur_blk;            /* block of the current ip if known (-1) */
	unsigned chain_log;         /* log2 of its slots: 8 .. CHAIN_LOG_MAX by the trace size */
	struct chain *chain;        /* chain cache of ptrec_pt_flow_count (1 << chain_log slots;
	                               NULL until it first runs); emptied with the block cache */
	struct span *span;          /* span cache of ptrec_pt_flow_count (as many slots; NULL
	                               until a first span is kept; in span_mem, zeroed: its pages
	                               are only touched where spans are kept) */
	void *span_mem;
	unsigned span_wait;         /* places to pass before the next span lookup */
	unsigned span_backoff;      /* span_wait after the next span that cannot be built */
	uint8_t span_mtc;           /* a span held an MTC: their payloads do not choose slots */
	uint64_t (*span_pay)[SPAN_HASHED / 8]; /* per span slot, once a span held an MTC (else
	                               NULL): the bits of its first SPAN_HASHED bytes that are not
	                               compared (its MTCs' payloads) */
	uint8_t hot;                /* ptrec_pt_flow_next_run may try its hot path: ST_ENABLED, cur_blk
	                               known, no PTW queued, no chunks to retire (set only when
	                               next_run_refill returns, cleared by ptrec_pt_flow_next_runs; read only
	                               by ptrec_pt_flow_next_run) */
	/* instruction iterator */
	struct ptrec_pt_flow_run it_run;  /* current run */
	uint32_t it_i;              /* next instruction index in it_run */
	uint64_t it_ip;             /* its address */
	int it_have;                /* it_run is valid */
	int it_event_done;          /* it_run's event was delivered */
	/* segments (ptrec_pt_flow_decode_tail) */
	size_t stop_sync;           /* 0 or: stop where a PSB at or after it is bound */
	int raw_time;               /* event times are not ordered (order_time) */
	int stopped;                /* stopped at stop_sync */
	long first_sync;            /* offset of the first PSB synced at (-1: none yet) */
	struct flow_key key_first;  /* the state right after that sync */
	struct flow_key key_stop;   /* the state where it stopped */
	struct flow_key key_next;   /* key_first of the segment decoded before the restart */
	long next_sync;             /* and its first_sync */
	struct ptrec_pt_flow_stats stats; /* counters */
};

/* ---- shared between the pt_flow*.c files ------------------------------------------------ */

/* Hidden: called from the other pt_flow*.c files only, never from outside the decoder. */
#define PT_FLOW_HIDDEN __attribute__((visibility("hidden")))

/* pt_flow_blk.c: decodes the block at ip into the cache.  Returns its index or -PTREC_ENOMEM. */
PT_FLOW_HIDDEN int32_t pt_flow_blk_decode(struct ptrec_pt_flow *f, uint64_t ip, unsigned mode);

/* pt_flow_blk.c: frees the chunks a cache flush retired (called at the start of each public
 * call). */
PT_FLOW_HIDDEN void pt_flow_retire_chunks(struct ptrec_pt_flow *f);

/* pt_flow_chain.c: empties the chain cache of ptrec_pt_flow_count (nothing when it has none). */
PT_FLOW_HIDDEN void pt_flow_chain_clear(struct ptrec_pt_flow *f);

/* pt_flow.c: reads packets until the look-ahead item is known or, unless want_tip, a TNT
 * packet was queued. */
PT_FLOW_HIDDEN void pt_flow_lookahead(struct ptrec_pt_flow *f, int want_tip);

/* pt_flow.c: the next run through the general walk (and the queued auxiliary items): 1 with a
 * run, 0 at the end, or a negative error. */
PT_FLOW_HIDDEN int pt_flow_next_run_slow(struct ptrec_pt_flow *f, struct ptrec_pt_flow_run *run);

/* ---- block cache ------------------------------------------------------------------------ */

static inline uint32_t blk_hash(uint64_t ip, unsigned mode)
{
	uint64_t h = (ip ^ ((uint64_t)mode << 62)) * 0x9e3779b97f4a7c15ull;
	return (uint32_t)(h >> 32);
}

/* Returns the cached block at (ip, mode), or -1 when it is not cached; counts nothing. */
static inline int32_t blk_peek(const struct ptrec_pt_flow *f, uint64_t ip, unsigned mode)
{
	uint32_t k = blk_hash(ip, mode) & f->hash_mask;
	for (int32_t i; (i = f->hash[k]) >= 0; k = (k + 1) & f->hash_mask)
		if (f->blk[i].start == ip && f->blk[i].mode == mode)
			return i;
	return -1;
}

/* Returns the cached block at (ip, mode), or -1 when it is not cached (nothing decoded). */
static inline int32_t blk_find(struct ptrec_pt_flow *f, uint64_t ip, unsigned mode)
{
	int32_t i = blk_peek(f, ip, mode);
	f->stats.block_hits += i >= 0;
	return i;
}

/* Returns the cached block at (ip, mode), decoding it on a miss; or -PTREC_ENOMEM. */
static inline int32_t blk_get(struct ptrec_pt_flow *f, uint64_t ip, unsigned mode)
{
	int32_t i = blk_find(f, ip, mode);
	return i >= 0 ? i : pt_flow_blk_decode(f, ip, mode);
}

/* The block an indirect branch or return of the current block reaches at to, as the general
 * walk finds it (succ_ind when it is the one, else a lookup that becomes succ_ind), or -1 when
 * it is not cached (then nothing changed). */
static inline int32_t ind_succ(struct ptrec_pt_flow *f, uint64_t to)
{
	struct blk *b = &f->blk[f->cur_blk];
	int32_t next = b->succ_ind;
	if (next >= 0 && f->blk[next].start == to && f->blk[next].mode == f->mode)
		return next;
	next = blk_find(f, to, f->mode);
	if (next >= 0)
		b->succ_ind = next;
	return next;
}

static inline void ret_push(struct ptrec_pt_flow *f, uint64_t ip)
{
	f->ret[f->ret_top] = ip;
	f->ret_top = (f->ret_top + 1) % RETSTACK_SIZE;
	if (f->ret_n < RETSTACK_SIZE)
		f->ret_n++;
}

/* A direct near call pushes its return address for RET compression, except a call to the
 * next instruction (CALL $+0, which position-independent code uses to read the IP and never
 * returns from): libipt does not push it, and neither does this decoder. */
static inline void call_push(struct ptrec_pt_flow *f, const struct blk *b)
{
	if (b->dest[1] != b->dest[0])
		ret_push(f, b->dest[0]);
}

/* Sets nx's time to now. */
static inline void nx_time(struct ptrec_pt_flow *f)
{
	f->nx.tflags = (uint8_t)ptrec_pt_time_now(&f->time, &f->nx.tsc);
}

#endif
