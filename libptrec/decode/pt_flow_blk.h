/* pt_flow_blk.h — private to the PT flow decoder: the block cache's layout and lookups.  A block
 * is straight-line code up to and including the next branch, decoded once from the code image
 * (pt_flow_blk.c), keyed by address and mode, with its successors cached; the instruction
 * lengths live in a pool of chunks that never move. */
#ifndef PTREC_DECODE_PT_FLOW_BLK_H
#define PTREC_DECODE_PT_FLOW_BLK_H

#include "decode/pt_flow_state.h"

#define BLK_MAX_INSN 512      /* longest block; longer straight code continues in a new block */
#define BLK_CACHE_MAX (1u << 22) /* blocks before the cache is flushed (memory bound) */
#define CHUNK_SIZE 65536u     /* bytes per chunk of the instruction length pool */

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

/* Decodes the block at ip into the cache.  Returns its index or -PTREC_ENOMEM. */
PT_FLOW_HIDDEN int32_t pt_flow_blk_decode(struct ptrec_pt_flow *f, uint64_t ip, unsigned mode);

/* Empties the block cache (the image changed, or it is full).  The chunks of lengths are freed
 * by pt_flow_retire_chunks at the next call; blk_flushes counts the flushes, so that caches
 * keyed by block index (pt_flow_chain.c) know theirs are stale. */
PT_FLOW_HIDDEN void pt_flow_blk_flush(struct ptrec_pt_flow *f);

/* Frees the chunks a cache flush retired (called at the start of each public call). */
PT_FLOW_HIDDEN void pt_flow_retire_chunks(struct ptrec_pt_flow *f);


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

/* A direct near call pushes its return address for RET compression, except a call to the
 * next instruction (CALL $+0, which position-independent code uses to read the IP and never
 * returns from): libipt does not push it, and neither does this decoder. */
static inline void call_push(struct ptrec_pt_flow *f, const struct blk *b)
{
	if (b->dest[1] != b->dest[0])
		ret_push(f, b->dest[0]);
}

#endif
