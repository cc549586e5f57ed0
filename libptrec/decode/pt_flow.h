/* pt_flow.h — Intel PT instruction flow: packets plus a code image in, instructions and branch
 * events out.
 *
 * Pure: no I/O, no globals; memory is the decoder itself plus its block cache (no allocation per
 * instruction or per event).  Not async-signal-safe (the block cache is malloc'd): decode after
 * the dump is written, e.g. in the report process, never inside the crash signal handler.  Never crashes or hangs on any input: every loop is bounded, every
 * inconsistency becomes a GAP event followed by a resync (see Errors below).
 *
 * Semantics (SDM vol. 3C ch. "Intel Processor Trace", matching libipt's instruction decoder):
 * - Decoding starts at the first PSB.  PSB+ (up to PSBEND) refreshes state: FUP = the IP where
 *   execution continues (no FUP: tracing is disabled until TIP.PGE), MODE.Exec, MODE.TSX,
 *   TSC/TMA/CBR, PIP, VMCS.  The first sync emits no event.
 * - TNT bits are consumed oldest first through a queue that carries across packets.  A TIP may
 *   be deferred by the hardware: TNT bits for branches after an indirect branch can precede its
 *   TIP; an indirect branch takes the next TIP even while bits remain queued.
 * - Near RET: if a TNT bit is queued it is a compressed return (the bit must be 1, the target is
 *   popped from a 64-entry return stack fed by near calls); otherwise it takes the next TIP.
 * - Asynchronous events bind to an IP and only once the TNT queue is empty (all earlier
 *   conditional branches resolved): FUP(X)+TIP(Y) is an interrupt/exception (INTERRUPT event
 *   X->Y), FUP(X)+TIP.PGD is an asynchronous disable (DISABLE event from X).  The instruction at
 *   X is NOT reported as executed: for a fault with kernel tracing off, the instruction stream
 *   ends with the instruction before the faulting one, and DISABLE.from is the faulting IP
 *   (libipt's ptev_async_disabled.at / ptev_async_branch.from).
 * - TIP.PGD without FUP ends tracing at the branch needing it (syscall into the untraced kernel,
 *   a branch out of the filter region): that branch is executed, DISABLE.from is its address.
 *   TIP.PGE(X) re-enables at X (ENABLE event, to = X).
 * - MODE.Exec applies to the target of the next TIP/TIP.PGE (or the PSB+ IP); 64/32/16-bit.
 *   One whose IF bit changed and that a FUP follows (event trace: STI, CLI, POPF) only says
 *   where IF changed: a PT_FLOW_AUX_IFLAGS item at that FUP's IP; the mode stays.
 * - MODE.TSX: begin/commit bind at their FUP silently; an abort (TXAbort) is followed by
 *   FUP(X)+TIP(handler) and becomes a TSX_ABORT event X->handler (X not executed).
 * - OVF: an OVERFLOW event; the TNT queue and return stack are dropped; decoding resumes at the
 *   following FUP (to = its IP) or TIP.PGE (to = 0, then an ENABLE event), or the next PSB+.
 * - PTW: each PTWRITE payload is delivered as a PT_FLOW_AUX_PTW item where it occurs: right
 *   after its PTWRITE instruction (what that instruction wrote) when a FUP gave that
 *   instruction's IP (FUPonPTW; aux_ip = that IP), else before the code that follows the
 *   packets read so far; at once while tracing is off.
 * - Status events are auxiliary items too (enum ptrec_pt_flow_aux), never branch events:
 *   MNT, PWRE, PWRX, EXSTOP (IP=0), TraceStop and CBR (outside PSB+: a new core:bus ratio)
 *   where they are read (a PWRE read while an MWAIT or EXSTOP waits for its FUP, or just
 *   before an EXSTOP with IP=1: after them, the C-state entry of that stop; an OVF that loses
 *   that FUP: the PWRE, then MWAIT and EXSTOP with aux_ip 0), and an MWAIT with no EXSTOP
 *   (IP=1) after it (aux_ip 0: no FUP gives its IP); MWAIT, EXSTOP (IP=1)
 *   and MODE.TSX begin/commit when the flow reaches the IP of their FUP; PIP and VMCS after
 *   the far branch, interrupt or disable they belong to (before a DISABLE at the far branch
 *   itself: no FUP, so they bind to that instruction; at once while tracing is off; not
 *   for those inside PSB+, which only restate the state; those an OVF follows before that
 *   instruction was reached, before the OVERFLOW: the change was made before it);
 *   MODE.Exec after the TIP/TIP.PGE it applies to.  Runs executed inside a TSX transaction
 *   carry PT_FLOW_RUN_SPECULATIVE.
 * - Errors (bad packet, IP outside the image, undecodable instruction, a packet the code does not
 *   call for, empty return stack, ...) emit a GAP event (reason = the -PTREC_E* code, plus a
 *   text; the run's offset is where the decoder is, as ptxed reports it: the packet that
 *   completes the item read ahead, see nx_at in pt_flow_state.h).  After an error of the
 *   packets (bad packet, bad IP compression) decoding resumes at the next PSB; after an
 *   error of the flow (no image at an IP, undecodable instruction, a packet the code does
 *   not call for, a bad compressed return) the packets are still in step and it resumes at
 *   the next packet that gives an IP: a TIP's target (also after a FUP; a lone TIP only
 *   while no TNT bit was dropped since the error: it may be a deferred TIP, SDM 36.4.2.3),
 *   a FUP bound to PTWRITE/MODE.TSX/EXSTOP, a PSB+ FUP; TNT bits before it are dropped; a
 *   TIP.PGD there is a DISABLE (tracing went off in the gap), a TIP.PGE an ENABLE.  A TNT or
 *   TIP while tracing is off (PacketEn=0 by the packets) is such an error ("unexpected
 *   packet context"): tracing was on.
 * - MOV CR3 ("generates PIP"): the oldest PIP waiting binds right after it; a TIP.PGD
 *   without IP right there disables tracing after it (a CR3 filter).
 * - A disable at a branch stops tracing at the branch's target, or without IP at the next
 *   instruction: a TIP.PGE there sets PT_FLOW_RUN_RESUMED (SYSCALL ... SYSRET).
 * - A TSX abort whose FUP is followed by TIP.PGD: a PT_FLOW_AUX_TSX abort item at the FUP's
 *   IP, then the DISABLE.  BDM64: an abort FUP that straight-line code from where the last
 *   branch went cannot reach binds there.
 * - The end of the trace: once the last packet is used (no TNT bit left, nothing after it),
 *   the flow stops where it is, with a PT_FLOW_AUX_END item at that IP while tracing: nothing
 *   proves that the instructions after the last packet ran, and a flight recorder must not
 *   claim them (ptxed's "[end of trace]").  The crash site itself comes from the dump's
 *   registers, not from here.  A trace cut inside its last packet proves that execution went
 *   on to that packet: the flow goes on to the first instruction needing it (not reported),
 *   then ends the same way.  A FUP as the very last packet: the flow goes on to its IP.
 * - TRIG: with IP=1 it binds at its FUP's IP like MWAIT; else it fired ICNT instructions
 *   after the last branch the packets report (a TIP's target, the branch that took the last
 *   bit of a TNT read before it) or the previous TRIG, and is delivered when the flow reaches the
 *   instruction that many on (followed through straight-line code and direct JMP/CALL when the
 *   packet is read; otherwise, or without ICNT, where it is read); one the flow does not get
 *   to comes when tracing goes off or at an overflow.
 * - PTW without FUP: right after the next PTWRITE executed (found the same way), else at once.
 * - Event trace (CFE, EVD): a CFE is the compound event it starts; EVDs before it give its data
 *   (EVD items right before the CFE item).  A CFE followed by a FUP + TIP/TIP.PGD (the FUP
 *   gives the source, the TIP the destination: SDM "Compound Packet Event Summary") comes at
 *   the FUP's IP, before the INTERRUPT or DISABLE (an interrupt with its vector, SMI, INIT, a
 *   VM exit, ...); one that a TIP or TIP.PGD of a branch follows (IRET, UIRET, VMRESUME; with
 *   IP=1 its FUP gives that instruction's IP and is no event of its own) comes right after
 *   that branch, before the PIP/VMCS bound to it and before a DISABLE; while tracing is off
 *   it comes at once (before the ENABLE of a TIP.PGE: RSM, SIPI, VM entry); one whose FUP
 *   pair or branch an OVF lost, before the OVERFLOW.  An EVD that its
 *   CFE does not take (CR2 is a page fault's, the exit qualification and reason a VM exit's,
 *   each once) is an error "unexpected packet context" where it is read (GAP from 0: no
 *   instruction is at fault); decoding resumes at the next PSB.  Unknown CFE/EVD types are
 *   ignored (a CFE's FUP with them).
 * - Every branch event carries the time (pt_time.h) current at the packet that decided it. */
#ifndef PTREC_PT_FLOW_H
#define PTREC_PT_FLOW_H

#include <stddef.h>
#include <stdint.h>

#include "core/branch.h"
#include "decode/branch_ring.h"
#include "decode/pt_image.h"
#include "decode/pt_time.h"
#include "decode/x86_ild.h"

/* Processor errata the decoder works around (see ptrec_pt_flow_cpu_errata). */
#define PT_ERRATUM_SKL014 0x1u /* TIP.PGD without IP after a direct branch leaving the filter
                                  region: disable after that branch */
#define PT_ERRATUM_APL11  0x2u /* OVF may be followed by a spurious TIP.PGD: ignore it */
#define PT_ERRATUM_SKD010 0x4u /* the FUP after OVF may be missing: resume at the next TIP */
#define PT_ERRATUM_SKD007 0x8u /* an OVF may overwrite the second byte of a multi-byte CYC */
#define PT_ERRATUM_SKD022 0x10u /* a VM entry that clears TraceEn may add a FUP before its
                                   TIP.PGD: the VMLAUNCH/VMRESUME executed */
#define PT_ERRATUM_APL12  0x20u /* OVF may be followed by a FUP although tracing is off: a
                                   TIP.PGE before any TIP.PGD says it was */
#define PT_ERRATUM_BDM64  0x40u /* the branch before a TSX abort may give a wrong target: an
                                   abort the flow cannot reach binds where the flow stops */
#define PT_ERRATUM_BDM70  0x80u /* PSB+ may hold FUP and MODE.Exec while tracing is off: a
                                   TIP.PGE after it says tracing was off */

/* A CPU as F/M/S (display family/model/stepping). */
struct ptrec_pt_flow_cpu {
	uint16_t family;   /* e.g. 6 */
	uint16_t model;    /* e.g. 0x4e */
	uint16_t stepping; /* 0 if unknown */
};

/* Decoder configuration. */
struct ptrec_pt_flow_config {
	const uint8_t *buf;          /* the trace (borrowed; must outlive the decoder) */
	size_t len;                  /* its size */
	struct ptrec_pt_img *image;      /* the code image (borrowed) */
	unsigned errata;             /* PT_ERRATUM_* bits (see ptrec_pt_flow_cpu_errata) */
	struct ptrec_pt_time_config time;  /* what is known about the clocks (zeros: nothing) */
};

/* Auxiliary (non-branch) items. */
enum ptrec_pt_flow_aux {
	PT_FLOW_AUX_NONE = 0, /* none */
	PT_FLOW_AUX_PTW,      /* PTWRITE payload in aux_payload, the PTWRITE's IP in aux_ip (0:
	                         not known) */
	/* Status events, where the SDM binds them (none is a branch: consumers of branches can
	 * ignore them).  aux_ip is the IP they bind to, 0 when they bind to none. */
	PT_FLOW_AUX_EXEC_MODE,/* MODE.Exec took effect at the branch or enable just delivered:
	                         aux_payload = enum ptrec_x86_mode */
	PT_FLOW_AUX_PAGING,   /* PIP: CR3 in aux_payload, NR in aux_arg; after the far branch,
	                         interrupt or disable it belongs to (at once while disabled) */
	PT_FLOW_AUX_VMCS,     /* VMCS: the VMCS pointer in aux_payload; bound like PAGING */
	PT_FLOW_AUX_MNT,      /* maintenance packet: payload */
	PT_FLOW_AUX_PWRE,     /* power entry: aux_payload = resolved C-state byte (7:4 state,
	                         3:0 sub-state), aux_arg = HW bit */
	PT_FLOW_AUX_PWRX,     /* power exit: aux_payload = deepest 3:0, last 7:4, wake 11:8 */
	PT_FLOW_AUX_MWAIT,    /* MWAIT hints in aux_payload, extensions in aux_arg; at aux_ip */
	PT_FLOW_AUX_EXSTOP,   /* execution stopped (at aux_ip when the packet had IP=1) */
	PT_FLOW_AUX_STOP,     /* TraceStop: tracing stopped */
	PT_FLOW_AUX_TSX,      /* MODE.TSX begin (aux_payload 1) or commit (0) at aux_ip; abort
	                         (2): while tracing is off (aux_ip 0), or an abort whose FUP is
	                         followed by TIP.PGD (at aux_ip, before that DISABLE) */
	PT_FLOW_AUX_END,      /* the trace ended while tracing, at aux_ip (no packet says more):
	                         the instruction there is not known to have executed */
	PT_FLOW_AUX_CBR,      /* CBR outside PSB+: the core:bus ratio changed to aux_payload */
	PT_FLOW_AUX_TRIG,     /* TRIG: the trigger bits (TRBV) in aux_payload, MULT in aux_arg;
	                         at aux_ip (0: where the packet was read) */
	PT_FLOW_AUX_IFLAGS,   /* event trace: RFLAGS.IF became aux_payload (STI, CLI, POPF) at
	                         aux_ip */
	PT_FLOW_AUX_RESYNC,   /* decoding resumed after the last GAP: at aux_ip (0: where tracing
	                         was off, or the trace ended), at the packet at trace offset
	                         aux_payload; aux_arg trace bytes lay between the GAP's offset and
	                         that packet, unused (counted in stats.skipped) */
	/* Event trace (CFE and EVD packets; see "Event trace" above). */
	PT_FLOW_AUX_CFE,      /* a control flow event: aux_payload = its type (enum
	                         ptrec_pt_cfe_type), aux_arg = its vector for the types that have
	                         one (ptrec_pt_cfe_has_vector), else 0; aux_ip = the IP it binds to
	                         (its FUP's), 0: none given */
	PT_FLOW_AUX_EVD,      /* data of the CFE item that comes right after it: aux_payload =
	                         the value, aux_arg = its type (enum ptrec_pt_evd_type) */
};

/* ptrec_pt_flow_run.flags */
#define PT_FLOW_RUN_SPECULATIVE 0x1u /* the run's instructions executed inside a TSX
                                        transaction (committed or aborted later) */
#define PT_FLOW_RUN_RESUMED 0x2u     /* an ENABLE at the very IP where an asynchronous
                                        disable stopped: execution resumes there */

/* One step of the flow: a run of consecutive executed instructions, then what ended it. */
struct ptrec_pt_flow_run {
	uint64_t ip;           /* address of the first instruction of the run */
	uint32_t ninsn;        /* instructions executed in the run (may be 0) */
	uint8_t mode;          /* enum ptrec_x86_mode of the run */
	uint8_t last_iclass;   /* enum ptrec_x86_iclass of the last instruction (ninsn > 0) */
	uint8_t aux;           /* enum ptrec_pt_flow_aux: an auxiliary item instead of an event */
	uint8_t flags;         /* PT_FLOW_RUN_* */
	const uint8_t *len;    /* ninsn instruction lengths; valid until the next call */
	struct ptrec_branch ev;/* event after the run (kind PTREC_BR_NONE: none) */
	const char *why;       /* GAP: a short description of the cause, else NULL */
	uint64_t aux_payload;  /* aux item: its payload (see enum ptrec_pt_flow_aux) */
	uint64_t aux_arg;      /* aux item: a second value (see enum ptrec_pt_flow_aux) */
	uint64_t aux_ip;       /* aux item: the IP it binds to (0: none) */
	uint64_t offset;       /* trace offset of the packet that decided ev (or of the error) */
};

/* One executed instruction. */
struct ptrec_pt_flow_insn {
	uint64_t ip;     /* address */
	uint8_t length;  /* bytes */
	uint8_t iclass;  /* enum ptrec_x86_iclass (branches; X86_IC_OTHER for everything else) */
	uint8_t mode;    /* enum ptrec_x86_mode */
};

/* Counters, cumulative. */
struct ptrec_pt_flow_stats {
	uint64_t insns;        /* instructions reported */
	uint64_t events;       /* branch events reported (all kinds) */
	uint64_t gaps;         /* GAP events */
	uint64_t overflows;    /* OVERFLOW events */
	uint64_t skipped;      /* trace bytes skipped before the first PSB and when resyncing */
	uint64_t blocks;       /* basic blocks decoded into the cache */
	uint64_t block_hits;   /* block cache lookups that hit */
};

struct ptrec_pt_flow;

/* Returns the errata flags (PT_ERRATUM_*) that apply to cpu; 0 for a zeroed cpu. */
unsigned ptrec_pt_flow_cpu_errata(const struct ptrec_pt_flow_cpu *cpu);

/* Parses "F/M[/S]" (decimal or 0x-hex numbers) into *cpu.  Returns 0 or -PTREC_EINVAL. */
int ptrec_pt_flow_parse_cpu(const char *s, struct ptrec_pt_flow_cpu *cpu);

/* Creates a decoder over cfg->buf with cfg->image.  Returns NULL on bad arguments or when out of
 * memory. */
struct ptrec_pt_flow *ptrec_pt_flow_new(const struct ptrec_pt_flow_config *cfg);

/* Event trace (IA32_RTIT_CTL.EventEn) was on: MODE.Exec's IF bit is meaningful, and where a
 * MODE.Exec first gives it after the IF state was unknown (start, OVF) it is reported (a
 * PT_FLOW_AUX_IFLAGS item), as ptxed --event:iflags does.  Call before decoding; off by
 * default (IF is then reported only where it changes). */
void ptrec_pt_flow_set_event_trace(struct ptrec_pt_flow *f, int on);

/* Frees the decoder and its block cache.  NULL is ignored. */
void ptrec_pt_flow_free(struct ptrec_pt_flow *f);

/* Decodes the next run.  Returns 1 and fills *run, 0 at the end of the trace, or -PTREC_ENOMEM
 * (the block cache could not grow; the decoder is still usable after memory is freed).
 * A trace without any PSB yields one GAP (reason PTREC_ENOSYNC) and then the end. */
int ptrec_pt_flow_next_run(struct ptrec_pt_flow *f, struct ptrec_pt_flow_run *run);

/* Decodes up to max runs into runs[] (the batch form of ptrec_pt_flow_next_run: less overhead per
 * run).  Returns the number filled (0 at the end of the trace) or -PTREC_ENOMEM when none could
 * be.  Each run's len stays valid until the next call on f. */
int ptrec_pt_flow_next_runs(struct ptrec_pt_flow *f, struct ptrec_pt_flow_run *runs, size_t max);

/* Totals of the runs of a decode (ptrec_pt_flow_count). */
struct ptrec_pt_flow_counts {
	uint64_t insns;                      /* instructions */
	uint64_t kind[PTREC_BR_KIND_COUNT_]; /* branch events by kind (enum ptrec_br_kind) */
	uint64_t jcc_taken;                  /* PTREC_BR_JCC events with PTREC_BRF_TAKEN */
	uint64_t ret_compressed;             /* events with PTREC_BRF_COMPRESSED_RET */
	uint64_t aux;                        /* auxiliary items (all kinds) */
	uint64_t ptw;                        /* of which PT_FLOW_AUX_PTW */
	uint64_t time_first;                 /* time stamp of the first event with
	                                        PTREC_BRF_HAS_TIME (have_time) */
	uint64_t time_last;                  /* and of the last one */
	int have_time;                       /* an event had a time */
};

/* Decodes the rest of the trace and adds to *c (zeroed by the caller before its first call)
 * exactly what ptrec_pt_flow_next_runs's runs would add up to, without producing the runs: the
 * fast way to totals (`ptrec decode --stat`).  Returns 0 at the end of the trace or
 * -PTREC_ENOMEM (c then holds the totals so far). */
int ptrec_pt_flow_count(struct ptrec_pt_flow *f, struct ptrec_pt_flow_counts *c);

/* Instruction iterator over the runs: returns PT_FLOW_INSN and fills *insn, PT_FLOW_EVENT and
 * fills *ev (a branch event, or for aux items a PTREC_BR_NONE event with *run describing it),
 * 0 at the end, or -PTREC_ENOMEM.  run may be NULL when the caller does not want details. */
#define PT_FLOW_INSN 1
#define PT_FLOW_EVENT 2
int ptrec_pt_flow_next_insn(struct ptrec_pt_flow *f, struct ptrec_pt_flow_insn *insn, struct ptrec_branch *ev,
                      struct ptrec_pt_flow_run *run);

/* A caller-owned instruction iterator over batches of runs (ptrec_pt_flow_next_runs): the fastest
 * way to visit every executed instruction; the per-instruction step is inline.  Set up with
 * ptrec_pt_flow_iter_init, then call ptrec_pt_flow_iter_next until it returns 0 (end) or < 0. */
#define PT_FLOW_ITER_BATCH 64
struct ptrec_pt_flow_iter {
	const uint8_t *len;                         /* next instruction length of the current run */
	const uint8_t *len_end;                     /* end of the current run's lengths */
	uint64_t ip;                                /* address of the next instruction */
	uint8_t mode;                               /* mode of the current run */
	uint8_t last_iclass;                        /* iclass of its last instruction */
	uint8_t ev_pending;                         /* its event is still to be delivered */
	unsigned cur;                               /* current run */
	unsigned nrun;                              /* runs in the batch */
	struct ptrec_pt_flow *f;                          /* the decoder */
	struct ptrec_pt_flow_run run[PT_FLOW_ITER_BATCH]; /* the current batch */
};

static inline void ptrec_pt_flow_iter_init(struct ptrec_pt_flow_iter *it, struct ptrec_pt_flow *f)
{
	it->f = f;
	it->nrun = 0;
	it->cur = 0;
	it->len = it->len_end = NULL;
	it->ev_pending = 0;
	it->ip = 0;
}

/* Makes run k of the batch current (internal). */
static inline void ptrec_pt_flow_iter_enter_(struct ptrec_pt_flow_iter *it, unsigned k)
{
	const struct ptrec_pt_flow_run *r = &it->run[k];
	it->cur = k;
	it->len = r->len;
	it->len_end = r->len + r->ninsn;
	it->ip = r->ip;
	it->mode = r->mode;
	it->last_iclass = r->last_iclass;
	it->ev_pending = r->ev.kind != PTREC_BR_NONE || r->aux;
}

/* Returns PT_FLOW_INSN with *insn filled, PT_FLOW_EVENT with *run pointing to the run whose
 * event (run->ev) or auxiliary item (run->aux) comes now (valid until the next call), 0 at the
 * end of the trace, or -PTREC_ENOMEM. */
static inline int ptrec_pt_flow_iter_next(struct ptrec_pt_flow_iter *it, struct ptrec_pt_flow_insn *insn,
                                    const struct ptrec_pt_flow_run **run)
{
	for (;;) {
		if (it->len < it->len_end) {
			uint8_t l = *it->len++;
			insn->ip = it->ip;
			insn->length = l;
			insn->mode = it->mode;
			insn->iclass = it->len == it->len_end ? it->last_iclass : X86_IC_OTHER;
			it->ip += l;
			return PT_FLOW_INSN;
		}
		if (it->ev_pending) {
			it->ev_pending = 0;
			*run = &it->run[it->cur];
			return PT_FLOW_EVENT;
		}
		if (it->cur + 1 < it->nrun) {
			ptrec_pt_flow_iter_enter_(it, it->cur + 1);
			continue;
		}
		int n = ptrec_pt_flow_next_runs(it->f, it->run, PT_FLOW_ITER_BATCH);
		if (n <= 0)
			return n;
		it->nrun = (unsigned)n;
		ptrec_pt_flow_iter_enter_(it, 0);
	}
}

/* Returns the counters so far. */
const struct ptrec_pt_flow_stats *ptrec_pt_flow_stats(const struct ptrec_pt_flow *f);

/* Segment decoding (ptrec_pt_flow_decode_tail).  At every PSB+ the decoder's state is reset to
 * what PSB+ says (IP, mode, tracing on/off, an empty return stack: the SDM lets a RET be
 * compressed only when its CALL came after the last PSB; the time of the run: ptrec_pt_time_psb),
 * so a decoder started at a PSB continues exactly like one that decoded everything before it,
 * as long as both hold the same state there; these tell whether they do. */

/* Offset of the PSB the decoder first synchronised at, or -1. */
long ptrec_pt_flow_first_sync(const struct ptrec_pt_flow *f);

/* 1 if the decoder ended at its stop_sync (ptrec_pt_flow_restart). */
int ptrec_pt_flow_stopped(const struct ptrec_pt_flow *f);

/* 1 if some event time depended on a calibrated clock ratio (or on the lack of one): such
 * times depend on trace before the last PSB. */
int ptrec_pt_flow_time_calibrated(const struct ptrec_pt_flow *f);

/* Starts f again as a segment decoder: from offset start (looking for a PSB there), ending
 * where a PSB+ at or after stop_sync (0: none) would be bound, after the events a whole decode
 * emits before it; event times are left unordered (ptrec_pt_flow_order_time).  Keeps the block
 * cache, the counters and the configuration.  Returns 0 or -PTREC_EINVAL. */
int ptrec_pt_flow_restart(struct ptrec_pt_flow *f, size_t start, size_t stop_sync);

/* After a restart with stop_sync = the previous segment's first sync: 1 if f stopped there in
 * exactly the state the previous segment's decoding had right after that sync, so that from
 * there on both produce the same events. */
int ptrec_pt_flow_joined(const struct ptrec_pt_flow *f);

/* The ordering of event times (applied by the decoder unless raw_time): ptrec_pt_time_order on
 * the stamp of an event that has one.  *last is the previous timed event's (ordered) stamp, 0 at
 * the start. */
static inline void ptrec_pt_flow_order_time(uint64_t *last, struct ptrec_branch *ev)
{
	if (ev->flags & PTREC_BRF_HAS_TIME)
		ev->timestamp = ptrec_pt_time_order(last, ev->timestamp);
}

/* Options of pt_flow_decode_last. */
struct ptrec_pt_flow_last_opts {
	unsigned errata;             /* PT_ERRATUM_* bits */
	struct ptrec_pt_time_config time;  /* clock knowledge (zeros: nothing) */
	int taken_only;              /* drop not-taken conditional branches from the ring */
	int (*stop)(void *arg);      /* polled every few thousand runs; non-zero stops decoding
	                                (e.g. a deadline); may be NULL */
	void *stop_arg;              /* its argument */
};

/* A GAP event in a list of events (a ring) is followed by the RESYNC item resync: the GAP's
 * `to` becomes where decoding resumed (0: tracing was off there) and its `reserved` the trace
 * bytes skipped (saturated), so that reports kept from the events say both.  Changes nothing
 * unless gap is a GAP not completed yet. */
void ptrec_pt_flow_gap_resumed(struct ptrec_branch *gap, const struct ptrec_pt_flow_run *resync);

/* Event trace items as branch events, for lists of events (rings, reports): feeds run, an item
 * of the decode in order.  An EVD item's data goes into *acc (zeroed by the caller before the
 * first call); at a CFE item *out becomes its PTREC_BR_EVENT (core/branch.h: the IP, type and
 * vector, and the data of the EVD items fed since the last CFE), *acc is zeroed again, and it
 * returns 1; else 0. */
int ptrec_pt_flow_event_branch(const struct ptrec_pt_flow_run *run, struct ptrec_branch *acc,
                               struct ptrec_branch *out);

/* Describes a PTREC_BR_EVENT (without its IP) into buf: "interrupt 14, cr2 0xf00baa", "iret",
 * "vmexit, interrupt 14, exit reason 0x30, exit qualification 0xf00", "sipi 206", ...; the
 * type's number for a type the SDM does not name.  Returns buf. */
const char *ptrec_pt_flow_event_text(const struct ptrec_branch *ev, char *buf, size_t len);

/* Entry point for reports: decodes the whole PT buffer buf[0..len) against image and keeps the
 * last ring->cap branch events (oldest overwritten) in ring, which the caller set up with
 * ptrec_branch_ring_init (its old contents are cleared).  Every branch event kind goes in, GAP and
 * OVERFLOW included, every PTWRITE as a PTREC_BR_MARKER event in its place (from = the IP
 * where the flow was, to = the payload), and every event-trace event as a PTREC_BR_EVENT
 * (ptrec_pt_flow_event_branch); with opts->taken_only not-taken JCC events are left
 * out.  opts may be NULL.
 * stats (may be NULL) receives the counters.
 * Returns the number of GAP events (0 = the whole trace decoded cleanly), 
 * -PTREC_EINVAL for bad arguments, -PTREC_ENOMEM, or -PTREC_ERATE when opts->stop stopped it
 * (ring then holds the events up to that point). */
int ptrec_pt_flow_decode_last(const uint8_t *buf, size_t len, struct ptrec_pt_img *image,
                        const struct ptrec_pt_flow_last_opts *opts, struct branch_ring *ring,
                        struct ptrec_pt_flow_stats *stats);

#endif
