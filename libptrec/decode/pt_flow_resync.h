/* pt_flow_resync.h — private to the PT flow decoder: what happens after something goes wrong.
 * A gap (an event that says from where, why and at which trace offset decoding lost the flow)
 * and where decoding resumes: the next PSB after an error of the packets, the next packet that
 * gives an IP after an error of the flow (ST_RESYNC); and the errata whose patterns the walk
 * asks about (BDM64, SKD022; the others are applied where their packets are read). */
#ifndef PTREC_DECODE_PT_FLOW_RESYNC_H
#define PTREC_DECODE_PT_FLOW_RESYNC_H

#include "decode/pt_flow_query.h"

/* pt_flow_gap()'s resync_from for errors of the flow (not of the packets): the packet stream
 * is intact, so decoding resumes at the next packet that gives an IP (ST_RESYNC), the
 * look-ahead item included. */
#define RESYNC_AT_IP SIZE_MAX

/* Turns the current situation into a GAP event and schedules a resync.  off is where the
 * problem is; resync starts at resync_from: the next PSB from there, or with RESYNC_AT_IP the
 * next packet that gives an IP. */
PT_FLOW_HIDDEN void pt_flow_gap(struct ptrec_pt_flow *f, struct ptrec_pt_flow_run *run,
                                uint64_t from, int err, const char *why, uint64_t off,
                                size_t resync_from);

/* The look-ahead item could not serve the decision the code asks for: a gap. */
PT_FLOW_HIDDEN void pt_flow_mismatch(struct ptrec_pt_flow *f, struct ptrec_pt_flow_run *run,
                                     uint64_t from, const char *why);

/* ST_RESYNC: waits for the next packet that says where execution is.  Returns 1 with a run
 * (a DISABLE), 0 at the end, or -1 to go on (state changed). */
PT_FLOW_HIDDEN int pt_flow_step_resync(struct ptrec_pt_flow *f, struct ptrec_pt_flow_run *run);

/* BDM64: 1 if target cannot be reached from f->ip by straight-line code (the TSX abort's FUP
 * disagrees with where the last branch went; the abort then binds where the flow is). */
PT_FLOW_HIDDEN int pt_flow_bdm64(struct ptrec_pt_flow *f, uint64_t target);

/* SKD022: 1 if nx is a FUP + TIP.PGD at a VMLAUNCH/VMRESUME, the disable of that (executed)
 * instruction. */
PT_FLOW_HIDDEN int pt_flow_skd022(struct ptrec_pt_flow *f, const struct nx *nx);

#endif
