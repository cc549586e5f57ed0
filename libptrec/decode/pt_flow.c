/* pt_flow.c — Intel PT instruction flow decoder with a basic-block cache.
 *
 * Structure: a packet cursor with one item of look-ahead (the next non-TNT packet that matters:
 * TIP, TIP.PGE, TIP.PGD, FUP pair, PSB+ sync point, OVF, end, error) and a TNT queue; a block
 * cache (straight-line code up to and including the next branch, keyed by address and mode,
 * with cached successors); and the walker that moves from block to block consuming TNT bits and
 * IP packets.  See pt_flow.h for the semantics. */
#include "config.h"

#include <stdlib.h>
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
	uint8_t pad_[17];   /* zero */
	uint64_t to;        /* the IP it ends at */
	uint64_t push[CHAIN_PUSH]; /* those return addresses */
	uint64_t pop[CHAIN_POP];   /* the return addresses it found on the stack, top first */
};

_Static_assert(sizeof(struct chain) == 128, "a chain is two cache lines");

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

/* ---- errata ----------------------------------------------------------------------------- */

/* Models (family 6) an erratum applies to, as Intel's errata documents list them (the cpu
 * lines of libipt's public test cases name the same parts). */
static const uint8_t skd010_models[] = {0x4e, 0x5e, 0x8e, 0x9e, 0xa5, 0xa6};
static const uint8_t skl014_models[] = {0x4e, 0x55, 0x5e, 0x8e, 0x9e, 0x66, 0x7d, 0x7e, 0xa5,
                                        0xa6, 0x6a, 0x6c, 0x8f, 0x8c, 0x8d, 0xa7, 0xa8, 0x97,
                                        0x9a, 0xbf, 0xad, 0xae, 0xb7, 0xb5, 0xaa, 0xac, 0xcf,
                                        0xba, 0xcc, 0xbd, 0xc5, 0xc6};
static const uint8_t bdm64_models[] = {0x3d, 0x47, 0x4f, 0x56};
static const uint8_t apl11_models[] = {0x5c, 0x5f, 0x7a, 0x86, 0x96, 0x9c, 0x97, 0x9a, 0xbf,
                                       0xb6, 0xaf, 0xb7, 0xb5, 0xaa, 0xac, 0xba, 0xcc, 0xdd,
                                       0xbd, 0xc5, 0xc6};
static const uint8_t apl12_models[] = {0x5c, 0x5f};

static int model_in(unsigned model, const uint8_t *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (list[i] == model)
			return 1;
	return 0;
}

#define MODEL_IN(m, list) model_in((m), (list), sizeof(list))

unsigned ptrec_pt_flow_cpu_errata(const struct ptrec_pt_flow_cpu *cpu)
{
	if (!cpu)
		return 0;
	if (cpu->family == 19 && cpu->model == 1)
		return PT_ERRATUM_SKL014 | PT_ERRATUM_SKD022 | PT_ERRATUM_BDM70;
	if (cpu->family != 6)
		return 0;
	unsigned e = 0, m = cpu->model;
	if (MODEL_IN(m, skd010_models))
		e |= PT_ERRATUM_SKD010 | PT_ERRATUM_SKD007;
	if (MODEL_IN(m, skl014_models))
		e |= PT_ERRATUM_SKL014 | PT_ERRATUM_SKD022 | PT_ERRATUM_BDM70;
	if (MODEL_IN(m, bdm64_models))
		e |= PT_ERRATUM_BDM64 | PT_ERRATUM_BDM70;
	if (m == 0x55)
		e |= PT_ERRATUM_BDM70;
	if (MODEL_IN(m, apl11_models))
		e |= PT_ERRATUM_APL11;
	if (MODEL_IN(m, apl12_models))
		e |= PT_ERRATUM_APL12;
	return e;
}

static int parse_num(const char *s, char **end, uint16_t *out)
{
	if (*s < '0' || *s > '9')
		return -1;
	unsigned long v = strtoul(s, end, 0);
	if (v > 0xffff)
		return -1;
	*out = (uint16_t)v;
	return 0;
}

int ptrec_pt_flow_parse_cpu(const char *s, struct ptrec_pt_flow_cpu *cpu)
{
	char *end;
	struct ptrec_pt_flow_cpu c = {0, 0, 0};
	if (!s || !cpu)
		return -PTREC_EINVAL;
	if (parse_num(s, &end, &c.family) || *end != '/')
		return -PTREC_EINVAL;
	if (parse_num(end + 1, &end, &c.model))
		return -PTREC_EINVAL;
	if (*end == '/') {
		if (parse_num(end + 1, &end, &c.stepping))
			return -PTREC_EINVAL;
	}
	if (*end)
		return -PTREC_EINVAL;
	*cpu = c;
	return 0;
}

/* ---- lifecycle -------------------------------------------------------------------------- */

/* Empties the chain cache of ptrec_pt_flow_count (nothing when it has none). */
static void chain_clear(struct ptrec_pt_flow *f)
{
	for (uint32_t i = 0; f->chain && i < (1u << f->chain_log); i++)
		f->chain[i].blk = -1;
}

static void cache_flush(struct ptrec_pt_flow *f)
{
	f->nblk = 0;
	f->retire = f->nchunk; /* freed at the next call: runs may still point there */
	f->chunk_used = CHUNK_SIZE;
	if (f->hash)
		memset(f->hash, 0xff, ((size_t)f->hash_mask + 1) * sizeof(*f->hash));
	chain_clear(f);
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
	for (uint32_t i = 0; i < f->nchunk; i++)
		free(f->chunk[i]);
	free(f->chunk);
	free(f);
}

const struct ptrec_pt_flow_stats *ptrec_pt_flow_stats(const struct ptrec_pt_flow *f)
{
	return &f->stats;
}

/* ---- block cache ------------------------------------------------------------------------ */

static inline uint32_t blk_hash(uint64_t ip, unsigned mode)
{
	uint64_t h = (ip ^ ((uint64_t)mode << 62)) * 0x9e3779b97f4a7c15ull;
	return (uint32_t)(h >> 32);
}

static int hash_grow(struct ptrec_pt_flow *f)
{
	uint32_t size = (f->hash_mask + 1) * 2;
	int32_t *h = malloc((size_t)size * sizeof(*h));
	if (!h)
		return -PTREC_ENOMEM;
	memset(h, 0xff, (size_t)size * sizeof(*h));
	for (uint32_t i = 0; i < f->nblk; i++) {
		uint32_t k = blk_hash(f->blk[i].start, f->blk[i].mode) & (size - 1);
		while (h[k] >= 0)
			k = (k + 1) & (size - 1);
		h[k] = (int32_t)i;
	}
	free(f->hash);
	f->hash = h;
	f->hash_mask = size - 1;
	return 0;
}


/* Makes room for n more lengths, appending a chunk when the current one is too full.  Chunks
 * never move and are only freed by retire_chunks, so lengths handed out in runs stay valid until
 * the next call into the decoder even across a cache flush. */
static int lens_reserve(struct ptrec_pt_flow *f, uint32_t n)
{
	if (f->nchunk > f->retire && f->chunk_used + n <= CHUNK_SIZE)
		return 0;
	if (f->nchunk == f->capchunk) {
		uint32_t cap = f->capchunk ? f->capchunk * 2 : 16;
		uint8_t **c = realloc(f->chunk, (size_t)cap * sizeof(*c));
		if (!c)
			return -PTREC_ENOMEM;
		f->chunk = c;
		f->capchunk = cap;
	}
	f->chunk[f->nchunk] = malloc(CHUNK_SIZE);
	if (!f->chunk[f->nchunk])
		return -PTREC_ENOMEM;
	f->cur_chunk = f->nchunk++;
	f->chunk_used = 0;
	return 0;
}

/* Frees the chunks a cache flush retired (called at the start of each public call). */
static void retire_chunks(struct ptrec_pt_flow *f)
{
	for (uint32_t i = 0; i < f->retire; i++)
		free(f->chunk[i]);
	memmove(f->chunk, f->chunk + f->retire, (f->nchunk - f->retire) * sizeof(*f->chunk));
	f->nchunk -= f->retire;
	f->cur_chunk = f->nchunk ? f->nchunk - 1 : 0;
	f->retire = 0;
}

/* 1 if the instruction at p (len bytes) is MOV CR3, r (0F 22 /r with ModRM.reg = 3, after
 * legacy and REX prefixes): the SDM generates PIP on it, and a CR3 filter may disable tracing
 * there. */
static int is_mov_cr3(const uint8_t *p, int len, unsigned mode)
{
	int i = 0;
	while (i < len && (p[i] == 0x66 || p[i] == 0x67 || p[i] == 0xf0 || p[i] == 0xf2 ||
	                   p[i] == 0xf3 || p[i] == 0x2e || p[i] == 0x36 || p[i] == 0x3e ||
	                   p[i] == 0x26 || p[i] == 0x64 || p[i] == 0x65))
		i++;
	if (mode == X86_MODE_64 && i < len && (p[i] & 0xf0) == 0x40)
		i++;
	return i + 2 < len && p[i] == 0x0f && p[i + 1] == 0x22 && ((p[i + 2] >> 3) & 7) == 3;
}

/* Decodes the block at ip into the cache.  Returns its index or -PTREC_ENOMEM. */
static int32_t blk_decode(struct ptrec_pt_flow *f, uint64_t ip, unsigned mode)
{
	if (f->nblk == f->capblk) {
		uint32_t cap = f->capblk ? f->capblk * 2 : 1024;
		struct blk *b = aligned_alloc(64, (size_t)cap * sizeof(*b));
		if (!b)
			return -PTREC_ENOMEM;
		if (f->nblk)
			memcpy(b, f->blk, (size_t)f->nblk * sizeof(*b));
		free(f->blk);
		f->blk = b;
		f->capblk = cap;
	}
	if ((f->nblk + 1) * 2 > f->hash_mask + 1 && hash_grow(f))
		return -PTREC_ENOMEM;
	if (lens_reserve(f, BLK_MAX_INSN))
		return -PTREC_ENOMEM;

	struct blk *b = &f->blk[f->nblk];
	memset(b, 0, sizeof(*b));
	b->start = ip;
	b->mode = (uint8_t)mode;
	b->len = f->chunk[f->cur_chunk] + f->chunk_used;
	b->succ[0] = b->succ[1] = b->succ_ind = -1;
	b->end = BLK_OPEN;

	uint8_t *lens = f->chunk[f->cur_chunk] + f->chunk_used;
	uint64_t cur = ip, end_ip = ip;
	unsigned n = 0;
	const struct ptrec_pt_img_section *sec = ptrec_pt_img_find(f->image, cur);
	while (n < BLK_MAX_INSN) {
		struct ptrec_x86_insn insn;
		int len;
		if (!sec || cur - sec->vaddr >= sec->size)
			sec = ptrec_pt_img_find(f->image, cur);
		if (!sec) {
			b->end = BLK_ERROR;
			b->err = -PTREC_ENOMAP;
			end_ip = cur;
			break;
		}
		uint64_t off = cur - sec->vaddr;
		uint64_t avail = sec->size - off;
		len = ptrec_x86_ild_decode(sec->bytes + off, avail < 15 ? (size_t)avail : 15, cur,
		                     (enum ptrec_x86_mode)mode, &insn);
		if (len == -PTREC_ETRUNC && avail < 15) {
			uint8_t tmp[15];
			size_t got = ptrec_pt_img_read(f->image, cur, tmp, sizeof(tmp));
			len = ptrec_x86_ild_decode(tmp, got, cur, (enum ptrec_x86_mode)mode, &insn);
		}
		if (len <= 0 || len > 15) {
			b->end = BLK_ERROR;
			b->err = len == -PTREC_ETRUNC ? -PTREC_ENOMAP : -PTREC_EFORMAT;
			end_ip = cur;
			break;
		}
		lens[n++] = (uint8_t)len;
		end_ip = cur;
		b->last_len = (uint8_t)len;
		if (insn.iclass != X86_IC_OTHER && insn.iclass != X86_IC_PTWRITE) {
			b->end = BLK_BRANCH;
			b->iclass = insn.iclass;
			if (insn.flags & X86_INSN_HAS_TARGET)
				b->dest[1] = insn.target;
			else if (insn.iclass == X86_IC_JCC || insn.iclass == X86_IC_JMP ||
			         insn.iclass == X86_IC_CALL)
				b->dest[1] = cur + (uint64_t)len; /* no target reported: treat as next */
			break;
		}
		if (len >= 3 && len <= (int)avail && is_mov_cr3(sec->bytes + off, len, mode)) {
			b->end = BLK_CR3;
			break;
		}
		cur += (uint64_t)len;
	}
	b->ninsn = (uint16_t)n;
	if (b->end == BLK_ERROR)
		b->last_len = 0;
	b->dest[0] = end_ip + b->last_len;
	b->at = end_ip;
	f->chunk_used += n;
	f->stats.blocks++;

	uint32_t k = blk_hash(ip, mode) & f->hash_mask;
	while (f->hash[k] >= 0)
		k = (k + 1) & f->hash_mask;
	f->hash[k] = (int32_t)f->nblk;
	return (int32_t)f->nblk++;
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
	return i >= 0 ? i : blk_decode(f, ip, mode);
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

static void ret_push(struct ptrec_pt_flow *f, uint64_t ip);

/* A direct near call pushes its return address for RET compression, except a call to the
 * next instruction (CALL $+0, which position-independent code uses to read the IP and never
 * returns from): libipt does not push it, and neither does this decoder. */
static void call_push(struct ptrec_pt_flow *f, const struct blk *b)
{
	if (b->dest[1] != b->dest[0])
		ret_push(f, b->dest[0]);
}

/* ---- packets ---------------------------------------------------------------------------- */

static void ret_push(struct ptrec_pt_flow *f, uint64_t ip)
{
	f->ret[f->ret_top] = ip;
	f->ret_top = (f->ret_top + 1) % RETSTACK_SIZE;
	if (f->ret_n < RETSTACK_SIZE)
		f->ret_n++;
}

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

/* Sets nx's time to now. */
static void nx_time(struct ptrec_pt_flow *f)
{
	f->nx.tflags = (uint8_t)ptrec_pt_time_now(&f->time, &f->nx.tsc);
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

/* Applies a status-only packet (in_psb: inside PSB+, where PIP and VMCS only refresh the
 * state).  Returns 1 if pkt was one, else 0. */
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
		aux_hold(f->fup_held, &f->fup_held_n, PT_FLOW_AUX_MWAIT, pkt->payload & 0xffffffffu,
		         pkt->payload >> 32);
		return 1;
	case PT_PKT_PWRE:
		for (unsigned i = 0; i < f->fup_held_n && !in_psb && f->state == ST_ENABLED; i++)
			if (f->fup_held[i].kind == PT_FLOW_AUX_MWAIT ||
			    f->fup_held[i].kind == PT_FLOW_AUX_EXSTOP) {
				aux_hold(f->fup_held, &f->fup_held_n, PT_FLOW_AUX_PWRE, pkt->sub,
				         pkt->payload2);
				return 1; /* the C-state entry of that MWAIT (release_held_pwre) */
			}
		aux_push(f, PT_FLOW_AUX_PWRE, pkt->sub, pkt->payload2, 0);
		return 1;
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
	enum ptrec_pt_packet_ctx ctx = f->ctx;
	struct ptrec_pt_packet pkt;
	while (pos < f->len) {
		int n = ptrec_pt_packet_decode(f->buf + pos, f->len - pos, &ctx, &pkt);
		if (n <= 0)
			return PT_PKT_INVALID;
		switch (pkt.type) {
		case PT_PKT_PAD: case PT_PKT_TSC: case PT_PKT_MTC: case PT_PKT_TMA: case PT_PKT_CYC:
		case PT_PKT_CBR: case PT_PKT_MNT: case PT_PKT_PIP: case PT_PKT_VMCS:
		case PT_PKT_MODE_EXEC: case PT_PKT_MODE_TSX: case PT_PKT_PWRE: case PT_PKT_PWRX:
		case PT_PKT_MWAIT: case PT_PKT_EXSTOP:
			pos += (size_t)n;
			break;
		case PT_PKT_TIP_PGD: /* APL11: a spurious TIP.PGD after OVF */
			if (f->errata & PT_ERRATUM_APL11) {
				pos += (size_t)n;
				break;
			}
			return pkt.type;
		default:
			return pkt.type;
		}
	}
	return PT_PKT_INVALID;
}

/* After OVF: 1 if a FUP (or, with SKD010, a TIP) says where execution resumes. */
static int ovf_fup_follows(struct ptrec_pt_flow *f)
{
	unsigned t = peek_flow_pkt(f, f->pos);
	return t == PT_PKT_FUP || (t == PT_PKT_TIP && (f->errata & PT_ERRATUM_SKD010));
}

/* Reads packets until the look-ahead item is known or, unless want_tip, a TNT packet was
 * queued.  Bounded by the trace length: every iteration consumes at least one byte or stops. */
static void lookahead(struct ptrec_pt_flow *f, int want_tip)
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
			release_held_pwre(f); /* the others' FUP was lost */
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
		lookahead(f, 0);
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
			lookahead(f, 0);
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
			if (f->tnt_n || (nx->kind == NX_NONE && (lookahead(f, 0), f->tnt_n))) {
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
				lookahead(f, 1);
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
	lookahead(f, 0);
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
		lookahead(f, 0);
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
 * overflow or disable can bind in this block.  Fills the whole run and returns 1 (the caller
 * counts it in the stats), or returns 0 without changing anything when the general walk must
 * handle the step. */
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
	if (b->end != BLK_BRANCH || (!f->tnt_n && !tip))
		return 0;
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

/* Where lookahead(f, 0) is to read the next packet: first the timing packets the hot paths
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
 * or long (02 a3 and 6 payload bytes with a stop bit), queued exactly as lookahead(f, 0) queues
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
 * bytes after its header, made the look-ahead item exactly as lookahead(f, 0) makes it.
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
 * lookahead(f, 0) must read it. */
static inline __attribute__((always_inline)) int fast_read(struct ptrec_pt_flow *f)
{
	fast_time(f);
	return fast_tnt(f) || fast_tip(f);
}

/* Tries the hot path for the next run (see fast_step). */
static inline __attribute__((always_inline)) int try_fast(struct ptrec_pt_flow *f,
                                                        struct ptrec_pt_flow_run *run)
{
	if (!HOT_PATHS || f->state != ST_ENABLED || f->cur_blk < 0 || *f->gen_ref != f->image_gen)
		return 0;
	if (!f->tnt_n && f->nx.kind == NX_NONE && !fast_read(f))
		lookahead(f, 0);
	if (f->aux_n || f->ptw_n || f->trig_n || !fast_step(f, run))
		return 0;
	f->stats.insns += run->ninsn;
	f->stats.events++;
	return 1;
}

static int next_run_slow(struct ptrec_pt_flow *f, struct ptrec_pt_flow_run *run);

/* Events come in execution order, so their times must not go back.  A stamp taken at an
 * earlier packet (a direct branch after an indirect one stamped at the TNT before the TIP,
 * branches behind a deferred TIP) is raised to the last event's time; a stamp more than
 * PT_TIME_SLIP behind is a new time (lost trace, a new run) and is kept. */
static inline void order_time(struct ptrec_pt_flow *f, struct ptrec_pt_flow_run *run)
{
	if (!f->raw_time)
		ptrec_pt_flow_order_time(&f->ev_tsc, &run->ev);
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
		retire_chunks(f);
	if (!try_fast(f, run))
		e = next_run_slow(f, run);
	if (e > 0)
		order_time(f, run);
	f->hot = HOT_PATHS && !f->retire && f->state == ST_ENABLED && f->cur_blk >= 0 && !f->aux_n &&
	         !f->ptw_n && !f->trig_n;
	return e;
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
		retire_chunks(f);
	while (n < max) {
		/* The hot loop: the state, the cache and the image cannot change under fast_step. */
		if (HOT_PATHS && f->state == ST_ENABLED && f->cur_blk >= 0 &&
		    *f->gen_ref == f->image_gen &&
		    !f->aux_n && !f->ptw_n && !f->trig_n) {
			size_t n0 = n;
			struct jcc_tally t = {0, 0, 0};
			while (n < max) {
				if (!f->tnt_n && f->nx.kind == NX_NONE && !fast_read(f)) {
					lookahead(f, 0);
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
		int e = next_run_slow(f, &runs[n]);
		if (e < 0)
			return n ? (int)n : e;
		if (e == 0)
			break;
		order_time(f, &runs[n]);
		n++;
	}
	return (int)n;
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

/* ---- chains (ptrec_pt_flow_count) --------------------------------------------------------- */

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
 * ptrec_pt_flow_count, in its state), built on a miss: counts it into c, *insns and *events
 * exactly as fast_step's runs would add up.  Returns 1, or 0 (nothing changed but a TIP read
 * ahead) when it is empty. */
static inline __attribute__((always_inline)) int chain_step(struct ptrec_pt_flow *f,
                                                            struct ptrec_pt_flow_counts *c,
                                                            uint64_t *insns, uint64_t *events)
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
	uint64_t hk = ((uint64_t)(uint32_t)cur << 32 | bits) ^ (uint64_t)nb << 58 ^ tip;
	uint32_t h = (uint32_t)((hk * 0x9e3779b97f4a7c15ull) >> 32) >> (32 - f->chain_log);
	struct chain *ch = &f->chain[h];
	int key = ch->blk == cur && ch->bits == bits && ch->nb == nb && ch->tip == tip;
	if (!key || !chain_pops_ok(f, ch)) {
		if (key) {
			uint64_t tos = f->ret[(top + RETSTACK_SIZE - 1) % RETSTACK_SIZE];
			uint32_t h2 = (uint32_t)(((hk ^ tos) * 0xff51afd7ed558ccdull) >> 32) >>
			              (32 - f->chain_log);
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
	c->kind[PTREC_BR_JCC] += ch->jcc;
	c->kind[PTREC_BR_JMP] += ch->jmp;
	c->kind[PTREC_BR_CALL] += ch->call;
	c->kind[PTREC_BR_RET] += ch->ret;
	c->jcc_taken += ch->taken;
	c->ret_compressed += ch->ret;
	*insns += ch->insns;
	*events += ch->steps;
	if (ch->ind) { /* the TIP was taken */
		c->kind[ch->ind]++;
		count_time(f, c, nx->tflags, nx->tsc);
		f->nx.kind = NX_NONE;
		return 1;
	}
	/* Chains that stop at a return of a call made before them (more than CHAIN_POP, or
	 * the window's end): take it as fast_step would (compressed, its target's block cached),
	 * with the same time. */
	const struct blk *b = &f->blk[ch->end];
	if (b->iclass == X86_IC_RET) {
		uint64_t to;
		int32_t next = compressed_ret(f, &to);
		if (next >= 0) {
			f->ip = to;
			f->cur_blk = next;
			c->kind[PTREC_BR_RET]++;
			c->ret_compressed++;
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
		chain_clear(f);
	}
	for (;;) {
		/* Nothing handed out needs its lengths: retired chunks can go at once. */
		if (f->retire)
			retire_chunks(f);
		if (HOT_PATHS && f->state == ST_ENABLED && f->cur_blk >= 0 &&
		    *f->gen_ref == f->image_gen &&
		    !f->aux_n && !f->ptw_n && !f->trig_n) {
			struct jcc_tally t = {0, 0, 0};
			uint64_t events = 0, jccs = 0;
			for (;;) {
				if (!f->tnt_n && f->nx.kind == NX_NONE && !fast_read(f)) {
					lookahead(f, 0);
					if (f->aux_n || f->ptw_n || f->trig_n)
						break;
				}
				unsigned ic = f->blk[f->cur_blk].iclass;
				if (f->chain && (f->tnt_n ? ic != X86_IC_OTHER
				                          : f->nx.kind == NX_TIP && ic > X86_IC_JCC) &&
				    chain_step(f, c, &t.insns, &events))
					continue;
				if (f->tnt_n && f->blk[f->cur_blk].iclass == X86_IC_JCC) {
					size_t m = jcc_burst(f, NULL, 0, SIZE_MAX, &t);
					if (!m)
						break; /* the successor is not cached */
					jccs += m;
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
			}
			c->kind[PTREC_BR_JCC] += jccs;
			c->jcc_taken += t.taken;
			f->stats.insns += t.insns;
			f->stats.events += events + jccs;
		}
		e = next_run_slow(f, &run);
		if (e <= 0)
			break;
		order_time(f, &run);
		count_run(c, &run);
	}
	c->insns += f->stats.insns - insns0;
	return e;
}

static int next_run_slow(struct ptrec_pt_flow *f, struct ptrec_pt_flow_run *run)
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
