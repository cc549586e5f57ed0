/* pt_packet.h — Intel PT packet layer: one packet from bytes, and the last-IP compression.
 * Pure functions: no I/O, no globals, no allocation.  Never read past buf[len).
 * (Contract fixed first so the flow decoder can be written alongside; the implementation may
 * add fields and packet kinds but must keep these.) */
#ifndef PTREC_PT_PACKET_H
#define PTREC_PT_PACKET_H

#include <stddef.h>
#include <stdint.h>

enum ptrec_pt_packet_type {
	PT_PKT_INVALID = 0, /* not a packet (never returned with a positive size) */
	PT_PKT_PAD,         /* 00 */
	PT_PKT_PSB,         /* 02 82 x8: synchronisation boundary (16 bytes) */
	PT_PKT_PSBEND,      /* 02 23 */
	PT_PKT_TNT,         /* short (1 byte) or long (02 a3 + 6 bytes) taken/not-taken */
	PT_PKT_TIP,         /* target IP */
	PT_PKT_TIP_PGE,     /* packet generation enable */
	PT_PKT_TIP_PGD,     /* packet generation disable */
	PT_PKT_FUP,         /* flow update */
	PT_PKT_MODE_EXEC,   /* MODE.Exec: CS.L/CS.D (and IF on newer parts) */
	PT_PKT_MODE_TSX,    /* MODE.TSX: InTX, TXAbort */
	PT_PKT_PIP,         /* paging information (CR3, NR) */
	PT_PKT_VMCS,        /* VMCS pointer */
	PT_PKT_OVF,         /* internal buffer overflow */
	PT_PKT_CBR,         /* core:bus ratio */
	PT_PKT_TSC,         /* 7-byte TSC */
	PT_PKT_MTC,         /* mini time counter (8 bits of CTC) */
	PT_PKT_TMA,         /* TSC/MTC alignment: CTC and FastCounter */
	PT_PKT_CYC,         /* cycle count, variable length */
	PT_PKT_PTW,         /* PTWRITE payload (4 or 8 bytes), IP bit */
	PT_PKT_EXSTOP,      /* execution stop, IP bit */
	PT_PKT_MWAIT,       /* MWAIT hints and extensions */
	PT_PKT_PWRE,        /* power entry */
	PT_PKT_PWRX,        /* power exit */
	PT_PKT_BBP,         /* block begin (PEBS via PT) */
	PT_PKT_BIP,         /* block item; payload size from the enclosing BBP */
	PT_PKT_BEP,         /* block end, IP bit */
	PT_PKT_CFE,         /* control flow event (event trace) */
	PT_PKT_EVD,         /* event data (event trace) */
	PT_PKT_TRIG,        /* trigger */
	PT_PKT_TRACESTOP,   /* TraceStop */
	PT_PKT_MNT,         /* maintenance */
	PT_PKT_TYPE_COUNT_  /* number of types; not a type */
};

/* Event trace (IA32_RTIT_CTL.EventEn): the CFE packet's Type field.  SDM (Intel PT, "Event
 * Trace"): it "exposes details about the asynchronous events, when they are generated, and when
 * their corresponding software event handler completes execution"; interrupts and faults come
 * "including the interrupt vector when defined".  14 (INT n) and 15 (SYSCALL) are the newer
 * types libipt names swintr and syscall. */
enum ptrec_pt_cfe_type {
	PT_CFE_INTR = 1,        /* interrupt, exception, NMI: vector */
	PT_CFE_IRET = 2,        /* interrupt return (IRET, ERETU, ERETS) */
	PT_CFE_SMI = 3,         /* system management interrupt */
	PT_CFE_RSM = 4,         /* resume from SMM */
	PT_CFE_SIPI = 5,        /* startup IPI: vector */
	PT_CFE_INIT = 6,        /* INIT */
	PT_CFE_VMENTRY = 7,     /* VM entry */
	PT_CFE_VMEXIT = 8,      /* VM exit */
	PT_CFE_VMEXIT_INTR = 9, /* VM exit due to an interrupt: vector */
	PT_CFE_SHUTDOWN = 10,   /* shutdown */
	PT_CFE_UINTR = 12,      /* user interrupt: vector */
	PT_CFE_UIRET = 13,      /* user interrupt return */
	PT_CFE_SWINTR = 14,     /* software interrupt (INT n, INT3, INTO, INT1): vector */
	PT_CFE_SYSCALL = 15,    /* SYSCALL */
};

/* The EVD packet's Type field: data of the CFE that follows ("Page faults additionally include
 * the page fault address ... VM exits include the values written to the 'exit reason' and
 * 'exit qualification' VMCS fields"). */
enum ptrec_pt_evd_type {
	PT_EVD_CR2 = 0,  /* page fault linear address */
	PT_EVD_VMXQ = 1, /* VMX exit qualification */
	PT_EVD_VMXR = 2, /* VMX exit reason */
};

/* A CFE type's name ("interrupt", "iret", "smi", "rsm", "sipi", "init", "vmentry", "vmexit",
 * "shutdown", "uintr", "uiret", "swintr", "syscall"), NULL for a type the SDM does not define
 * (VMEXIT_INTR is "vmexit": it differs by its vector). */
const char *ptrec_pt_cfe_name(unsigned type);

/* 1 if the CFE type's Vector field is meaningful (INTR, SIPI, VMEXIT_INTR, UINTR, SWINTR). */
int ptrec_pt_cfe_has_vector(unsigned type);

/* Block context for BIP packets, carried across calls (perf's BLK_4/BLK_8). */
enum ptrec_pt_packet_ctx {
	PT_CTX_NONE = 0, /* outside a block */
	PT_CTX_BLK4 = 4, /* inside a block of 4-byte items (BBP.SZ = 1) */
	PT_CTX_BLK8 = 8, /* inside a block of 8-byte items (BBP.SZ = 0) */
};

/* One decoded packet.  Which fields are meaningful depends on type; unused ones are 0. */
struct ptrec_pt_packet {
	uint8_t type;       /* enum ptrec_pt_packet_type */
	uint8_t size;       /* bytes the packet occupies (1..16; PSB 16) */
	uint8_t ipbytes;    /* TIP/PGE/PGD/FUP: IPBytes field (0,1,2,3,4,6) */
	uint8_t tnt_count;  /* TNT: number of TNT bits (1..6 short, 1..47 long) */
	uint32_t sub;       /* MODE: leaf bits (EXEC: bit0 CS.L, bit1 CS.D, bit2 IF;
	                       TSX: bit0 InTX, bit1 TXAbort); PTW: payload bytes (4/8);
	                       BBP: SZ bit and type; BIP: ID; CFE/EVD: type; CYC: unused;
	                       MWAIT/PWRE/PWRX/MNT/TRIG/TMA: packet-specific small field */
	uint8_t ip_bit;     /* PTW/EXSTOP/BEP/CFE: the IP bit (a FUP follows) */
	uint8_t pad_[7];
	uint64_t payload;   /* TIP/PGE/PGD/FUP: the raw IP bytes (ipbytes worth, zero-extended);
	                       TNT: the bits, bit (tnt_count-1) = oldest branch, bit 0 = newest,
	                       1 = taken; TSC: 56-bit TSC; MTC: CTC byte; CBR: ratio; CYC: cycles;
	                       PIP: CR3 bits (payload << 5 aligned as CR3) ; VMCS: pointer;
	                       TMA: CTC (16 bits); PTW/EVD/BIP/MNT: payload; TRIG: bits
	                       (PIP: the CR3 value itself, bits 51:5 in place, low 5 bits 0;
	                       VMCS: the pointer itself, bits 51:12 in place; TRIG: TRBV;
	                       CFE: vector; MWAIT/PWRE/PWRX: the raw payload bytes) */
	uint64_t payload2;  /* TMA: FastCounter (9 bits); PIP: NR bit; MWAIT: extensions;
	                       PWRX: last/deepest core C-state and wake reason
	                       (PWRX: deepest 3:0, last 7:4, wake 11:8; PWRE: HW bit; TRIG: MULT;
	                       sub is MWAIT: hints, PWRE: C-state 7:4 | sub-state 3:0,
	                       PWRX: wake reason, TRIG: ICNT in 15:0 and bit 16 set when the
	                       packet has one (ICNTV)) */
};

/* Decodes the packet at buf[0..len).  *ctx is the block context, read for BIP and updated by
 * BBP (enter) and BEP (leave); it may be NULL (then PT_CTX_NONE, not updated).
 * (Also left by PSB, OVF and every other packet that cannot occur inside a block; kept by PAD,
 * BIP, FUP and the timing/power packets TSC, TMA, MTC, CYC, CBR, MNT, EXSTOP, PWRE, PWRX.)
 * Returns the packet size (> 0), -PTREC_ETRUNC if buf ends inside the packet, or
 * -PTREC_EFORMAT if the bytes are not a valid packet. */
int ptrec_pt_packet_decode(const uint8_t *buf, size_t len, enum ptrec_pt_packet_ctx *ctx,
                     struct ptrec_pt_packet *pkt);

/* Returns the name of a packet type as a classic packet dump prints it ("psb", "tnt.8",
 * "tip.pge", ...), or "?". */
const char *ptrec_pt_packet_name(const struct ptrec_pt_packet *pkt);

/* Formats pkt's payload for a packet dump into buf (NUL-terminated, truncated to len).
 * Returns the string length it wanted, like snprintf. */
int ptrec_pt_packet_format(const struct ptrec_pt_packet *pkt, char *buf, size_t len);

/* Finds the next PSB at or after buf[from].  Returns its offset, or -PTREC_ENOSYNC. */
long ptrec_pt_packet_find_psb(const uint8_t *buf, size_t len, size_t from);

/* Finds the last PSB that starts before buf[before] (and lies wholly in buf).  Returns its
 * offset, or -PTREC_ENOSYNC. */
long ptrec_pt_packet_find_psb_before(const uint8_t *buf, size_t len, size_t before);

/* Applies an IP packet's compressed payload to *last_ip (SDM "IP compression"):
 * ipbytes 0 = suppressed (returns -PTREC_ENOMAP, last_ip unchanged), 1/2/3 replace the low
 * 16/32/48 bits, 3 sign-extends bit 47, 4 replaces the low 48 bits keeping the upper ones,
 * 6 is the full 64-bit IP.  Returns 0 and stores the full IP in *ip, or -PTREC_EFORMAT for a
 * reserved ipbytes value. */
int ptrec_pt_last_ip_update(uint64_t *last_ip, const struct ptrec_pt_packet *pkt, uint64_t *ip);

#endif
