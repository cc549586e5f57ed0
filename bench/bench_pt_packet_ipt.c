/* bench_pt_packet_ipt.c — libipt's packet decoder timed over a buffer, for bench_pt_packet.
 * (A separate translation unit: intel-pt.h and our pt_packet.h both define struct pt_packet.) */
#include "config.h"

#include <string.h>

#include <intel-pt.h>

#include "bench_pt_packet.h"

int bench_ipt_walk(const uint8_t *buf, size_t len, struct bench_walk *w)
{
	struct pt_config cfg;
	struct pt_packet_decoder *dec;
	struct pt_packet pkt;

	memset(&cfg, 0, sizeof(cfg));
	cfg.size = sizeof(cfg);
	cfg.begin = (uint8_t *)buf;
	cfg.end = (uint8_t *)buf + len;
	dec = pt_pkt_alloc_decoder(&cfg);
	if (!dec)
		return -1;
	memset(w, 0, sizeof(*w));
	if (pt_pkt_sync_set(dec, 0) < 0) {
		pt_pkt_free_decoder(dec);
		return -1;
	}
	for (;;) {
		int r = pt_pkt_next(dec, &pkt, sizeof(pkt));

		if (r < 0)
			break;
		w->packets++;
		w->bytes += pkt.size;
		w->checksum = w->checksum * 31 + pkt.size;
	}
	pt_pkt_free_decoder(dec);
	return 0;
}
