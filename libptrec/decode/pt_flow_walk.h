/* pt_flow_walk.h — private to the PT flow decoder: its slow path.  The general walk from block
 * to block in state ST_ENABLED (every branch, event binding, disable, overflow and PTWRITE the
 * hot paths decline), the other states (looking for a PSB, tracing off, resync), and the
 * delivery of queued items: what every step falls back to. */
#ifndef PTREC_DECODE_PT_FLOW_WALK_H
#define PTREC_DECODE_PT_FLOW_WALK_H

#include "decode/pt_flow_state.h"

/* The next run through the general walk (and the queued auxiliary items): 1 with a run, 0 at
 * the end, or a negative error. */
PT_FLOW_HIDDEN int pt_flow_next_run_slow(struct ptrec_pt_flow *f, struct ptrec_pt_flow_run *run);

#endif
