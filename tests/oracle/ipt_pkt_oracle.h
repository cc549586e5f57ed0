/* ipt_pkt_oracle.h — libipt's packet decoder as a test oracle, behind a neutral interface
 * (libipt's intel-pt.h and our pt_packet.h both define struct ptrec_pt_packet, so they cannot meet in
 * one translation unit).  Test-only; built when configure finds libipt. */
#ifndef PTREC_TEST_IPT_PKT_ORACLE_H
#define PTREC_TEST_IPT_PKT_ORACLE_H

#include <stddef.h>
#include <stdint.h>

/* One packet as libipt decoded it, in our naming and field conventions. */
struct ipt_pkt {
	const char *name; /* our dump name ("tnt.8", "tip.pge", "mode.exec", ...) */
	int size;         /* bytes */
	uint64_t v[3];    /* type-specific fields, see ipt_pkt_oracle.c */
};

/* A libipt packet decoder over buf[0..len), positioned at offset 0 (NULL on failure). */
void *ipt_pkt_open(const uint8_t *buf, size_t len);
void ipt_pkt_close(void *dec);

/* Decodes the next packet.  Returns its size, IPT_PKT_EOS when the trace ends inside the packet
 * (or at the end), IPT_PKT_BAD for a packet libipt does not accept, IPT_PKT_OTHER for other
 * errors. */
#define IPT_PKT_EOS (-1)
#define IPT_PKT_BAD (-2)
#define IPT_PKT_OTHER (-3)
int ipt_pkt_next(void *dec, struct ipt_pkt *out);

/* Moves the decoder to offset off (e.g. a PSB found by other means).  Returns 0 or -1. */
int ipt_pkt_seek(void *dec, size_t off);

#endif
