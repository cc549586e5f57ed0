/* bench_pt_packet.c — packet-layer speed: our ptrec_pt_packet_decode() against libipt's packet
 * decoder (pt_pkt_next) on the same synthetic 16 MiB traces, in the same run.
 *
 * Three deterministic traces, each with a PSB+ every 4 KiB like a perf ring:
 * - "flow": what user-space control flow produces: mostly short TNTs, some long TNTs,
 *   compressed TIPs (2/4/6 bytes), a few FUPs and MODE packets;
 * - "timing": the same with MTC and CYC packets in between (cycle-accurate mode);
 * - "ptw": PTWRITE-heavy instrumentation with 4/8-byte payloads and FUPs.
 * Prints a table: MB/s of trace and million packets/s for each decoder, the speed-up, and
 * whether both decoders split the trace into the same packets (count and sizes). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ptrec.h"
#include "decode/pt_packet.h"
#include "bench_pt_packet.h"

#define TRACE_SIZE (16u << 20)
#define PSB_PERIOD 4096
#define REPEAT 3

static uint64_t rng_state;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static const uint8_t psb[16] = {2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82,
                                2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82};

enum mix { MIX_FLOW, MIX_TIMING, MIX_PTW };

/* Appends one packet of the mix; returns bytes written (at most 16). */
static size_t gen_packet(uint8_t *p, enum mix mix)
{
	unsigned k = (unsigned)(rng() % 100);
	size_t n = 0;

	if (mix == MIX_TIMING && k < 30) {
		if (k < 10) { /* MTC */
			p[0] = 0x59;
			p[1] = (uint8_t)rng();
			return 2;
		}
		p[n++] = (uint8_t)(0x03 | (rng() & 0xf8)); /* CYC, 1 or 2 bytes */
		if (k < 20) {
			p[0] |= 4;
			p[n++] = (uint8_t)(rng() & 0xfe);
		}
		return n;
	}
	if (mix == MIX_PTW && k < 40) {
		int eight = (int)(rng() & 1);
		p[n++] = 0x02;
		p[n++] = eight ? 0xb2 : 0x92;
		for (int i = 0; i < (eight ? 8 : 4); i++)
			p[n++] = (uint8_t)rng();
		p[n++] = 0x5d; /* FUP, 4 bytes */
		for (int i = 0; i < 4; i++)
			p[n++] = (uint8_t)rng();
		return n;
	}
	if (k < 60) { /* short TNT, 1..6 bits */
		unsigned bits = 1 + (unsigned)(rng() % 6);
		p[0] = (uint8_t)((1u << (bits + 1)) | ((rng() << 1) & ((1u << (bits + 1)) - 2)));
		return 1;
	}
	if (k < 70) { /* long TNT */
		p[n++] = 0x02;
		p[n++] = 0xa3;
		for (int i = 0; i < 5; i++)
			p[n++] = (uint8_t)rng();
		p[n++] = (uint8_t)(0x80 | rng());
		return n;
	}
	if (k < 92) { /* TIP with 2, 4 or 6 IP bytes */
		static const uint8_t hdr[] = {0x2d, 0x4d, 0x4d, 0x4d, 0x6d};
		static const uint8_t len[] = {2, 4, 4, 4, 6};
		unsigned c = (unsigned)(rng() % 5);
		p[n++] = hdr[c];
		for (unsigned i = 0; i < len[c]; i++)
			p[n++] = (uint8_t)rng();
		return n;
	}
	if (k < 97) { /* FUP + TIP.PGD (an asynchronous event) */
		p[n++] = 0x5d;
		for (int i = 0; i < 4; i++)
			p[n++] = (uint8_t)rng();
		p[n++] = 0x01;
		return n;
	}
	p[n++] = 0x99; /* MODE.Exec 64-bit */
	p[n++] = 0x01;
	return n;
}

static uint8_t *make_trace(enum mix mix, uint64_t seed)
{
	uint8_t *b = malloc(TRACE_SIZE);
	size_t n = 0, next_psb = 0;

	if (!b)
		return NULL;
	rng_state = seed;
	while (n + 64 <= TRACE_SIZE) {
		if (n >= next_psb) { /* PSB+: PSB, TSC, CBR, MODE.Exec, FUP, PSBEND */
			static const uint8_t plus[] = {0x19, 1, 2, 3, 4, 5, 6, 0, 0x02, 0x03, 0x20, 0x00,
			                               0x99, 0x01, 0x7d, 0x00, 0x10, 0x40, 0, 0, 0,
			                               0x02, 0x23};
			memcpy(b + n, psb, 16);
			memcpy(b + n + 16, plus, sizeof(plus));
			n += 16 + sizeof(plus);
			next_psb += PSB_PERIOD;
			continue;
		}
		n += gen_packet(b + n, mix);
	}
	memset(b + n, 0, TRACE_SIZE - n); /* the never-written tail of a ring: PAD */
	return b;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void ours_walk(const uint8_t *b, size_t len, struct bench_walk *w)
{
	enum ptrec_pt_packet_ctx ctx = PT_CTX_NONE;
	struct ptrec_pt_packet pkt;
	size_t off = 0;

	memset(w, 0, sizeof(*w));
	while (off < len) {
		int r = ptrec_pt_packet_decode(b + off, len - off, &ctx, &pkt);

		if (r <= 0)
			break;
		w->packets++;
		w->bytes += (unsigned long)r;
		w->checksum = w->checksum * 31 + (uint64_t)r;
		off += (size_t)r;
	}
}

int main(void)
{
	static const char *names[] = {"flow", "timing", "ptw"};
	int same_all = 1;

	printf("PT packet layer: %u MiB synthetic traces, PSB+ every %u bytes, best of %d runs\n\n",
	       TRACE_SIZE >> 20, PSB_PERIOD, REPEAT);
	printf("%-8s %-22s %10s %12s %10s  %s\n", "trace", "decoder", "MB/s", "Mpackets/s",
	       "speed-up", "same packets");
	for (int m = 0; m < 3; m++) {
		uint8_t *b = make_trace((enum mix)m, 0x9e3779b97f4a7c15ull + (uint64_t)m);
		struct bench_walk ours, theirs;
		double t_ours = 1e9, t_ipt = 1e9;

		if (!b) {
			fprintf(stderr, "out of memory\n");
			return 1;
		}
		for (int r = 0; r < REPEAT; r++) {
			double t0 = now();
			ours_walk(b, TRACE_SIZE, &ours);
			double t1 = now();
			if (bench_ipt_walk(b, TRACE_SIZE, &theirs) < 0) {
				fprintf(stderr, "libipt: cannot decode\n");
				return 1;
			}
			double t2 = now();
			if (t1 - t0 < t_ours)
				t_ours = t1 - t0;
			if (t2 - t1 < t_ipt)
				t_ipt = t2 - t1;
		}
		int same = ours.packets == theirs.packets && ours.bytes == theirs.bytes &&
		           ours.checksum == theirs.checksum;
		same_all &= same;
		printf("%-8s %-22s %10.0f %12.1f %9.1fx  %s (%lu packets)\n", names[m],
		       "ptrec ptrec_pt_packet_decode", TRACE_SIZE / 1e6 / t_ours, ours.packets / 1e6 / t_ours,
		       t_ipt / t_ours, same ? "yes" : "NO", ours.packets);
		printf("%-8s %-22s %10.0f %12.1f %10s\n", "", "libipt pt_pkt_next",
		       TRACE_SIZE / 1e6 / t_ipt, theirs.packets / 1e6 / t_ipt, "1.0x");
		free(b);
	}
	return same_all ? 0 : 1;
}
