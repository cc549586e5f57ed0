/* pt_flow_blk.c — the PT flow decoder's block cache (pt_flow_blk.h): straight-line code up to and
 * including the next branch, decoded once from the code image (keyed by address and mode, found
 * with blk_get), its flush, and the pool of instruction lengths the blocks point into. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "decode/pt_flow_blk.h"

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

void pt_flow_blk_flush(struct ptrec_pt_flow *f)
{
	f->nblk = 0;
	f->retire = f->nchunk; /* freed at the next call: runs may still point there */
	f->chunk_used = CHUNK_SIZE;
	if (f->hash)
		memset(f->hash, 0xff, ((size_t)f->hash_mask + 1) * sizeof(*f->hash));
	f->blk_flushes++;
	f->cur_blk = -1;
}

/* Frees the chunks a cache flush retired (called at the start of each public call). */
void pt_flow_retire_chunks(struct ptrec_pt_flow *f)
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
int32_t pt_flow_blk_decode(struct ptrec_pt_flow *f, uint64_t ip, unsigned mode)
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
