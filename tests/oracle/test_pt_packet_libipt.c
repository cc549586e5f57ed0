/* test_pt_packet_libipt.c — our packet layer against libipt's packet decoder (test-only oracle).
 *
 * Streams of packets with random payloads (every packet kind, reserved field values included,
 * sometimes damaged or cut), plus the seed corpus, are walked by both decoders side by side.
 * Each packet must agree in kind, size and every field libipt reports.  Where one decoder stops,
 * the other must stop the same way (end of trace / invalid packet); then both continue at the
 * next PSB.  Accepted differences, counted and printed:
 * - packets newer than libipt 2.0 (BBP, BIP, BEP, CFE, EVD, TRIG): we decode them, libipt
 *   reports an unknown opcode;
 * - MODE.Exec with CS.L = CS.D = 1 and MODE.TSX with InTX = TXAbort = 1: we reject these
 *   impossible combinations (an error and a resync are better than a made-up mode in a damaged
 *   ring), libipt returns an "unknown" execution mode or both TSX bits;
 * - TMA with reserved bits set: the SDM says reserved packet bits are not guaranteed to be 0, so
 *   we ignore them; libipt rejects the packet;
 * - CYC of 10 bytes: libipt accepts at most 9 (61 bits); we accept a 10th byte as long as the
 *   count fits in 64 bits (Linux perf's vectors contain such a packet);
 * - an invalid packet cut by the end of the trace (e.g. a broken PSB in the last 15 bytes): we
 *   report it as invalid as soon as the bytes present show it, libipt reports the end first;
 * - PWRE's HW bit: we (like Linux perf and its test vectors) read it from bit 7 of byte 2, where
 *   the SDM's PWRE table puts it; libipt 2.0 reads bit 3.  The other PWRE fields are compared,
 *   and the count of HW disagreements is printed.
 * The first disagreement of any other kind fails the test and prints the bytes. */
#include "config.h"

#include "check.h"
#include "ptrec.h"
#include "decode/pt_packet.h"
#include "ipt_pkt_oracle.h"

#include <dirent.h>

#define STREAMS 40000
#define STREAM_MAX 320

static uint64_t rng_state = 0x2545f4914f6cdd1dull;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static unsigned long compared, streams, newer_packets, mode_exec_reserved, both_reject, both_end,
	tma_reserved, pwre_hw, cyc10, cut_invalid, resyncs;

/* Our packet's fields in the oracle's layout (see ipt_pkt_oracle.c). */
static void our_fields(const struct ptrec_pt_packet *p, uint64_t v[3])
{
	v[0] = v[1] = v[2] = 0;
	switch (p->type) {
	case PT_PKT_TNT: v[0] = p->tnt_count; v[1] = p->payload; break;
	case PT_PKT_TIP: case PT_PKT_TIP_PGE: case PT_PKT_TIP_PGD: case PT_PKT_FUP:
		v[0] = p->ipbytes; v[1] = p->payload; break;
	case PT_PKT_MODE_EXEC: v[0] = p->sub & 3; break; /* libipt 2.0 has no IF bit */
	case PT_PKT_MODE_TSX: v[0] = p->sub; break;
	case PT_PKT_PIP: v[0] = p->payload; v[1] = p->payload2; break;
	case PT_PKT_VMCS: case PT_PKT_CBR: case PT_PKT_TSC: case PT_PKT_MTC: case PT_PKT_CYC:
	case PT_PKT_MNT:
		v[0] = p->payload; break;
	case PT_PKT_TMA: v[0] = p->payload; v[1] = p->payload2; break;
	case PT_PKT_EXSTOP: v[0] = p->ip_bit; break;
	case PT_PKT_MWAIT: v[0] = p->sub; v[1] = p->payload2; break;
	case PT_PKT_PWRE: v[0] = p->sub >> 4; v[1] = p->sub & 0xf; v[2] = p->payload2; break;
	case PT_PKT_PWRX:
		v[0] = (p->payload2 >> 4) & 0xf; v[1] = p->payload2 & 0xf; v[2] = p->sub & 0xd;
		break;
	case PT_PKT_PTW: v[0] = p->sub; v[1] = p->payload; v[2] = p->ip_bit; break;
	default: break;
	}
}

/* Is this the header of a packet newer than libipt 2.0 (BBP, BIP, BEP, CFE, EVD, TRIG)?
 * ctx is the context before the packet; a truncated packet counts too. */
static int newer_header(const uint8_t *p, size_t avail, enum ptrec_pt_packet_ctx ctx)
{
	if (avail >= 1 && p[0] == 0xd9)
		return 1;
	if (avail >= 1 && ctx != PT_CTX_NONE && (p[0] & 7) == 4)
		return 1;
	return avail >= 2 && p[0] == 0x02 &&
	       (p[1] == 0x63 || p[1] == 0x33 || p[1] == 0xb3 || p[1] == 0x13 || p[1] == 0x53);
}

static void dump_stream(const uint8_t *buf, size_t len, size_t off)
{
	fprintf(stderr, "  at offset %zu of a %zu-byte stream:", off, len);
	for (size_t i = off; i < len && i < off + 16; i++)
		fprintf(stderr, " %02x", buf[i]);
	fprintf(stderr, "\n");
}

/* Walks one stream with both decoders.  Returns 0 if they agree (up to the documented
 * differences), -1 after reporting the first disagreement. */
static int compare_stream(const uint8_t *buf, size_t len)
{
	void *dec = ipt_pkt_open(buf, len);
	enum ptrec_pt_packet_ctx ctx = PT_CTX_NONE;
	size_t off = 0;
	int result = 0;

	if (!dec) {
		fprintf(stderr, "libipt: cannot allocate a packet decoder\n");
		return -1;
	}
	streams++;
	for (;;) {
		struct ptrec_pt_packet pkt;
		struct ipt_pkt ip;
		enum ptrec_pt_packet_ctx before = ctx;
		int ours = ptrec_pt_packet_decode(buf + off, len - off, &ctx, &pkt);
		int theirs = ipt_pkt_next(dec, &ip);

		if (ours > 0 && theirs > 0) {
			uint64_t v[3];

			our_fields(&pkt, v);
			compared++;
			if (pkt.type == PT_PKT_PWRE && v[2] != ip.v[2]) {
				pwre_hw++;
				v[2] = ip.v[2];
			}
			if (ours != theirs || strcmp(ptrec_pt_packet_name(&pkt), ip.name) || v[0] != ip.v[0] ||
			    v[1] != ip.v[1] || v[2] != ip.v[2]) {
				fprintf(stderr, "packet differs: ours %s size %d {%#llx %#llx %#llx}, "
				        "libipt %s size %d {%#llx %#llx %#llx}\n", ptrec_pt_packet_name(&pkt), ours,
				        (unsigned long long)v[0], (unsigned long long)v[1],
				        (unsigned long long)v[2], ip.name, theirs,
				        (unsigned long long)ip.v[0], (unsigned long long)ip.v[1],
				        (unsigned long long)ip.v[2]);
				result = -1;
				break;
			}
			off += (size_t)ours;
			continue;
		}
		if (ours == -PTREC_ETRUNC && theirs == IPT_PKT_EOS) {
			both_end++;
		} else if (ours == -PTREC_EFORMAT && theirs == IPT_PKT_BAD) {
			both_reject++;
		} else if ((ours > 0 || ours == -PTREC_ETRUNC) && theirs == IPT_PKT_BAD &&
		           newer_header(buf + off, len - off, before)) {
			newer_packets++;
		} else if (ours == -PTREC_EFORMAT && theirs == IPT_PKT_EOS && len - off < 16) {
			cut_invalid++;
		} else if (ours == 10 && theirs == IPT_PKT_BAD && pkt.type == PT_PKT_CYC) {
			cyc10++;
		} else if (ours > 0 && theirs == IPT_PKT_BAD && pkt.type == PT_PKT_TMA &&
		           (buf[off + 4] != 0 || (buf[off + 6] & 0xfe) != 0)) {
			tma_reserved++;
		} else if (ours == -PTREC_EFORMAT && theirs > 0 && ip.v[0] == 3 &&
		           (!strcmp(ip.name, "mode.exec") || !strcmp(ip.name, "mode.tsx"))) {
			mode_exec_reserved++;
		} else {
			fprintf(stderr, "decoders disagree: ours %d (%s), libipt %d (%s)\n", ours,
			        ours > 0 ? ptrec_pt_packet_name(&pkt) : ptrec_strerror(ours), theirs,
			        theirs > 0 ? ip.name : theirs == IPT_PKT_EOS ? "end of trace" :
			        theirs == IPT_PKT_BAD ? "bad packet" : "other error");
			result = -1;
			break;
		}
		/* both stopped in an accepted way: go on at the next PSB */
		{
			long psb = ptrec_pt_packet_find_psb(buf, len, off + 1);

			if (psb < 0 || ipt_pkt_seek(dec, (size_t)psb) < 0)
				break;
			off = (size_t)psb;
			ctx = PT_CTX_NONE;
			resyncs++;
		}
	}
	if (result < 0)
		dump_stream(buf, len, off);
	ipt_pkt_close(dec);
	return result;
}

static const uint8_t psb[16] = {2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82,
                                2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82};

/* Appends one packet of a random kind with random payload bytes; returns the new length. */
static size_t add_packet(uint8_t *b, size_t n, size_t cap)
{
	static const uint8_t ext[] = {0xa3, 0x43, 0xc8, 0x03, 0x73, 0xc2, 0x22, 0xa2, 0x62, 0xe2,
	                              0xf3, 0x23, 0x83, 0xc3, 0x12, 0x32, 0x92, 0xb2, 0x52, 0x72,
	                              0xd2, 0xf2, 0x63, 0x33, 0xb3, 0x13, 0x53, 0x82};
	static const uint8_t ip_low[] = {0x01, 0x0d, 0x11, 0x1d};
	uint8_t tmp[24];
	size_t k = 0;

	switch (rng() % 12) {
	case 0: case 1: case 2: /* short TNT */
		do
			tmp[0] = (uint8_t)(rng() & 0xfe);
		while (tmp[0] == 0 || tmp[0] == 2);
		k = 1;
		break;
	case 3: case 4: /* IP packet, any IPBytes */
		tmp[0] = (uint8_t)(ip_low[rng() % 4] | (rng() % 8) << 5);
		k = 1 + rng() % 9;
		for (size_t i = 1; i < k; i++)
			tmp[i] = (uint8_t)rng();
		break;
	case 5: /* MODE, any payload */
		tmp[0] = 0x99;
		tmp[1] = (uint8_t)rng();
		k = 2;
		break;
	case 6: /* TSC / MTC / TRIG */
		tmp[0] = (uint8_t[]){0x19, 0x59, 0xd9}[rng() % 3];
		k = 8;
		for (size_t i = 1; i < k; i++)
			tmp[i] = (uint8_t)rng();
		break;
	case 7: { /* CYC of random length */
		tmp[0] = (uint8_t)(rng() | 3);
		k = 1;
		while ((tmp[k - 1] & (k == 1 ? 4 : 1)) && k < 12)
			tmp[k++] = (uint8_t)rng();
		break;
	}
	case 8: case 9: /* 02-escaped packet with random payload */
		tmp[0] = 2;
		tmp[1] = ext[rng() % sizeof(ext)];
		k = 2 + rng() % 10;
		for (size_t i = 2; i < k; i++)
			tmp[i] = (uint8_t)rng();
		if (tmp[1] == 0xc3 && (rng() & 3))
			tmp[2] = 0x88; /* MNT, usually well-formed */
		if (tmp[1] == 0x82) { /* PSB, usually whole */
			memcpy(tmp, psb, 16);
			k = 16;
		}
		break;
	case 10: /* PAD */
		tmp[0] = 0;
		k = 1;
		break;
	default: /* a random byte */
		tmp[0] = (uint8_t)rng();
		k = 1;
		break;
	}
	if (n + k > cap)
		k = cap - n;
	memcpy(b + n, tmp, k);
	return n + k;
}

static void run_seeds(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	CHECK(d != NULL);
	if (!d)
		return;
	while ((e = readdir(d))) {
		char path[4096 + 512];
		uint8_t buf[4096];
		size_t n;
		FILE *f;

		if (e->d_name[0] == '.' || strlen(dir) + strlen(e->d_name) + 2 > sizeof(path))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		f = fopen(path, "rb");
		if (!f)
			continue;
		n = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		CHECK(compare_stream(buf, n) == 0);
	}
	closedir(d);
}

int main(void)
{
	const char *srcdir = getenv("top_srcdir");
	char dir[4096];
	uint8_t buf[STREAM_MAX];
	int failures = 0;

	snprintf(dir, sizeof(dir), "%s/tests/data/fuzz/pt", srcdir ? srcdir : ".");
	run_seeds(dir);
	for (int s = 0; s < STREAMS && failures < 5; s++) {
		size_t n = 0, want = 16 + rng() % (STREAM_MAX - 16);

		memcpy(buf, psb, 16);
		n = 16;
		while (n < want)
			n = add_packet(buf, n, want);
		if (rng() % 4 == 0) /* damage a byte */
			buf[rng() % n] ^= (uint8_t)(1u << (rng() % 8));
		if (compare_stream(buf, n) < 0)
			failures++;
	}
	CHECK_EQ_U64(failures, 0);
	printf("%lu streams, %lu resyncs, %lu packets identical to libipt (%lu PWRE HW bits read "
	       "differently)\n"
	       "stream ends: %lu truncated in both, %lu invalid in both, %lu newer packets libipt 2.0 "
	       "lacks, %lu MODE with both bits set, %lu TMA with reserved bits, %lu 10-byte CYC, "
	       "%lu invalid and cut by the end\n",
	       streams, resyncs, compared, pwre_hw, both_end, both_reject, newer_packets, mode_exec_reserved,
	       tma_reserved, cyc10, cut_invalid);
	return check_done();
}
