/* pt_model.h — turns an execution log into the Intel PT stream a processor would write with
 * user-only tracing (IA32_RTIT_CTL.User=1, OS=0, BranchEn=1).  The model:
 *
 *  - the trace starts with PSB+ while packet generation is off; the first user instruction
 *    brings MODE.Exec + TIP.PGE (MODE.Exec is sent when none was sent since the last PSB);
 *  - conditional branches and compressed returns fill a TNT buffer (6 bits, or 47 with long
 *    TNT) that is flushed when full and before every other control-flow packet and PSB;
 *  - indirect jumps and calls, and uncompressed returns, send TIP with the target; with
 *    defer_tip, the TIP of an indirect jump or call that comes while a partial TNT is pending
 *    is held back and sent after that TNT once it fills or another packet forces it out (SDM
 *    "Deferred TIPs": "the TNT will be sent, followed by all the deferred TIP packets"); an
 *    uncompressed RET always forces the TNT out first, so that a decoder can tell it from a
 *    compressed one;
 *  - a return is compressed (a taken TNT bit instead of TIP) only when return compression is
 *    on and the target equals the top of the model's call stack (64 entries, oldest dropped,
 *    direct calls with displacement 0 not pushed), which holds only calls seen since the last
 *    PSB (SDM: "only RETs that correspond to CALLs which have been seen since the last PSB
 *    packet may be compressed").  After an uncompressed return the model forgets its whole
 *    stack, so the trace decodes the same whether a decoder pops its own stack on uncompressed
 *    returns (the SDM's recipe) or not (libipt);
 *  - SYSCALL (and INT n) leave user mode: TIP.PGD with the IP suppressed, because the target is
 *    at CPL 0; a signal or fault in user mode: FUP(IP of the interrupted/faulting instruction)
 *    + TIP.PGD(suppressed); coming back to user mode: TIP.PGE(first user instruction);
 *  - PSB+ (PSB, [TSC, TMA, CBR], MODE.Exec, FUP(next IP), PSBEND) is inserted at the first
 *    instruction boundary after at least psb_period bytes since the last PSB, while packet
 *    generation is on; it resets the last IP and the call stack;
 *  - IP compression against the last IP (reset to 0 by PSB);
 *  - optionally an overflow: before instruction ovf_at the pending TNT goes out, then the
 *    packets of the next ovf_len instructions are lost; then OVF, and FUP(next IP, full 8 bytes)
 *    if packet generation is on (SDM: "FUP if overflow resolves while ContextEn=1, else
 *    TIP.PGE"); the call stack is emptied;
 *  - optional timing: a synthetic clock (each instruction takes 1..3 cycles; TSC counts one
 *    tick per cycle; the crystal clock CTC runs at TSC/2), TSC+TMA in PSB+, MTC when CTC bit
 *    mtc_freq changes, CYC before every control-flow and MTC packet, CBR in PSB+. */
#ifndef PTGEN_PT_MODEL_H
#define PTGEN_PT_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "exec_log.h"
#include "pt_encode.h"

/* How IP packets are compressed. */
enum pm_ipcomp {
	PM_IP_MIN = 0, /* the smallest encoding: 16/32-bit update, else 48-bit sign-extended, else
	                  48-bit update, else full */
	PM_IP_SEXT,    /* always 48-bit sign-extended (IPBytes 011), else full */
	PM_IP_FULL,    /* always the full 8 bytes (IPBytes 110) */
	PM_IP_MIX,     /* a pseudo-random valid encoding each time (seeded, reproducible) */
};

/* Timing packets to generate (bit set). */
#define PM_T_TSC 0x1u /* TSC in PSB+ */
#define PM_T_MTC 0x2u /* MTC packets and TMA in PSB+ (implies TSC) */
#define PM_T_CYC 0x4u /* CYC packets */
#define PM_T_CBR 0x8u /* CBR in PSB+ */

/* Ratio of TSC to the crystal clock (CPUID.15H: EBX/EAX) in the synthetic clock. */
#define PM_TSC_PER_CTC 2u
/* Core:bus ratio written in CBR packets (and the nominal ratio). */
#define PM_CBR 20u

/* Encoder settings. */
struct pm_config {
	size_t psb_period;     /* bytes between PSBs (0: only at the start) */
	int retcomp;           /* compress returns */
	unsigned tnt_max;      /* TNT bits per packet: 6 (short only) or 47 (long TNT too) */
	enum pm_ipcomp ipcomp; /* IP packet compression */
	unsigned timing;       /* PM_T_* */
	unsigned mtc_freq;     /* MTC period: CTC bit number (1..15) */
	unsigned repeat;       /* the whole run this many times (>= 1), each starting with PSB+ */
	uint64_t seed;         /* for PM_IP_MIX */
	int64_t corrupt_tnt;   /* flip this TNT bit (0-based, over the whole output); -1: none */
	int defer_tip;         /* defer TIPs behind a partial TNT (SDM "Deferred TIPs") */
	int64_t ovf_at;        /* an internal buffer overflow before instruction ovf_at (0-based,
	                          first repetition); -1: none */
	uint64_t ovf_len;      /* the packets of this many instructions are lost */
};

/* What was generated. */
struct pm_stats {
	uint64_t insns;        /* instructions encoded (XL_INSN records, times repeat) */
	uint64_t psb;          /* PSB packets */
	uint64_t tnt_packets;  /* TNT packets (short and long) */
	uint64_t tnt_bits;     /* TNT bits: conditional branches and compressed returns */
	uint64_t ret_comp;     /* compressed returns */
	uint64_t tip;          /* TIP packets */
	uint64_t pge;          /* TIP.PGE packets */
	uint64_t pgd;          /* TIP.PGD packets */
	uint64_t fup;          /* FUP packets (PSB+ and asynchronous events) */
	uint64_t timing;       /* TSC, TMA, MTC, CYC, CBR packets */
	uint64_t ovf;          /* OVF packets */
	uint64_t tsc_first;    /* synthetic TSC when the trace starts */
	uint64_t tsc_last;     /* synthetic TSC after the last instruction */
};

/* Sets *cfg to the defaults: PSB every 4 KiB, return compression on, long TNT, minimal IP
 * compression, no timing, mtc_freq 3, repeat 1, no corruption. */
void pm_config_default(struct pm_config *cfg);

/* Encodes log into out (appending).  Returns 0, or -1 if out of memory or the log is not
 * encodable (message on stderr). */
int pm_encode(const struct xl_log *log, const struct pm_config *cfg, struct pe_buf *out,
              struct pm_stats *st);

#endif
