/* pt_tail.h — tail-first decoding: the last N branch events of a PT buffer, decoding only the
 * newest PSB segments that they need.
 *
 * Each PSB+ starts a segment that a decoder can start at (pt_flow.h, "Segment decoding").  For
 * the last N events the newest segment is decoded first, then the one before it, and so on,
 * until N events are known; each older segment is decoded up to the PSB where the newer one
 * started and must arrive there in the state the newer one started in (ptrec_pt_flow_joined),
 * so the stitched events are the events of a whole-buffer decode, event for event, gaps and
 * times included.  Event times are ordered across segments as the whole decode orders them
 * (ptrec_pt_flow_order_time): the decoding steps back until that ordering no longer depends on
 * what came before (PT_TIME_SLIP ticks of trace time).  Where that cannot be shown, the whole
 * buffer is decoded instead (info->whole): a segment boundary whose states differ, times that
 * depend on a calibrated clock ratio (configure the ratios: pt_time.h), or a newest segment too
 * long to keep.  Pure; not async-signal-safe (allocates). */
#ifndef PTREC_PT_TAIL_H
#define PTREC_PT_TAIL_H

#include <stddef.h>
#include <stdint.h>

#include "decode/branch_ring.h"
#include "decode/pt_flow.h"
#include "decode/pt_image.h"

/* What a tail-first decode looked at. */
struct ptrec_pt_tail_info {
	uint64_t from;          /* trace offset decoding started at (the oldest PSB used) */
	uint64_t bytes;         /* trace bytes decoded */
	uint32_t segments;      /* PSB segments decoded */
	int whole;              /* 1: the whole buffer was decoded (see above) */
	int reached_start;      /* the decoded history starts at the buffer's first PSB */
	int stopped;            /* opts->stop ended it: the ring holds the newest events found */
	uint64_t events;        /* branch events decoded (all segments, before taken_only) */
	struct ptrec_pt_flow_stats stats; /* decoder counters, summed */
};

/* The last ring->cap branch events of buf[0..len) as ptrec_pt_flow_decode_last would keep them
 * (same options, same events in the same order), decoded tail-first.  ring's old contents are
 * cleared; info (may be NULL) says how far back it looked.  Returns the number of GAP events in
 * what was decoded, -PTREC_EINVAL, -PTREC_ENOMEM, or -PTREC_ERATE when opts->stop ended it
 * (ring then holds the events of the newest segments decoded so far, oldest first). */
int ptrec_pt_flow_decode_tail(const uint8_t *buf, size_t len, struct ptrec_pt_img *image,
                              const struct ptrec_pt_flow_last_opts *opts, struct branch_ring *ring,
                              struct ptrec_pt_tail_info *info);

#endif
