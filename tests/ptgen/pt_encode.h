/* pt_encode.h — ptgen's own Intel PT packet writers, written from the SDM (Vol. 3C, "Intel
 * Processor Trace", packet definitions).  Test-only and deliberately independent of libptrec's
 * packet decoder: each function appends one packet's bytes to a growable buffer. */
#ifndef PTGEN_PT_ENCODE_H
#define PTGEN_PT_ENCODE_H

#include <stddef.h>
#include <stdint.h>

/* A growable output buffer.  On allocation failure `failed` is set and appends are dropped. */
struct pe_buf {
	uint8_t *data; /* bytes (malloc'd) */
	size_t len;    /* bytes used */
	size_t cap;    /* bytes allocated */
	int failed;    /* an allocation failed */
};

/* IP packet headers (the low 5 bits; IPBytes goes into bits 7:5). */
enum pe_ip_type {
	PE_TIP_PGD = 0x01, /* TIP.PGD: packet generation disabled */
	PE_TIP = 0x0d,     /* TIP: target of an indirect branch, far transfer, uncompressed RET */
	PE_TIP_PGE = 0x11, /* TIP.PGE: packet generation enabled */
	PE_FUP = 0x1d,     /* FUP: source IP of an asynchronous event */
};

/* IPBytes values (SDM table "Compression of the IP payload"). */
enum pe_ipbytes {
	PE_IP_SUPPRESSED = 0, /* no payload; last IP unchanged */
	PE_IP_UPD16 = 1,      /* 2 bytes replace IP[15:0] of the last IP */
	PE_IP_UPD32 = 2,      /* 4 bytes replace IP[31:0] */
	PE_IP_SEXT48 = 3,     /* 6 bytes: IP[47:0], sign-extended from bit 47 */
	PE_IP_UPD48 = 4,      /* 6 bytes replace IP[47:0] */
	PE_IP_FULL = 6,       /* 8 bytes: the whole IP */
};

void pe_bytes(struct pe_buf *b, const void *p, size_t n);
void pe_pad(struct pe_buf *b);                          /* PAD: 00 */
void pe_psb(struct pe_buf *b);                          /* PSB: (02 82) x 8 */
void pe_psbend(struct pe_buf *b);                       /* PSBEND: 02 23 */
void pe_ovf(struct pe_buf *b);                          /* OVF: 02 f3 */

/* Short TNT with n (1..6) bits: bits bit (n-1) = oldest branch ... bit 0 = newest, 1 = taken. */
void pe_tnt_short(struct pe_buf *b, uint64_t bits, unsigned n);
/* Long TNT (02 a3 + 6 bytes) with n (1..47) bits, same bit order. */
void pe_tnt_long(struct pe_buf *b, uint64_t bits, unsigned n);

/* An IP packet of the given type with the given IPBytes; ip's low bytes form the payload. */
void pe_ip(struct pe_buf *b, enum pe_ip_type type, enum pe_ipbytes ipbytes, uint64_t ip);

/* MODE.Exec (99 + leaf 000): csl = CS.L, csd = CS.D, iflag = RFLAGS.IF (bit 2). */
void pe_mode_exec(struct pe_buf *b, int csl, int csd, int iflag);
/* MODE.TSX (99 + leaf 001): intx, txabort. */
void pe_mode_tsx(struct pe_buf *b, int intx, int txabort);

void pe_tsc(struct pe_buf *b, uint64_t tsc);            /* TSC: 19 + TSC[55:0] */
void pe_mtc(struct pe_buf *b, uint8_t ctc);             /* MTC: 59 + CTC[N+7:N] */
/* TMA: 02 73 + CTC[15:0], reserved byte, FastCounter[8:0]. */
void pe_tma(struct pe_buf *b, uint16_t ctc, uint16_t fc);
void pe_cbr(struct pe_buf *b, uint8_t ratio);           /* CBR: 02 03 ratio 00 */
/* CYC: cycles since the last CYC, 5 bits in the header byte then 7 per extra byte.  cycles
 * must be > 0. */
void pe_cyc(struct pe_buf *b, uint64_t cycles);

/* PTW (02 + header byte 0x12 | PayloadBytes << 5 | IP << 7, then the payload): a PTWRITE
 * operand of `bytes` (4 or 8) bytes; ip_bit says a FUP with the PTWRITE's IP follows. */
void pe_ptw(struct pe_buf *b, uint64_t payload, unsigned bytes, int ip_bit);

/* Event trace (IA32_RTIT_CTL.EventEn).  CFE, control flow event (02 13, then IP << 7 | Type
 * in bits 4:0, then the Vector byte): type (enum of the SDM's CFE types: 1 INTR, 2 IRET, 3 SMI,
 * 4 RSM, 5 SIPI, 6 INIT, 7 VMENTRY, 8 VMEXIT, 9 VMEXIT_INTR, 10 SHUTDOWN, 12 UINTR, 13 UIRET,
 * 14 INT n, 15 SYSCALL); ip_bit says a FUP with the event's IP follows. */
void pe_cfe(struct pe_buf *b, unsigned type, uint8_t vector, int ip_bit);
/* EVD, event data for the CFE that follows (02 53, then Type in bits 5:0, then 8 bytes of
 * payload): type 0 the page fault address (CR2), 1 the VMX exit qualification, 2 the VMX
 * exit reason. */
void pe_evd(struct pe_buf *b, unsigned type, uint64_t payload);

#endif
