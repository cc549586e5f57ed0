/* zstd_decode.c — a Zstandard frame decoder (RFC 8878) into a buffer of known size: raw, RLE
 * and compressed blocks; literals raw, RLE or Huffman-coded (1 or 4 streams, FSE-compressed or
 * direct weights, tree reuse); sequences with predefined, RLE, FSE-compressed and repeated
 * tables; repeat offsets; the XXH64 content checksum.  Pure and bounded: every read is checked
 * against its stream, every write against the output, every loop consumes input or output. */
#include "config.h"

#include <string.h>

#include "ptrec.h"
#include "symbols/decompress.h"

#define MAX_AL_LL 9
#define MAX_AL_ML 9
#define MAX_AL_OF 8
#define HUF_MAX_BITS 11
#define BLOCK_MAX (128u << 10)

/* ---- bit streams ---- */

/* A forward LSB-first reader (FSE table descriptions). */
struct fbits {
	const uint8_t *p;
	size_t len;
	uint64_t pos;   /* bits consumed */
};

static uint32_t fpeek(const struct fbits *b, unsigned n)
{
	uint64_t v = 0;
	size_t byte = (size_t)(b->pos >> 3);
	for (unsigned i = 0; i < 5 && byte + i < b->len; i++)
		v |= (uint64_t)b->p[byte + i] << (8 * i);
	return (uint32_t)((v >> (b->pos & 7)) & ((1ull << n) - 1));
}

/* A backward reader: the stream is read from its last bit down (Huffman and FSE streams).
 * Bits before the start read as zeros; pos then goes negative. */
struct rbits {
	const uint8_t *p;
	size_t len;
	int64_t pos;    /* bits still unread */
};

static int rb_init(struct rbits *b, const uint8_t *p, size_t len)
{
	unsigned hi = 7;
	if (!len || !p[len - 1])
		return -1;
	while (!(p[len - 1] >> hi))
		hi--;
	b->p = p;
	b->len = len;
	b->pos = (int64_t)len * 8 - 8 + hi;  /* the top 1 bit is padding */
	return 0;
}

static uint64_t rb_read(struct rbits *b, unsigned n)
{
	uint64_t v = 0;
	int64_t start;
	if (!n)
		return 0;
	if (b->pos <= 0) {
		b->pos -= n;
		return 0;
	}
	start = b->pos - n;
	for (int64_t i = (start < 0 ? 0 : start) >> 3; i <= (b->pos - 1) >> 3 && i >= 0; i++)
		v |= (uint64_t)b->p[i] << (8 * (i - (start < 0 ? 0 : start >> 3)));
	if (start < 0) {
		v = (v & ((1ull << (n + start)) - 1)) << -start;
	} else {
		v >>= start & 7;
		v &= n == 64 ? ~0ull : (1ull << n) - 1;
	}
	b->pos = start;
	return v;
}

/* ---- FSE ---- */

struct fse_entry {
	uint16_t symbol;
	uint8_t bits;
	uint16_t base;
};

struct fse {
	struct fse_entry t[1u << MAX_AL_LL];
	unsigned al;          /* accuracy log */
};

static unsigned highbit(uint32_t v)
{
	unsigned r = 0;
	while (v >>= 1)
		r++;
	return r;
}

/* Builds a decoding table from normalized counts (-1: "less than 1"). */
static int fse_build(struct fse *f, const int16_t *norm, unsigned nsym, unsigned al)
{
	unsigned size = 1u << al, high = size - 1, pos = 0;
	unsigned step = (size >> 1) + (size >> 3) + 3;
	uint16_t next[256];

	unsigned total = 0;

	if (nsym > 256)
		return -1;
	for (unsigned s = 0; s < nsym; s++)
		total += norm[s] < 0 ? (norm[s] == -1 ? 1u : 1u << 20) : (unsigned)norm[s];
	if (total != size)
		return -1;
	f->al = al;
	for (unsigned s = 0; s < nsym; s++) {
		if (norm[s] == -1) {
			f->t[high--].symbol = (uint16_t)s;
			next[s] = 1;
		} else {
			next[s] = (uint16_t)norm[s];
		}
	}
	for (unsigned s = 0; s < nsym; s++)
		for (int i = 0; i < norm[s]; i++) {
			f->t[pos].symbol = (uint16_t)s;
			do
				pos = (pos + step) & (size - 1);
			while (pos > high);
		}
	if (pos)
		return -1;
	for (unsigned u = 0; u < size; u++) {
		unsigned s = f->t[u].symbol, ns = next[s]++;
		if (!ns)
			return -1;
		f->t[u].bits = (uint8_t)(al - highbit(ns));
		f->t[u].base = (uint16_t)((ns << f->t[u].bits) - size);
	}
	return 0;
}

/* Reads an FSE table description at p (at most len bytes) for symbols up to max_sym and an
 * accuracy log up to max_al.  Returns the bytes used, or -1. */
static long fse_read(struct fse *f, const uint8_t *p, size_t len, unsigned max_sym,
                     unsigned max_al)
{
	struct fbits b = {p, len, 0};
	int16_t norm[256];
	unsigned al, sym = 0, prev0 = 0;
	int remaining, threshold, nbits;

	if (!len)
		return -1;
	al = (p[0] & 15) + 5;
	b.pos = 4;
	if (al > max_al)
		return -1;
	remaining = (1 << al) + 1;
	threshold = 1 << al;
	nbits = (int)al + 1;
	while (remaining > 1 && sym <= max_sym) {
		int max, count;
		if (prev0) {
			unsigned rep;
			do {
				rep = fpeek(&b, 2);
				b.pos += 2;
				for (unsigned k = 0; k < rep; k++) {
					if (sym > max_sym)
						return -1;
					norm[sym++] = 0;
				}
			} while (rep == 3 && b.pos < (uint64_t)len * 8);
			prev0 = 0;
			continue;
		}
		max = (2 * threshold - 1) - remaining;
		if ((int)(fpeek(&b, (unsigned)nbits) & (uint32_t)(threshold - 1)) < max) {
			count = (int)(fpeek(&b, (unsigned)nbits) & (uint32_t)(threshold - 1));
			b.pos += (unsigned)nbits - 1;
		} else {
			count = (int)(fpeek(&b, (unsigned)nbits) & (uint32_t)(2 * threshold - 1));
			if (count >= threshold)
				count -= max;
			b.pos += (unsigned)nbits;
		}
		count--;
		remaining -= count < 0 ? -count : count;
		norm[sym++] = (int16_t)count;
		prev0 = !count;
		while (remaining < threshold) {
			nbits--;
			threshold >>= 1;
		}
		if (b.pos > (uint64_t)len * 8)
			return -1;
	}
	if (remaining != 1 || b.pos > (uint64_t)len * 8)
		return -1;
	if (fse_build(f, norm, sym, al))
		return -1;
	return (long)((b.pos + 7) / 8);
}

static int fse_rle(struct fse *f, unsigned symbol)
{
	f->al = 0;
	f->t[0].symbol = (uint16_t)symbol;
	f->t[0].bits = 0;
	f->t[0].base = 0;
	return 0;
}

/* ---- Huffman ---- */

struct huf {
	uint8_t sym[1u << HUF_MAX_BITS];
	uint8_t bits[1u << HUF_MAX_BITS];
	unsigned max_bits;
	int ready;
};

static int huf_build(struct huf *h, const uint8_t *w, unsigned n)
{
	uint32_t total = 0, rank[HUF_MAX_BITS + 2];
	unsigned count[HUF_MAX_BITS + 2], maxb, last;

	memset(count, 0, sizeof(count));
	for (unsigned s = 0; s < n; s++) {
		if (w[s] > HUF_MAX_BITS)
			return -1;
		if (w[s])
			total += 1u << (w[s] - 1);
	}
	if (!total)
		return -1;
	maxb = highbit(total) + 1;
	if (maxb > HUF_MAX_BITS)
		return -1;
	/* The last weight makes the total the next power of two. */
	{
		uint32_t rest = (1u << maxb) - total;
		if (rest & (rest - 1))
			return -1;
		last = highbit(rest) + 1;
	}
	if (n >= 256)
		return -1;
	for (unsigned s = 0; s < n; s++)
		count[w[s]]++;
	count[last]++;
	rank[1] = 0;
	for (unsigned k = 1; k <= maxb; k++)
		rank[k + 1] = rank[k] + (count[k] << (k - 1));
	for (unsigned s = 0; s <= n; s++) {
		unsigned wt = s < n ? w[s] : last, span;
		if (!wt)
			continue;
		span = 1u << (wt - 1);
		for (unsigned i = 0; i < span; i++) {
			h->sym[rank[wt] + i] = (uint8_t)s;
			h->bits[rank[wt] + i] = (uint8_t)(maxb + 1 - wt);
		}
		rank[wt] += span;
	}
	h->max_bits = maxb;
	h->ready = 1;
	return 0;
}

/* Reads a Huffman tree description.  Returns the bytes used, or -1. */
static long huf_read(struct huf *h, const uint8_t *p, size_t len)
{
	uint8_t w[256];
	unsigned n = 0, hdr;

	if (!len)
		return -1;
	hdr = p[0];
	if (hdr >= 128) {
		n = hdr - 127;
		if (1 + (n + 1) / 2 > len)
			return -1;
		for (unsigned i = 0; i < n; i++)
			w[i] = (uint8_t)(i & 1 ? p[1 + i / 2] & 15 : p[1 + i / 2] >> 4);
		if (huf_build(h, w, n))
			return -1;
		return (long)(1 + (n + 1) / 2);
	} else {
		struct fse f;
		struct rbits b;
		long used;
		unsigned s1, s2;
		if (!hdr || hdr + 1u > len)
			return -1;
		used = fse_read(&f, p + 1, hdr, 255, 6);
		if (used < 0 || (size_t)used >= hdr || rb_init(&b, p + 1 + used, hdr - (size_t)used))
			return -1;
		s1 = (unsigned)rb_read(&b, f.al);
		s2 = (unsigned)rb_read(&b, f.al);
		for (;;) {
			if (n >= 255)
				return -1;
			w[n++] = (uint8_t)f.t[s1].symbol;
			s1 = f.t[s1].base + (unsigned)rb_read(&b, f.t[s1].bits);
			if (b.pos < 0) {
				w[n++] = (uint8_t)f.t[s2].symbol;
				break;
			}
			if (n >= 255)
				return -1;
			w[n++] = (uint8_t)f.t[s2].symbol;
			s2 = f.t[s2].base + (unsigned)rb_read(&b, f.t[s2].bits);
			if (b.pos < 0) {
				w[n++] = (uint8_t)f.t[s1].symbol;
				break;
			}
		}
		if (huf_build(h, w, n))
			return -1;
		return (long)(1 + hdr);
	}
}

static int huf_stream(const struct huf *h, const uint8_t *p, size_t len, uint8_t *out, size_t n)
{
	struct rbits b;
	if (rb_init(&b, p, len))
		return -1;
	for (size_t i = 0; i < n; i++) {
		int64_t pos = b.pos;
		unsigned idx = (unsigned)rb_read(&b, h->max_bits);
		out[i] = h->sym[idx];
		b.pos = pos - h->bits[idx];
		if (b.pos < 0)
			return -1;
	}
	return b.pos == 0 ? 0 : -1;
}

/* ---- frames and blocks ---- */

struct zctx {
	struct huf huf;
	struct fse ll, of, ml;
	int have_ll, have_of, have_ml;
	uint32_t rep[3];
	uint8_t lit[BLOCK_MAX];
};

static const int16_t ll_default[36] = {4, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 2, 2,
                                       2, 2, 2, 2, 2, 2, 2, 3, 2, 1, 1, 1, 1, 1, -1, -1, -1, -1};
static const int16_t ml_default[53] = {1, 4, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                                       1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                                       1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1, -1, -1};
static const int16_t of_default[29] = {1, 1, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                                       1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1};
static const uint32_t ll_base[36] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
                                     16, 18, 20, 22, 24, 28, 32, 40, 48, 64, 128, 256, 512,
                                     1024, 2048, 4096, 8192, 16384, 32768, 65536};
static const uint8_t ll_bits[36] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1,
                                    2, 2, 3, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
static const uint32_t ml_base[53] = {3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18,
                                     19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32,
                                     33, 34, 35, 37, 39, 41, 43, 47, 51, 59, 67, 83, 99, 131,
                                     259, 515, 1027, 2051, 4099, 8195, 16387, 32771, 65539};
static const uint8_t ml_bits[53] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3,
                                    3, 4, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

struct zout {
	uint8_t *p;
	size_t len, pos;
};

/* Decodes the literals section.  Returns the bytes used, or -1; *nlit gets the count. */
static long literals(struct zctx *z, const uint8_t *p, size_t len, size_t *nlit)
{
	unsigned type, fmt;
	size_t regen, comp = 0, hdr;

	if (!len)
		return -1;
	type = p[0] & 3;
	fmt = (p[0] >> 2) & 3;
	if (type < 2) {
		switch (fmt) {
		case 0: case 2: hdr = 1; regen = p[0] >> 3; break;
		case 1:
			hdr = 2;
			if (len < 2)
				return -1;
			regen = (p[0] >> 4) | (size_t)p[1] << 4;
			break;
		default:
			hdr = 3;
			if (len < 3)
				return -1;
			regen = (p[0] >> 4) | (size_t)p[1] << 4 | (size_t)p[2] << 12;
			break;
		}
		if (regen > BLOCK_MAX)
			return -1;
		if (type == 0) {
			if (len - hdr < regen)
				return -1;
			memcpy(z->lit, p + hdr, regen);
			*nlit = regen;
			return (long)(hdr + regen);
		}
		if (len - hdr < 1)
			return -1;
		memset(z->lit, p[hdr], regen);
		*nlit = regen;
		return (long)(hdr + 1);
	}
	{
		unsigned streams = fmt == 0 ? 1 : 4;
		uint64_t v = 0;
		long tree = 0;
		size_t bits = fmt < 2 ? 10 : fmt == 2 ? 14 : 18;
		hdr = fmt < 2 ? 3 : fmt == 2 ? 4 : 5;
		if (len < hdr)
			return -1;
		for (size_t i = 0; i < hdr; i++)
			v |= (uint64_t)p[i] << (8 * i);
		regen = (size_t)((v >> 4) & ((1ull << bits) - 1));
		comp = (size_t)((v >> (4 + bits)) & ((1ull << bits) - 1));
		if (regen > BLOCK_MAX || comp > len - hdr)
			return -1;
		p += hdr;
		if (type == 2) {
			tree = huf_read(&z->huf, p, comp);
			if (tree < 0)
				return -1;
		} else if (!z->huf.ready) {
			return -1;
		}
		if (streams == 1) {
			if (huf_stream(&z->huf, p + tree, comp - (size_t)tree, z->lit, regen))
				return -1;
		} else {
			const uint8_t *s = p + tree;
			size_t rest = comp - (size_t)tree, sz[4], each = (regen + 3) / 4, done = 0;
			if (rest < 6)
				return -1;
			sz[0] = s[0] | (size_t)s[1] << 8;
			sz[1] = s[2] | (size_t)s[3] << 8;
			sz[2] = s[4] | (size_t)s[5] << 8;
			if (sz[0] + sz[1] + sz[2] > rest - 6 || each * 3 > regen)
				return -1;
			sz[3] = rest - 6 - sz[0] - sz[1] - sz[2];
			s += 6;
			for (unsigned k = 0; k < 4; k++) {
				size_t n = k < 3 ? each : regen - 3 * each;
				if (huf_stream(&z->huf, s, sz[k], z->lit + done, n))
					return -1;
				s += sz[k];
				done += n;
			}
		}
		*nlit = regen;
		return (long)(hdr + comp);
	}
}

/* Reads one table of the sequences section. */
static long seq_table(struct fse *f, int *have, unsigned mode, const uint8_t *p, size_t len,
                      const int16_t *def, unsigned ndef, unsigned def_al, unsigned max_sym,
                      unsigned max_al)
{
	switch (mode) {
	case 0:
		*have = !fse_build(f, def, ndef, def_al);
		return *have ? 0 : -1;
	case 1:
		if (!len || p[0] > max_sym)
			return -1;
		*have = 1;
		fse_rle(f, p[0]);
		return 1;
	case 2: {
		long n = fse_read(f, p, len, max_sym, max_al);
		*have = n >= 0;
		return n;
	}
	default:
		return *have ? 0 : -1;
	}
}

static int sequences(struct zctx *z, const uint8_t *p, size_t len, size_t nlit, struct zout *o)
{
	size_t nseq, lit = 0;
	unsigned modes;
	long n;
	struct rbits b;
	unsigned sll, sof, sml;

	if (!len)
		return -1;
	if (p[0] < 128) {
		nseq = p[0];
		p++, len--;
	} else if (p[0] < 255) {
		if (len < 2)
			return -1;
		nseq = ((size_t)(p[0] - 128) << 8) + p[1];
		p += 2, len -= 2;
	} else {
		if (len < 3)
			return -1;
		nseq = p[1] + ((size_t)p[2] << 8) + 0x7f00;
		p += 3, len -= 3;
	}
	if (nseq) {
		if (!len || (p[0] & 3))
			return -1;
		modes = p[0];
		p++, len--;
		n = seq_table(&z->ll, &z->have_ll, modes >> 6, p, len, ll_default, 36, 6, 35, MAX_AL_LL);
		if (n < 0)
			return -1;
		p += n, len -= (size_t)n;
		n = seq_table(&z->of, &z->have_of, (modes >> 4) & 3, p, len, of_default, 29, 5, 31,
		              MAX_AL_OF);
		if (n < 0)
			return -1;
		p += n, len -= (size_t)n;
		n = seq_table(&z->ml, &z->have_ml, (modes >> 2) & 3, p, len, ml_default, 53, 6, 52,
		              MAX_AL_ML);
		if (n < 0)
			return -1;
		p += n, len -= (size_t)n;
		if (rb_init(&b, p, len))
			return -1;
		sll = (unsigned)rb_read(&b, z->ll.al);
		sof = (unsigned)rb_read(&b, z->of.al);
		sml = (unsigned)rb_read(&b, z->ml.al);
	}
	for (size_t i = 0; i < nseq; i++) {
		unsigned llc = z->ll.t[sll].symbol, ofc = z->of.t[sof].symbol;
		unsigned mlc = z->ml.t[sml].symbol;
		uint64_t ofv, ll, ml, off;
		if (llc > 35 || mlc > 52 || ofc > 31)
			return -1;
		ofv = (1ull << ofc) + rb_read(&b, ofc);
		ml = ml_base[mlc] + rb_read(&b, ml_bits[mlc]);
		ll = ll_base[llc] + rb_read(&b, ll_bits[llc]);
		if (ofv > 3) {
			off = ofv - 3;
			z->rep[2] = z->rep[1];
			z->rep[1] = z->rep[0];
			z->rep[0] = (uint32_t)off;
		} else {
			unsigned idx = (unsigned)ofv - 1 + (ll == 0);
			if (idx == 3) {
				off = (uint64_t)z->rep[0] - 1;
			} else {
				off = z->rep[idx];
			}
			if (idx) {
				if (idx >= 2)
					z->rep[2] = z->rep[1];
				z->rep[1] = z->rep[0];
				z->rep[0] = (uint32_t)off;
			}
		}
		if (i + 1 < nseq) {
			sll = z->ll.t[sll].base + (unsigned)rb_read(&b, z->ll.t[sll].bits);
			sml = z->ml.t[sml].base + (unsigned)rb_read(&b, z->ml.t[sml].bits);
			sof = z->of.t[sof].base + (unsigned)rb_read(&b, z->of.t[sof].bits);
		}
		if (b.pos < 0 || ll > nlit - lit || ll > o->len - o->pos)
			return -1;
		memcpy(o->p + o->pos, z->lit + lit, ll);
		o->pos += ll;
		lit += ll;
		if (!off || off > o->pos || ml > o->len - o->pos)
			return -1;
		for (uint64_t k = 0; k < ml; k++, o->pos++)
			o->p[o->pos] = o->p[o->pos - off];
	}
	if (nseq && b.pos != 0)
		return -1;
	if (nlit - lit > o->len - o->pos)
		return -1;
	memcpy(o->p + o->pos, z->lit + lit, nlit - lit);
	o->pos += nlit - lit;
	return 0;
}

/* ---- XXH64 (the frame's content checksum) ---- */

#define P1 11400714785074694791ull
#define P2 14029467366897019727ull
#define P3 1609587929392839161ull
#define P4 9650029242287828579ull
#define P5 2870177450012600261ull

static uint64_t rotl(uint64_t x, unsigned r) { return (x << r) | (x >> (64 - r)); }
static uint64_t le64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static uint32_t le32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t round1(uint64_t acc, uint64_t in) { return rotl(acc + in * P2, 31) * P1; }
static uint64_t merge(uint64_t acc, uint64_t v) { return (acc ^ round1(0, v)) * P1 + P4; }

static uint64_t xxh64(const uint8_t *p, size_t len)
{
	const uint8_t *end = p + len;
	uint64_t h;

	if (len >= 32) {
		uint64_t v1 = P1 + P2, v2 = P2, v3 = 0, v4 = 0 - P1;
		do {
			v1 = round1(v1, le64(p));
			v2 = round1(v2, le64(p + 8));
			v3 = round1(v3, le64(p + 16));
			v4 = round1(v4, le64(p + 24));
			p += 32;
		} while (end - p >= 32);
		h = rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18);
		h = merge(merge(merge(merge(h, v1), v2), v3), v4);
	} else {
		h = P5;
	}
	h += len;
	for (; end - p >= 8; p += 8)
		h = rotl(h ^ round1(0, le64(p)), 27) * P1 + P4;
	if (end - p >= 4) {
		h = rotl(h ^ (uint64_t)le32(p) * P1, 23) * P2 + P3;
		p += 4;
	}
	for (; p < end; p++)
		h = rotl(h ^ *p * P5, 11) * P1;
	h ^= h >> 33;
	h *= P2;
	h ^= h >> 29;
	h *= P3;
	h ^= h >> 32;
	return h;
}

/* Decodes one frame at in.  Returns the bytes used, or a negative code. */
static long frame(struct zctx *z, const uint8_t *in, size_t len, struct zout *o)
{
	const uint8_t *p = in, *end = in + len;
	unsigned fhd, fcs_flag, single, checksum, did;
	size_t start = o->pos;
	uint64_t fcs = UINT64_MAX;
	static const unsigned did_size[4] = {0, 1, 2, 4};

	if (len < 5)
		return -PTREC_EFORMAT;
	fhd = p[4];
	p += 5;
	fcs_flag = fhd >> 6;
	single = (fhd >> 5) & 1;
	checksum = (fhd >> 2) & 1;
	if (fhd & 8)
		return -PTREC_EFORMAT;  /* reserved bit */
	if (!single) {
		if (p == end)
			return -PTREC_EFORMAT;
		p++;  /* window descriptor: the whole output is in memory */
	}
	if ((size_t)(end - p) < did_size[fhd & 3])
		return -PTREC_EFORMAT;
	did = 0;
	for (unsigned i = 0; i < did_size[fhd & 3]; i++)
		did |= (unsigned)p[i] << (8 * i);
	p += did_size[fhd & 3];
	if (did)
		return -PTREC_ENOSUPP;
	{
		unsigned n = fcs_flag == 0 ? single : 1u << fcs_flag;
		if ((size_t)(end - p) < n)
			return -PTREC_EFORMAT;
		if (n) {
			fcs = 0;
			for (unsigned i = 0; i < n; i++)
				fcs |= (uint64_t)p[i] << (8 * i);
			if (n == 2)
				fcs += 256;
		}
		p += n;
	}
	memset(&z->huf, 0, sizeof(z->huf));
	z->have_ll = z->have_of = z->have_ml = 0;
	z->rep[0] = 1;
	z->rep[1] = 4;
	z->rep[2] = 8;
	for (;;) {
		uint32_t bh;
		size_t bsize;
		unsigned type;
		if (end - p < 3)
			return -PTREC_EFORMAT;
		bh = p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16;
		p += 3;
		type = (bh >> 1) & 3;
		bsize = bh >> 3;
		if (type == 3 || bsize > BLOCK_MAX)
			return -PTREC_EFORMAT;
		if (type == 1) {
			if (end - p < 1 || bsize > o->len - o->pos)
				return -PTREC_EFORMAT;
			memset(o->p + o->pos, *p, bsize);
			o->pos += bsize;
			p++;
		} else {
			if ((size_t)(end - p) < bsize)
				return -PTREC_EFORMAT;
			if (type == 0) {
				if (bsize > o->len - o->pos)
					return -PTREC_EFORMAT;
				memcpy(o->p + o->pos, p, bsize);
				o->pos += bsize;
			} else {
				size_t nlit;
				long n = literals(z, p, bsize, &nlit);
				if (n < 0 || sequences(z, p + n, bsize - (size_t)n, nlit, o))
					return -PTREC_EFORMAT;
			}
			p += bsize;
		}
		if (bh & 1)
			break;
	}
	if (fcs != UINT64_MAX && fcs != o->pos - start)
		return -PTREC_EFORMAT;
	if (checksum) {
		if (end - p < 4 ||
		    le32(p) != (uint32_t)xxh64(o->p + start, o->pos - start))
			return -PTREC_EFORMAT;
		p += 4;
	}
	return (long)(p - in);
}

int ptrec_zstd_decompress(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len)
{
	struct zout o = {out, out_len, 0};
	struct zctx z;
	size_t pos = 0;

	while (pos < in_len) {
		uint32_t magic;
		long n;
		if (in_len - pos < 8)
			return -PTREC_EFORMAT;
		magic = le32(in + pos);
		if ((magic & 0xfffffff0u) == 0x184d2a50u) {
			uint32_t sz = le32(in + pos + 4);
			if (sz > in_len - pos - 8)
				return -PTREC_EFORMAT;
			pos += 8 + (size_t)sz;
			continue;
		}
		if (magic != 0xfd2fb528u)
			return -PTREC_EFORMAT;
		n = frame(&z, in + pos, in_len - pos, &o);
		if (n < 0)
			return (int)n;
		pos += (size_t)n;
	}
	return o.pos == out_len ? 0 : -PTREC_EFORMAT;
}
