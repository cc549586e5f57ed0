/* soft_decode.h — turns the instrumented backend's 16-byte records (struct ptrec_soft_record,
 * dump format version 2 on) into branch events: calls, returns (recorded, or inferred from
 * the stack pointer of entry-only records), coverage edges, markers, and TSC timestamps
 * rebuilt from the records' 28-bit time field.  Pure: bytes in, events out. */
#ifndef PTREC_SOFT_DECODE_H
#define PTREC_SOFT_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "core/branch.h"
#include "decode/bts_decode.h"

/* What the decoder knows about the ring besides its bytes (all 0 when unknown). */
struct ptrec_soft_ring_info {
	uint64_t format;      /* PTREC_SOFT_FMT_* word (dump: pt_config of the thread) */
	uint64_t freeze_tsc;  /* TSC when the ring was frozen (dump: pt_config1): the anchor from
	                         which truncated record times are unwrapped */
	uint64_t final_sp;    /* the thread's stack pointer when frozen (dump: stack_pointer):
	                         entry-only frames below it had returned */
};

/* Decodes size ring bytes at data (oldest first) of a ring whose writer wrote head bytes in
 * total.  Writes at most max events to out, oldest first, keeping the NEWEST ones when there
 * are more; a ring of n records yields at most 2 n + 512 events (inferred returns).  Events
 * of timed records carry PTREC_BRF_HAS_TIME and a full TSC timestamp when an anchor (a marker
 * or freeze_tsc) exists.  Returns the number written and fills *st (may be NULL; the
 * `unclassified` field stays 0). */
size_t ptrec_soft_decode(const uint8_t *data, size_t size, uint64_t head,
                         const struct ptrec_soft_ring_info *info, struct ptrec_branch *out,
                         size_t max, struct ptrec_bts_stats *st);

#endif
