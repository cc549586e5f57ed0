/* pt_encode.c — Intel PT packet writers (see pt_encode.h). */
#include "pt_encode.h"

#include <stdlib.h>
#include <string.h>

void pe_bytes(struct pe_buf *b, const void *p, size_t n)
{
	if (b->failed)
		return;
	if (b->len + n > b->cap) {
		size_t ncap = b->cap ? b->cap : 4096;
		while (ncap < b->len + n)
			ncap *= 2;
		uint8_t *d = realloc(b->data, ncap);
		if (!d) {
			b->failed = 1;
			return;
		}
		b->data = d;
		b->cap = ncap;
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

/* Appends the low n bytes of v, least significant first. */
static void put_le(struct pe_buf *b, uint64_t v, unsigned n)
{
	uint8_t t[8];
	for (unsigned i = 0; i < n; i++)
		t[i] = (uint8_t)(v >> (8 * i));
	pe_bytes(b, t, n);
}

void pe_pad(struct pe_buf *b)
{
	static const uint8_t p[] = {0x00};
	pe_bytes(b, p, sizeof(p));
}

void pe_psb(struct pe_buf *b)
{
	static const uint8_t p[] = {0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	                            0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82};
	pe_bytes(b, p, sizeof(p));
}

void pe_psbend(struct pe_buf *b)
{
	static const uint8_t p[] = {0x02, 0x23};
	pe_bytes(b, p, sizeof(p));
}

void pe_ovf(struct pe_buf *b)
{
	static const uint8_t p[] = {0x02, 0xf3};
	pe_bytes(b, p, sizeof(p));
}

/* Short TNT: bit 0 is 0, the n branch bits sit in bits n..1 (oldest highest), and a stop bit 1
 * sits right above them. */
void pe_tnt_short(struct pe_buf *b, uint64_t bits, unsigned n)
{
	uint8_t v = (uint8_t)(((1u << n) | (bits & ((1u << n) - 1))) << 1);
	pe_bytes(b, &v, 1);
}

/* Long TNT: 02 a3, then 48 payload bits: the n branch bits (oldest highest) with a stop bit 1
 * right above them. */
void pe_tnt_long(struct pe_buf *b, uint64_t bits, unsigned n)
{
	static const uint8_t h[] = {0x02, 0xa3};
	pe_bytes(b, h, sizeof(h));
	put_le(b, (1ull << n) | (bits & ((1ull << n) - 1)), 6);
}

void pe_ip(struct pe_buf *b, enum pe_ip_type type, enum pe_ipbytes ipbytes, uint64_t ip)
{
	static const unsigned payload[8] = {0, 2, 4, 6, 6, 0, 8, 0};
	uint8_t h = (uint8_t)((unsigned)ipbytes << 5 | (unsigned)type);
	pe_bytes(b, &h, 1);
	put_le(b, ip, payload[ipbytes & 7]);
}

void pe_mode_exec(struct pe_buf *b, int csl, int csd, int iflag)
{
	uint8_t p[2] = {0x99, (uint8_t)((csl ? 1 : 0) | (csd ? 2 : 0) | (iflag ? 4 : 0))};
	pe_bytes(b, p, sizeof(p));
}

void pe_mode_tsx(struct pe_buf *b, int intx, int txabort)
{
	uint8_t p[2] = {0x99, (uint8_t)(0x20 | (intx ? 1 : 0) | (txabort ? 2 : 0))};
	pe_bytes(b, p, sizeof(p));
}

void pe_tsc(struct pe_buf *b, uint64_t tsc)
{
	uint8_t h = 0x19;
	pe_bytes(b, &h, 1);
	put_le(b, tsc, 7);
}

void pe_mtc(struct pe_buf *b, uint8_t ctc)
{
	uint8_t p[2] = {0x59, ctc};
	pe_bytes(b, p, sizeof(p));
}

void pe_tma(struct pe_buf *b, uint16_t ctc, uint16_t fc)
{
	uint8_t p[7] = {0x02, 0x73, (uint8_t)ctc, (uint8_t)(ctc >> 8), 0, (uint8_t)fc,
	                (uint8_t)((fc >> 8) & 1)};
	pe_bytes(b, p, sizeof(p));
}

void pe_cbr(struct pe_buf *b, uint8_t ratio)
{
	uint8_t p[4] = {0x02, 0x03, ratio, 0};
	pe_bytes(b, p, sizeof(p));
}

/* CYC: header byte xxxxxE11 holds cycles[4:0] in bits 7:3 and E (more bytes follow) in bit 2;
 * each further byte holds 7 more bits in bits 7:1 and its own E in bit 0. */
void pe_cyc(struct pe_buf *b, uint64_t cycles)
{
	uint8_t t[10];
	unsigned n = 0;
	uint64_t rest = cycles >> 5;
	t[n++] = (uint8_t)(((cycles & 0x1f) << 3) | (rest ? 0x4 : 0) | 0x3);
	while (rest) {
		uint64_t more = rest >> 7;
		t[n++] = (uint8_t)(((rest & 0x7f) << 1) | (more ? 1 : 0));
		rest = more;
	}
	pe_bytes(b, t, n);
}

void pe_ptw(struct pe_buf *b, uint64_t payload, unsigned bytes, int ip_bit)
{
	uint8_t t[10];
	unsigned n = bytes == 8 ? 8 : 4;
	t[0] = 0x02;
	t[1] = (uint8_t)(0x12 | (n == 8 ? 1u << 5 : 0) | (ip_bit ? 0x80 : 0));
	for (unsigned i = 0; i < n; i++)
		t[2 + i] = (uint8_t)(payload >> (8 * i));
	pe_bytes(b, t, 2 + n);
}

void pe_cfe(struct pe_buf *b, unsigned type, uint8_t vector, int ip_bit)
{
	uint8_t t[4] = {0x02, 0x13, (uint8_t)((type & 0x1f) | (ip_bit ? 0x80 : 0)), vector};
	pe_bytes(b, t, 4);
}

void pe_evd(struct pe_buf *b, unsigned type, uint64_t payload)
{
	uint8_t t[11] = {0x02, 0x53, (uint8_t)(type & 0x3f)};
	for (unsigned i = 0; i < 8; i++)
		t[3 + i] = (uint8_t)(payload >> (8 * i));
	pe_bytes(b, t, 11);
}
