/* inflate.c — DEFLATE (RFC 1951) inside a zlib wrapper (RFC 1950) into a buffer of known size:
 * stored, fixed and dynamic Huffman blocks, with a 10-bit lookup table in front of a canonical
 * bit-by-bit decoder for longer codes.  Pure and bounded: never writes past the output, never
 * reads past the input, and every loop consumes input or output. */
#include "config.h"

#include <string.h>

#include "ptrec.h"
#include "symbols/decompress.h"

#define FAST_BITS 10
#define MAX_BITS 15

/* An LSB-first bit reader.  Reading past the end yields zeros and sets err. */
struct bits {
	const uint8_t *p, *end;
	uint64_t buf;        /* bits not consumed yet, next bit in bit 0 */
	unsigned cnt;        /* valid bits in buf */
	int err;
};

static void refill(struct bits *b)
{
	while (b->cnt <= 56) {
		if (b->p == b->end)
			return;
		b->buf |= (uint64_t)*b->p++ << b->cnt;
		b->cnt += 8;
	}
}

static unsigned need(struct bits *b, unsigned n)
{
	unsigned v;
	if (b->cnt < n) {
		refill(b);
		if (b->cnt < n) {
			b->err = 1;
			b->cnt = n;  /* the missing bits read as zeros */
		}
	}
	v = (unsigned)(b->buf & ((1ull << n) - 1));
	b->buf >>= n;
	b->cnt -= n;
	return v;
}

/* A canonical Huffman code. */
struct huff {
	uint16_t count[MAX_BITS + 1];   /* codes of each length */
	uint16_t symbol[320];           /* symbols ordered by code */
	uint16_t fast[1u << FAST_BITS]; /* (length << 9 | symbol) of codes <= FAST_BITS, 0 if none */
};

static unsigned reverse(unsigned code, unsigned len)
{
	unsigned r = 0;
	for (unsigned i = 0; i < len; i++, code >>= 1)
		r = (r << 1) | (code & 1);
	return r;
}

/* Builds the code of n symbols from their lengths.  Returns 0, or -1 if over-subscribed.
 * Incomplete codes are accepted (their unused codes fail to decode). */
static int build(struct huff *h, const uint8_t *len, unsigned n)
{
	uint16_t offs[MAX_BITS + 2];
	int left = 1;
	unsigned code = 0;

	memset(h->count, 0, sizeof(h->count));
	memset(h->fast, 0, sizeof(h->fast));
	for (unsigned s = 0; s < n; s++)
		h->count[len[s]]++;
	for (unsigned l = 1; l <= MAX_BITS; l++) {
		left = (left << 1) - h->count[l];
		if (left < 0)
			return -1;
	}
	offs[1] = 0;
	for (unsigned l = 1; l <= MAX_BITS; l++)
		offs[l + 1] = (uint16_t)(offs[l] + h->count[l]);
	for (unsigned s = 0; s < n; s++)
		if (len[s])
			h->symbol[offs[len[s]]++] = (uint16_t)s;
	/* The fast table: walk the canonical codes in order. */
	for (unsigned l = 1, k = 0; l <= MAX_BITS; l++) {
		for (unsigned i = 0; i < h->count[l]; i++, k++, code++) {
			if (l > FAST_BITS)
				continue;
			for (unsigned r = reverse(code, l); r < (1u << FAST_BITS); r += 1u << l)
				h->fast[r] = (uint16_t)(l << 9 | h->symbol[k]);
		}
		code <<= 1;
	}
	return 0;
}

/* Decodes one symbol; -1 for a code that is not in the table. */
static int decode(struct bits *b, const struct huff *h)
{
	unsigned e, code = 0, first = 0, index = 0;

	if (b->cnt < MAX_BITS)
		refill(b);
	e = h->fast[b->buf & ((1u << FAST_BITS) - 1)];
	if (e && (e >> 9) <= b->cnt) {
		b->buf >>= e >> 9;
		b->cnt -= e >> 9;
		return (int)(e & 0x1ff);
	}
	for (unsigned l = 1; l <= MAX_BITS; l++) {
		unsigned count;
		code |= need(b, 1);
		count = h->count[l];
		if (code - first < count)
			return h->symbol[index + (code - first)];
		index += count;
		first = (first + count) << 1;
		code <<= 1;
	}
	return -1;
}

static const uint16_t len_base[29] = {3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31,
                                      35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
static const uint8_t len_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2,
                                      3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
static const uint16_t dist_base[30] = {1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129,
                                       193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097,
                                       6145, 8193, 12289, 16385, 24577};
static const uint8_t dist_extra[30] = {0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7,
                                       8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};

struct out {
	uint8_t *p;
	size_t len, pos;
};

/* Decodes the symbols of one Huffman block. */
static int codes(struct bits *b, struct out *o, const struct huff *lit, const struct huff *dist)
{
	for (;;) {
		int s = decode(b, lit);
		if (s < 0 || b->err)
			return -1;
		if (s < 256) {
			if (o->pos == o->len)
				return -1;
			o->p[o->pos++] = (uint8_t)s;
		} else if (s == 256) {
			return 0;
		} else {
			unsigned len, d;
			int ds;
			s -= 257;
			if (s >= 29)
				return -1;
			len = len_base[s] + need(b, len_extra[s]);
			ds = decode(b, dist);
			if (ds < 0 || ds >= 30)
				return -1;
			d = dist_base[ds] + need(b, dist_extra[ds]);
			if (b->err || d > o->pos || len > o->len - o->pos)
				return -1;
			for (unsigned i = 0; i < len; i++, o->pos++)
				o->p[o->pos] = o->p[o->pos - d];
		}
	}
}

static int fixed_block(struct bits *b, struct out *o)
{
	struct huff lit, dist;
	uint8_t l[288];
	unsigned s = 0;

	for (; s < 144; s++) l[s] = 8;
	for (; s < 256; s++) l[s] = 9;
	for (; s < 280; s++) l[s] = 7;
	for (; s < 288; s++) l[s] = 8;
	build(&lit, l, 288);
	memset(l, 5, 30);
	build(&dist, l, 30);
	return codes(b, o, &lit, &dist);
}

static int dynamic_block(struct bits *b, struct out *o)
{
	static const uint8_t order[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2,
	                                  14, 1, 15};
	uint8_t lens[320];
	unsigned nlen = need(b, 5) + 257, ndist = need(b, 5) + 1, ncode = need(b, 4) + 4, n = 0;
	struct huff lencode, lit, dist;

	if (nlen > 286 || ndist > 30)
		return -1;
	memset(lens, 0, sizeof(lens));
	for (unsigned i = 0; i < ncode; i++)
		lens[order[i]] = (uint8_t)need(b, 3);
	if (build(&lencode, lens, 19))
		return -1;
	while (n < nlen + ndist) {
		int s = decode(b, &lencode);
		unsigned rep, val = 0;
		if (s < 0 || b->err)
			return -1;
		if (s < 16) {
			lens[n++] = (uint8_t)s;
			continue;
		}
		if (s == 16) {
			if (!n)
				return -1;
			val = lens[n - 1];
			rep = 3 + need(b, 2);
		} else if (s == 17) {
			rep = 3 + need(b, 3);
		} else {
			rep = 11 + need(b, 7);
		}
		if (n + rep > nlen + ndist)
			return -1;
		while (rep--)
			lens[n++] = (uint8_t)val;
	}
	if (!lens[256] || build(&lit, lens, nlen) || build(&dist, lens + nlen, ndist))
		return -1;
	return codes(b, o, &lit, &dist);
}

static int stored_block(struct bits *b, struct out *o)
{
	unsigned len, nlen;
	/* Drop to a byte boundary; the bits already buffered are whole bytes after that. */
	need(b, b->cnt & 7);
	len = need(b, 16);
	nlen = need(b, 16);
	if (b->err || len != (~nlen & 0xffff) || len > o->len - o->pos)
		return -1;
	while (len && b->cnt) {
		o->p[o->pos++] = (uint8_t)need(b, 8);
		len--;
	}
	if ((size_t)(b->end - b->p) < len)
		return -1;
	memcpy(o->p + o->pos, b->p, len);
	b->p += len;
	o->pos += len;
	return 0;
}

int ptrec_inflate(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len,
                  size_t *used)
{
	struct bits b = {in, in + in_len, 0, 0, 0};
	struct out o = {out, out_len, 0};
	unsigned last;

	do {
		int rc;
		last = need(&b, 1);
		switch (need(&b, 2)) {
		case 0: rc = stored_block(&b, &o); break;
		case 1: rc = fixed_block(&b, &o); break;
		case 2: rc = dynamic_block(&b, &o); break;
		default: rc = -1; break;
		}
		if (rc || b.err)
			return -PTREC_EFORMAT;
	} while (!last);
	if (o.pos != out_len)
		return -PTREC_EFORMAT;
	/* Give back the whole bytes read ahead. */
	if (used)
		*used = (size_t)(b.p - in) - b.cnt / 8;
	return 0;
}

int ptrec_zlib_inflate(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len)
{
	size_t used;
	uint32_t a = 1, s = 0, want;
	int rc;

	/* CMF: deflate with a window <= 32K; FLG: check bits, no preset dictionary. */
	if (in_len < 6 || (in[0] & 0x0f) != 8 || (in[0] >> 4) > 7 || (in[0] * 256u + in[1]) % 31 ||
	    (in[1] & 0x20))
		return -PTREC_EFORMAT;
	rc = ptrec_inflate(in + 2, in_len - 2, out, out_len, &used);
	if (rc)
		return rc;
	if (in_len - 2 - used < 4)
		return -PTREC_EFORMAT;
	for (size_t i = 0; i < out_len; i++) {
		a += out[i];
		if (a >= 65521)
			a -= 65521;
		s += a;
		if (s >= 65521)
			s -= 65521;
	}
	in += 2 + used;
	want = (uint32_t)in[0] << 24 | (uint32_t)in[1] << 16 | (uint32_t)in[2] << 8 | in[3];
	return want == (s << 16 | a) ? 0 : -PTREC_EFORMAT;
}
