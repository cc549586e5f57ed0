/* callstack.h — call stacks for the report rebuilt from branch history (calls and returns,
 * so it survives a smashed stack); the stack unwound from registers is in unwind.h.  Pure. */
#ifndef PTREC_CALLSTACK_H
#define PTREC_CALLSTACK_H

#include <stddef.h>
#include <stdint.h>

#include "core/branch.h"
#include "dump/dump_read.h"
#include "report/unwind.h"

/* One open call on the rebuilt stack. */
struct ptrec_frame {
	uint64_t site;      /* call site: the call instruction (PT/BTS), or the return address
	                       (instrumented records, and frames learnt from a return) */
	uint64_t func;      /* the callee's entry (call target), 0 if unknown */
	uint8_t site_is_return_address; /* 1 if site is a return address (look up site - 1) */
	uint8_t resumed;    /* 1 if learnt from a return past the start of the history */
	uint8_t reserved[6];
};

/* Summary of a rebuild. */
struct ptrec_callstack_info {
	size_t depth;       /* frames written */
	size_t dropped;     /* innermost-first frames beyond max, not written (outermost ones) */
	size_t unmatched_returns; /* returns with no call in the history */
	size_t gaps;        /* gaps and overflows met: frames older than them may be wrong */
	uint64_t resync;    /* returns that skipped frames (longjmp, exceptions, tail calls) */
	size_t skipped;     /* frames a jump left that the unwound stack shows are gone
	                       (ptrec_callstack_confirm): not written */
};

/* Replays n branch events (oldest first) and writes the calls still open at the end to out,
 * innermost first (at most max).  soft: the events are instrumented records (CALL.from and
 * RET.to are return addresses).  Returns the number of frames written; fills *info. */
size_t ptrec_callstack_rebuild(const struct ptrec_branch *b, size_t n, int soft,
                               struct ptrec_frame *out, size_t max,
                               struct ptrec_callstack_info *info);

/* A jump out of nested calls (longjmp, a caught exception) makes no returns, so their frames
 * stay on a stack rebuilt from calls until a later return passes them.  The stack unwound from
 * the registers knows better where it walked by call-frame information: frames of f (n,
 * innermost first) that lie between two frames the unwound stack u (nu, innermost first, frame
 * #0 the pc) confirms by their return address, where every unwound frame from the inner one to
 * the outer one was found by CFI with no signal frame between, are dropped.  Call only with an
 * unwound stack that reached the outermost frame.  Returns the new number of frames and adds
 * the dropped ones to info->skipped. */
size_t ptrec_callstack_confirm(struct ptrec_frame *f, size_t n, const struct ptrec_unwind_frame *u,
                               size_t nu, struct ptrec_callstack_info *info);

#endif
