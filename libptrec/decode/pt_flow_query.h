/* pt_flow_query.h — private to the PT flow decoder: its event/query state.  The packet cursor
 * with one item of look-ahead (the next packet that is not a TNT, timing or status packet: TIP,
 * TIP.PGE, TIP.PGD, a FUP pair, a PSB+ sync point, OVF, the end, an error) and the TNT queue;
 * the status packets and the items they queue (aux) or hold until their FUP or their branch
 * (MWAIT, EXSTOP, MODE.TSX, PIP, VMCS, TRIG, PTW); PSB+; the sync points segments stop at.
 * It knows nothing of the code but what straight-line code a TRIG or PTW binds to. */
#ifndef PTREC_DECODE_PT_FLOW_QUERY_H
#define PTREC_DECODE_PT_FLOW_QUERY_H

#include "decode/pt_flow_state.h"

/* Reads packets until the look-ahead item is known or, unless want_tip, a TNT packet was
 * queued.  Bounded by the trace length: every iteration consumes at least one byte or stops. */
PT_FLOW_HIDDEN void pt_flow_lookahead(struct ptrec_pt_flow *f, int want_tip);

/* Processes PSB+ starting at the PSB at pos.  Sets have_fup and fup.  Returns 0, 1 if the trace
 * ended inside it, 2 if an OVF ended it (pos is at the OVF), or a negative error (pos is then
 * at the bad packet). */
PT_FLOW_HIDDEN int pt_flow_psb_plus(struct ptrec_pt_flow *f, int *have_fup, uint64_t *fup);

/* The type of the first packet at or after pos that is not a status or timing packet
 * (PT_PKT_INVALID at the end or at a bad packet); reads without consuming. */
PT_FLOW_HIDDEN unsigned pt_flow_peek(const struct ptrec_pt_flow *f, size_t pos);

/* Queues an auxiliary item for delivery (dropped when the queue is full). */
PT_FLOW_HIDDEN void pt_flow_aux_push(struct ptrec_pt_flow *f, unsigned kind, uint64_t payload,
                                     uint64_t arg, uint64_t ip);

/* The FUP the held items waited for came: they happen at ip, before the instruction there. */
PT_FLOW_HIDDEN void pt_flow_release_fup_held(struct ptrec_pt_flow *f, uint64_t ip);

/* The branch the held PIP/VMCS belonged to was delivered (async: an interrupt or an
 * asynchronous disable, which report the VMCS first). */
PT_FLOW_HIDDEN void pt_flow_release_br_held(struct ptrec_pt_flow *f, int async);

/* The CFE/EVD items held (event trace) happen now, before what else is bound to the branch or
 * event at hand: they are queued, those without an IP get ip.  Returns 1 if there were any. */
PT_FLOW_HIDDEN int pt_flow_release_cfe(struct ptrec_pt_flow *f, uint64_t ip);

/* The why of the error of an EVD that its CFE does not take ("unexpected packet context"). */
PT_FLOW_HIDDEN extern const char pt_flow_why_evd[];

/* A MOV CR3 executed: the oldest PIP waiting for its instruction belongs to it. */
PT_FLOW_HIDDEN void pt_flow_release_one_pip(struct ptrec_pt_flow *f);

/* A MODE.Exec outside PSB+ took effect at the branch or enable just delivered. */
PT_FLOW_HIDDEN void pt_flow_apply_mode(struct ptrec_pt_flow *f, const struct nx *nx);

/* Delivers the oldest waiting TRIG (the flow is at its IP). */
PT_FLOW_HIDDEN void pt_flow_trig_release(struct ptrec_pt_flow *f);

/* The flow will not get to the waiting TRIGs' IPs (tracing went off, an overflow): deliver
 * them now. */
PT_FLOW_HIDDEN void pt_flow_trig_flush(struct ptrec_pt_flow *f);

/* Follows code that needs no packet (straight line, direct JMP/CALL) from ip: returns the
 * address of the first PTWRITE (ptwrite != 0) or the address reached after n instructions;
 * 0 if a branch that needs a packet, or no code, comes first. */
PT_FLOW_HIDDEN uint64_t pt_flow_straight_walk(const struct ptrec_pt_flow *f, uint64_t ip,
                                              unsigned mode, unsigned n, int ptwrite);

/* 1 if the oldest queued PTWRITE payload is due now: its PTWRITE (the IP its FUP gave) was
 * just reported, its IP is unknown, or tracing is not on. */
PT_FLOW_HIDDEN int pt_flow_ptw_due(const struct ptrec_pt_flow *f);

/* Takes the state that decides what comes next into *k (see ptrec_pt_flow_joined). */
PT_FLOW_HIDDEN void pt_flow_key_take(const struct ptrec_pt_flow *f, struct flow_key *k);

/* Execution reached the PSB+ at psb_off: what happens from here depends only on PSB+ (its
 * state was applied when it was read).  Direct branches from here on carry its time. */
PT_FLOW_HIDDEN void pt_flow_psb_reached(struct ptrec_pt_flow *f, uint64_t psb_off);

/* A PSB+ at psb_off was just bound: stop there if it is at or after stop_sync.  Returns 1 if
 * the decoder stopped (state ST_END). */
PT_FLOW_HIDDEN int pt_flow_stop_at_sync(struct ptrec_pt_flow *f, uint64_t psb_off);

#endif
