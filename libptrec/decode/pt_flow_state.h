/* pt_flow_state.h — private to the PT flow decoder (pt_flow*.c): its state (struct ptrec_pt_flow:
 * the packet cursor, the look-ahead item, the TNT queue, the return stack, the queues of items
 * waiting to be delivered, the segment keys, the counters, and the pointers to the caches whose
 * layouts belong to pt_flow_blk.h and pt_flow_chain.c), its limits, and the small operations on
 * it every room uses (the return stack, an event's fields, the look-ahead item's time).
 *
 * The decoder's rooms, each including only the ones before it (tests/tool/test_pt_flow_rooms.sh):
 *   pt_flow_state.h    this state
 *   pt_flow_blk.h/.c   the block cache: code decoded once into blocks, their successors
 *   pt_flow_fast.h     the hot paths over cached blocks and the common packets
 *   pt_flow_query.h/.c event/query state: the packet cursor, the look-ahead item, status
 *                      packets and the items they queue or hold, PSB+, sync points
 *   pt_flow_resync.h/.c after an error: gaps, resync at the next IP; the errata the walk asks
 *   pt_flow_walk.h/.c  the slow path: the general walk and the states other than enabled
 *   pt_flow_chain.c    ptrec_pt_flow_count: the chain and span caches
 *   pt_flow.c          the driver: lifecycle, runs, instructions, segments, decode_last
 *   pt_flow_errata.c   which errata a CPU model has (no state)
 * Nothing else includes it: pt_flow.h is the interface. */
#ifndef PTREC_DECODE_PT_FLOW_STATE_H
#define PTREC_DECODE_PT_FLOW_STATE_H

#include <stdint.h>
#include <string.h>

#include "ptrec.h"
#include "decode/pt_flow.h"
#include "decode/pt_packet.h"

#define RETSTACK_SIZE 64      /* hardware return-compression depth */
#define NO_PROGRESS_LIMIT 200000 /* blocks walked without consuming a packet before giving up */
#define PTW_QUEUE 64          /* PTWRITE payloads waiting to be delivered */
#define TRIG_QUEUE 8          /* TRIGs waiting for the flow to reach their IP */
#define STRAIGHT_MAX 256      /* instructions followed to place a TRIG or a PTW without FUP */
#define AUX_QUEUE 64          /* status events waiting to be delivered */
#define AUX_HELD 8            /* items waiting for their FUP or their branch */
#define SPAN_HASHED 24        /* trace bytes a span covers at least (pt_flow_chain.c; its slot
                                 is chosen by them) */

/* The hot paths (fast_step and the loops around it) only take steps the general walk would take
 * the same way.  A test build with PT_FLOW_GENERAL_ONLY (tests/ptgen/flow_compare_general) has
 * none, every step through the general walk: the reference they are checked against. */
#ifdef PT_FLOW_GENERAL_ONLY
#define HOT_PATHS 0
#else
#define HOT_PATHS 1
#endif

/* The caches' entries (pt_flow_blk.h, pt_flow_chain.c). */
struct blk;
struct chain;
struct span;

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
	uint32_t at;       /* the decoder's position once the item is known, less off (the
	                      offset an error found while it is looked ahead is reported at: see
	                      nx_at; in the padding, so that nx stays 64 bytes for fast_tip) */
	const char *why;   /* NX_ERR: text */
	uint64_t ip;       /* TIP/PGE/PGD target, FUP IP, PSB+ IP, OVF resume IP */
	uint64_t ip2;      /* the TIP/TIP.PGD target after a FUP */
	uint64_t off;      /* trace offset of the packet */
	uint64_t psb_off;  /* NX_SYNC: offset of its PSB (resync point on a mismatch) */
	uint64_t tsc;      /* time when it was read */
};
_Static_assert(sizeof(struct nx) <= 64, "nx is cleared per TIP (fast_tip): one cache line");

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
	uint8_t mode_known;         /* mode was given by a MODE.Exec (not lost by an OVF since) */
	uint8_t psb_mode_bad;       /* the PSB+ read ahead gave another mode than the flow's */
	uint8_t gap_open;           /* a GAP was reported and decoding has not resumed yet */
	uint64_t gap_off;           /* its trace offset */
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
	uint64_t ptw_fup_off;       /* trace offset of the last FUP that gave a PTW's IP */
	uint8_t ptw_resumed;        /* a resync resumed at the oldest PTW's PTWRITE (once only) */
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
	                                        that changes context (far, async, disable); and
	                                        the CFE/EVD items of event trace (they come
	                                        first: pt_flow_release_cfe) */
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
	uint32_t blk_flushes;       /* block cache flushes so far (pt_flow_blk_flush) */
	unsigned chain_log;         /* log2 of its slots: 8 .. CHAIN_LOG_MAX by the trace size */
	struct chain *chain;        /* chain cache of ptrec_pt_flow_count (1 << chain_log slots;
	                               NULL until it first runs); emptied with the block cache */
	struct span *span;          /* span cache of ptrec_pt_flow_count (as many slots; NULL
	                               until a first span is kept; in span_mem, zeroed: its pages
	                               are only touched where spans are kept) */
	void *span_mem;
	uint32_t chain_flushes;     /* blk_flushes when the chain and span caches were last
	                               emptied: they hold block indices of that cache */
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
	uint64_t psb_mode_off;      /* psb_mode_bad: the offset of PSB+'s MODE.Exec that said it */
	uint8_t tnt_lost;           /* ST_RESYNC: TNT bits of unknown code were dropped since the
	                               error: a TIP is no resume point (pt_flow_step_resync) */
	uint8_t tnt_off_state;      /* ST_DISABLED: the bits queued came while tracing is off */
	uint8_t event_trace;        /* ptrec_pt_flow_set_event_trace */
	uint8_t iflag_known;        /* event_trace: iflag was given since the start or an OVF */
	uint8_t evd_pending;        /* EVD types (1 << type) held for the CFE that follows */
};

/* Hidden: called from the other pt_flow*.c files only, never from outside the decoder. */
#define PT_FLOW_HIDDEN __attribute__((visibility("hidden")))

static inline void ret_push(struct ptrec_pt_flow *f, uint64_t ip)
{
	f->ret[f->ret_top] = ip;
	f->ret_top = (f->ret_top + 1) % RETSTACK_SIZE;
	if (f->ret_n < RETSTACK_SIZE)
		f->ret_n++;
}

/* Pops the return stack into *ip: 0, or -1 when it is empty. */
static inline int ret_pop(struct ptrec_pt_flow *f, uint64_t *ip)
{
	if (!f->ret_n)
		return -1;
	f->ret_top = (f->ret_top + RETSTACK_SIZE - 1) % RETSTACK_SIZE;
	f->ret_n--;
	*ip = f->ret[f->ret_top];
	return 0;
}

/* Where the decoder is while nx is looked ahead: the offset an error of the flow is reported
 * at, as ptxed reports it (pt_insn_get_offset(3), "the decoder's current position"; the SDM
 * says nothing about a decoder's position).  It is the packet that completes the item: the
 * TIP or TIP.PGD of a FUP pair, the FUP that MODE.TSX/PTW/... wait for, the PSBEND of a PSB+;
 * past a TIP.PGD that nothing is bound to (it is used up once read, like a TNT packet, after
 * which the position is the next packet). */
static inline uint64_t nx_at(const struct nx *nx)
{
	return nx->off + nx->at;
}

/* Sets nx's time to now. */
static inline void nx_time(struct ptrec_pt_flow *f)
{
	f->nx.tflags = (uint8_t)ptrec_pt_time_now(&f->time, &f->nx.tsc);
}

/* Sets a run's event (its time only with PTREC_BRF_HAS_TIME in tflags). */
static inline void ev_set(struct ptrec_pt_flow_run *run, unsigned kind, uint64_t from, uint64_t to,
                          unsigned tflags, uint64_t tsc)
{
	run->ev.kind = (uint8_t)kind;
	run->ev.from = from;
	run->ev.to = to;
	run->ev.flags = (uint8_t)tflags;
	run->ev.timestamp = (tflags & PTREC_BRF_HAS_TIME) ? tsc : 0;
}

#endif
