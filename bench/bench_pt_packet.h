/* bench_pt_packet.h — what the packet benchmark measures for each decoder. */
#ifndef PTREC_BENCH_PT_PACKET_H
#define PTREC_BENCH_PT_PACKET_H

#include <stddef.h>
#include <stdint.h>

struct bench_walk {
	unsigned long packets; /* packets decoded */
	unsigned long bytes;   /* bytes they covered */
	uint64_t checksum;     /* over the sequence of packet sizes */
};

/* Walks buf with libipt's packet decoder (bench_pt_packet_ipt.c).  Returns 0 or -1. */
int bench_ipt_walk(const uint8_t *buf, size_t len, struct bench_walk *w);

#endif
