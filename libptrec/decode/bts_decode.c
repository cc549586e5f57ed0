/* bts_decode.c — BTS and soft record decoding, with a small opcode classifier for hardware
 * records (the only instructions BTS reports are branches, so a prefix skip plus the opcode
 * tells the kind). */
#include "config.h"

#include <string.h>

#include "decode/bts_decode.h"

unsigned ptrec_bts_classify(const uint8_t *b, size_t len)
{
	size_t i = 0;

	/* Legacy prefixes and REX. */
	while (i < len && i < 14) {
		uint8_t c = b[i];
		if (c == 0x66 || c == 0x67 || c == 0xf2 || c == 0xf3 || c == 0x2e || c == 0x3e ||
		    c == 0x26 || c == 0x64 || c == 0x65 || c == 0x36 || c == 0xf0 ||
		    (c >= 0x40 && c <= 0x4f))
			i++;
		else
			break;
	}
	if (i >= len)
		return PTREC_BR_NONE;
	switch (b[i]) {
	case 0x70: case 0x71: case 0x72: case 0x73: case 0x74: case 0x75: case 0x76: case 0x77:
	case 0x78: case 0x79: case 0x7a: case 0x7b: case 0x7c: case 0x7d: case 0x7e: case 0x7f:
	case 0xe0: case 0xe1: case 0xe2: case 0xe3:
		return PTREC_BR_JCC;
	case 0xe8: return PTREC_BR_CALL;
	case 0xe9: case 0xeb: return PTREC_BR_JMP;
	case 0xc2: case 0xc3: return PTREC_BR_RET;
	case 0x9a: case 0xca: case 0xcb: case 0xcc: case 0xcd: case 0xce: case 0xcf: case 0xea:
	case 0xf1:
		return PTREC_BR_FAR;
	case 0x0f:
		if (i + 1 >= len)
			return PTREC_BR_NONE;
		if (b[i + 1] >= 0x80 && b[i + 1] <= 0x8f)
			return PTREC_BR_JCC;
		if (b[i + 1] == 0x05 || b[i + 1] == 0x07 || b[i + 1] == 0x34 || b[i + 1] == 0x35 ||
		    b[i + 1] == 0x0b)
			return PTREC_BR_FAR;
		return PTREC_BR_INTERRUPT;
	case 0xff:
		if (i + 1 >= len)
			return PTREC_BR_NONE;
		switch ((b[i + 1] >> 3) & 7) {
		case 2: return PTREC_BR_IND_CALL;
		case 3: case 5: return PTREC_BR_FAR;
		case 4: return PTREC_BR_IND_JMP;
		default: return PTREC_BR_INTERRUPT;
		}
	default:
		return PTREC_BR_INTERRUPT;
	}
}

static void reverse(struct ptrec_branch *v, size_t lo, size_t hi)
{
	while (lo + 1 < hi) {
		struct ptrec_branch t = v[lo];
		v[lo++] = v[--hi];
		v[hi] = t;
	}
}

size_t ptrec_ring_records(size_t size, uint64_t head, size_t rs, struct ptrec_bts_stats *st)
{
	size_t lead = 0;
	if (head > size)
		lead = (size_t)((rs - (head - size) % rs) % rs);
	if (lead > size)
		lead = size;
	st->lead_bytes = lead;
	st->records = (size - lead) / rs;
	st->tail_bytes = (size - lead) % rs;
	return lead;
}

size_t ptrec_bts_decode(const uint8_t *data, size_t size, uint64_t head, ptrec_code_reader read,
                        void *ctx, struct ptrec_branch *out, size_t max,
                        struct ptrec_bts_stats *st)
{
	struct ptrec_bts_stats local;
	size_t lead = 0, n = 0, w = 0;
	const size_t rs = sizeof(struct ptrec_bts_record);

	if (!st)
		st = &local;
	memset(st, 0, sizeof(*st));
	lead = ptrec_ring_records(size, head, rs, st);
	for (uint64_t i = 0; i < st->records; i++) {
		struct ptrec_bts_record r;
		struct ptrec_branch b;

		memcpy(&r, data + lead + i * rs, rs);
		if (!r.from && !r.to && !r.flags) {
			st->empty++;
			continue;
		}
		memset(&b, 0, sizeof(b));
		b.from = r.from;
		b.to = r.to;
		if (r.flags & PTREC_BTS_SOFT) {
			unsigned kind = (unsigned)(r.flags & 0xff);
			if (kind == PTREC_BR_NONE || kind >= PTREC_BR_KIND_COUNT_) {
				st->bad_kind++;
				continue;
			}
			b.kind = (uint8_t)kind;
			if (kind == PTREC_BR_JCC)
				b.flags = PTREC_BRF_TAKEN;
		} else {
			uint8_t insn[16];
			size_t got = read ? read(ctx, r.from, insn, sizeof(insn)) : 0;
			unsigned kind = got ? ptrec_bts_classify(insn, got) : PTREC_BR_NONE;
			if (kind == PTREC_BR_NONE) {
				st->unclassified++;
				kind = PTREC_BR_JMP;
			}
			b.kind = (uint8_t)kind;
			if (kind == PTREC_BR_JCC)
				b.flags = PTREC_BRF_TAKEN; /* BTS records only taken branches */
		}
		st->events++;
		if (!max)
			continue;
		/* Keep the newest max events: a circular fill, rotated at the end. */
		out[w] = b;
		w = (w + 1) % max;
		n++;
	}
	if (n > max) {
		/* out is a full circle whose oldest element is at w: rotate left by w. */
		reverse(out, 0, w);
		reverse(out, w, max);
		reverse(out, 0, max);
		n = max;
	}
	return n;
}
