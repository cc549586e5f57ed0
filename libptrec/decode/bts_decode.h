/* bts_decode.h — turns BTS-format ring bytes (hardware Intel BTS records and the instrumented
 * backend's soft records, 24-byte struct ptrec_bts_record, oldest first) into branch events.
 * Pure: bytes in, events out; code bytes come only through the caller's reader. */
#ifndef PTREC_BTS_DECODE_H
#define PTREC_BTS_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "core/branch.h"

/* Reads up to len code bytes at addr into buf; returns the bytes read (0 if unknown). */
typedef size_t (*ptrec_code_reader)(void *ctx, uint64_t addr, void *buf, size_t len);

/* What the decoder met. */
struct ptrec_bts_stats {
	uint64_t records;       /* whole records in the data */
	uint64_t events;        /* branch events produced */
	uint64_t empty;         /* all-zero (never written) records skipped */
	uint64_t bad_kind;      /* soft records with an invalid kind, skipped */
	uint64_t unclassified;  /* hardware records whose instruction could not be read (shown
	                           as jmp) */
	uint64_t lead_bytes;    /* bytes of a partial record skipped at the start (wrapped) */
	uint64_t tail_bytes;    /* bytes of a partial record ignored at the end */
};

/* The layout of size ring bytes of rs-byte records, of a ring whose writer wrote head bytes in
 * total: fills st's records, lead_bytes (a partial record at the start when the ring wrapped,
 * skipped) and tail_bytes (a partial record at the end) and returns lead_bytes. */
size_t ptrec_ring_records(size_t size, uint64_t head, size_t rs, struct ptrec_bts_stats *st);

/* Decodes size ring bytes at data, of a ring whose writer wrote head bytes in total (aligns
 * the first record when the ring wrapped).  Hardware records are classified by decoding the
 * branch instruction at `from` through read (may be NULL).  Writes at most max events to out,
 * oldest first, keeping the NEWEST ones when there are more.  Returns the number written;
 * fills *st (may be NULL). */
size_t ptrec_bts_decode(const uint8_t *data, size_t size, uint64_t head, ptrec_code_reader read,
                        void *ctx, struct ptrec_branch *out, size_t max,
                        struct ptrec_bts_stats *st);

/* Classifies the instruction at bytes[0..len) as a branch kind: PTREC_BR_JCC, _JMP, _CALL,
 * _RET, _IND_JMP, _IND_CALL, _FAR, or PTREC_BR_INTERRUPT for a non-branch instruction (an
 * asynchronous event interrupted it); PTREC_BR_NONE if len is too short to tell. */
unsigned ptrec_bts_classify(const uint8_t *bytes, size_t len);

#endif
