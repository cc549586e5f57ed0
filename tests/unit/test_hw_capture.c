/* test_hw_capture.c — records a known function with the real hardware and finds it in the
 * ring: with intel_pt, a PSB and a TIP whose target is the function's indirect-call target;
 * with intel_bts, a branch record whose `to` is that target and whose `from` lies in the
 * caller.  Where neither PMU can be used (no PMU in sysfs, perf_event_paranoid too high, the
 * hardware busy) it exits 77 and says exactly why. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/backend.h"
#include "check.h"
#include "capture/perf_aux.h"
#include "decode/pt_packet.h"
#include "ptrec.h"

/* The traced code: hw_caller calls hw_leaf through a volatile pointer, an indirect call whose
 * target a TIP packet (PT) or a branch record (BTS) must carry exactly. */
static volatile unsigned sink;

__attribute__((noinline)) static unsigned hw_leaf(unsigned x)
{
	sink += x;
	return x * 3u + 1u;
}

static unsigned (*volatile leaf_ptr)(unsigned) = hw_leaf;

__attribute__((noinline)) static unsigned hw_caller(unsigned n)
{
	unsigned acc = 0;

	for (unsigned i = 0; i < n; i++)
		acc += leaf_ptr(i);
	return acc;
}

/* The frozen ring's bytes in one buffer, oldest first. */
static uint8_t *linearize(const struct ptrec_ring_view *v, size_t *len)
{
	uint8_t *buf = malloc(v->len[0] + v->len[1] + 1);

	*len = 0;
	if (!buf)
		return NULL;
	for (int i = 0; i < 2; i++)
		if (v->part[i]) {
			memcpy(buf + *len, v->part[i], v->len[i]);
			*len += v->len[i];
		}
	return buf;
}

static int check_pt(const struct ptrec_ring_view *v)
{
	size_t len;
	uint8_t *buf = linearize(v, &len);
	long at = buf ? ptrec_pt_packet_find_psb(buf, len, 0) : -1;
	unsigned psbs = 0, tips = 0, hits = 0;
	uint64_t last_ip = 0, ip;

	CHECK(at >= 0);
	if (at < 0) {
		free(buf);
		return 0;
	}
	enum ptrec_pt_packet_ctx ctx = PT_CTX_NONE;
	for (size_t off = (size_t)at; off < len;) {
		struct ptrec_pt_packet p;
		int n = ptrec_pt_packet_decode(buf + off, len - off, &ctx, &p);

		if (n <= 0) {  /* resynchronise at the next PSB */
			long next = ptrec_pt_packet_find_psb(buf, len, off + 1);
			if (next < 0)
				break;
			off = (size_t)next;
			continue;
		}
		if (p.type == PT_PKT_PSB) {
			psbs++;
			last_ip = 0;
		}
		/* Every IP packet moves last-IP (suppressed ones excepted); count the TIPs. */
		if ((p.type == PT_PKT_TIP || p.type == PT_PKT_TIP_PGE || p.type == PT_PKT_TIP_PGD ||
		     p.type == PT_PKT_FUP) &&
		    ptrec_pt_last_ip_update(&last_ip, &p, &ip) == 0 && p.type == PT_PKT_TIP) {
			tips++;
			if (ip == (uint64_t)(uintptr_t)hw_leaf)
				hits++;
		}
		off += (size_t)n;
	}
	printf("intel_pt: %zu bytes%s, %u PSB, %u TIP, %u TIP to hw_leaf %p\n", len,
	       v->wrapped ? " (wrapped)" : "", psbs, tips, hits, (void *)hw_leaf);
	CHECK(psbs >= 1);
	CHECK(tips >= 1);
	CHECK(hits >= 1);
	free(buf);
	return 1;
}

static int check_bts(const struct ptrec_ring_view *v)
{
	size_t len;
	uint8_t *buf = linearize(v, &len);
	unsigned records = 0, hits = 0;
	uint64_t leaf = (uint64_t)(uintptr_t)hw_leaf, caller = (uint64_t)(uintptr_t)hw_caller;

	if (!buf)
		return 0;
	/* Records are 24-byte aligned from the ring start; the view starts at a record
	 * boundary (the write offset) or at 0. */
	for (size_t off = 0; off + 24 <= len; off += 24) {
		uint64_t rec[3];
		memcpy(rec, buf + off, sizeof(rec));
		if (!rec[0] && !rec[1])
			continue;
		records++;
		/* from inside hw_caller (which is small: within 4 KiB after its start) */
		if (rec[1] == leaf && rec[0] >= caller && rec[0] < caller + 4096)
			hits++;
	}
	printf("intel_bts: %zu bytes%s, %u records, %u calls hw_caller -> hw_leaf\n", len,
	       v->wrapped ? " (wrapped)" : "", records, hits);
	CHECK(records >= 1);
	CHECK(hits >= 1);
	free(buf);
	return 1;
}

/* Records hw_caller with backend b.  Returns 1 if it ran, 0 if the backend is unusable here
 * (reason filled), and fails checks on wrong results. */
static int capture(const struct ptrec_backend_ops *b, const char *name, char *why, size_t wlen)
{
	struct ptrec_config cfg;
	struct ptrec_ring ring;
	struct ptrec_ring_view v;
	char reason[PTREC_REASON_MAX * 2];

	ptrec_config_init(&cfg);
	cfg.ring_size = 64 << 10;
	cfg.filter = NULL;
	int rc = b->probe(&cfg, reason, sizeof(reason));
	if (rc) {
		snprintf(why, wlen, "%s: %s", name, reason);
		/* A PMU that exists but refuses our own config is a bug, not a skip. */
		if (rc == -PTREC_ENOSUPP && strstr(reason, "no intel_") == NULL &&
		    strstr(reason, "no such PMU") == NULL)
			CHECK(!"backend refused its own configuration");
		return 0;
	}
	rc = b->open(&ring, cfg.ring_size, &cfg, reason, sizeof(reason));
	CHECK_EQ_U64(rc, 0);
	if (rc) {
		fprintf(stderr, "%s open: %s\n", name, reason);
		return 1;
	}
	unsigned r = hw_caller(2000);
	CHECK_EQ_U64(b->freeze(&ring), 0);
	CHECK_EQ_U64(ring.frozen, 1);
	CHECK_EQ_U64(b->view(&ring, &v), 0);
	CHECK(v.len[0] + v.len[1] > 0);
	CHECK(v.len[0] + v.len[1] <= ring.size);
	if (b == &ptrec_backend_intel_pt)
		check_pt(&v);
	else
		check_bts(&v);
	CHECK_EQ_U64(b->thaw(&ring), 0);
	CHECK_EQ_U64(ring.frozen, 0);
	r += hw_caller(10);
	CHECK_EQ_U64(b->freeze(&ring), 0);
	b->close(&ring);
	CHECK_EQ_U64(ring.fd, (uint64_t)-1);
	CHECK(r != 0);
	return 1;
}

int main(void)
{
	char why_pt[512] = "", why_bts[512] = "";
	int ran = 0;

	ran += capture(&ptrec_backend_intel_pt, "intel_pt", why_pt, sizeof(why_pt));
	ran += capture(&ptrec_backend_intel_bts, "intel_bts", why_bts, sizeof(why_bts));
	if (!ran && check_failures)
		return check_done();
	if (!ran)
		SKIP("no usable branch-trace hardware here: %s; %s", why_pt, why_bts);
	if (why_pt[0])
		printf("not tested: %s\n", why_pt);
	if (why_bts[0])
		printf("not tested: %s\n", why_bts);
	return check_done();
}
