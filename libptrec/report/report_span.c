/* report_span.c — cuts the event thread's history to a latency watch's span: between its begin
 * and end markers, or, when the ring holds no markers (intel_pt without PTWRITE), to the
 * branches whose times lie between the TSCs the watch read at begin and end. */
#include "config.h"

#include <inttypes.h>
#include <string.h>

#include "report/report.h"

/* Keeps t's branches [begin, end) and notes what was left out on either side. */
static void keep(struct ptrec_report_thread *t, size_t begin, size_t end)
{
	t->span = 1;
	t->span_after = t->nbranches - end;
	t->span_before = begin;
	memmove(t->branches, t->branches + begin, (end - begin) * sizeof(*t->branches));
	t->nbranches = end - begin;
}

/* Index of the newest marker with value v before index end, or SIZE_MAX. */
static size_t find_marker(const struct ptrec_report_thread *t, size_t end, uint64_t v)
{
	for (size_t k = end; k > 0; k--)
		if (t->branches[k - 1].kind == PTREC_BR_MARKER && t->branches[k - 1].to == v)
			return k - 1;
	return SIZE_MAX;
}

/* From its begin marker to its end marker, both kept.  The newest end marker wins; a missing
 * begin marker (the ring wrapped since) keeps everything older. */
static void cut_by_markers(struct ptrec_report *r, struct ptrec_report_thread *t,
                           const struct ptrec_dump_watch *w, size_t end)
{
	size_t begin = find_marker(t, end, w->begin_mark);

	if (begin == SIZE_MAX) {
		begin = 0;
		t->span_open = 1;
		ptrec_warn(&r->warnings, "watch \"%s\": its begin marker was overwritten (the span "
		           "is longer than the ring holds); the span starts at the oldest branch kept",
		           w->name);
	}
	keep(t, begin, end + 1);
}

/* TSC ticks d as nanoseconds with the thread's conversion (*ns = 1), else as ticks. */
static uint64_t ticks_ns(const struct ptrec_report_thread *t, uint64_t d, int *ns)
{
	int exact;
	uint64_t zero = ptrec_tsc_to_ns(&t->rec->hdr, 0, &exact);
	uint64_t v = ptrec_tsc_to_ns(&t->rec->hdr, d, &exact);
	*ns = exact;
	return exact ? v - zero : d;
}

/* The branches timed in [begin_tsc, end_tsc].  A branch's time is that of the last timing
 * packet before the packet that decided it, so the branches timed just before the begin may
 * have run after it, and those timed just before the end after the end: the resolution noted
 * is the distance from the last branch time outside the span to the first inside (begin) and
 * from the last inside to the first outside (end). */
static void cut_by_time(struct ptrec_report *r, struct ptrec_report_thread *t,
                        const struct ptrec_dump_watch *w)
{
	uint64_t lo = w->begin_tsc, hi = w->end_tsc;
	uint64_t before = 0, after = UINT64_MAX, in_first = UINT64_MAX, in_last = 0;
	uint64_t tmin = UINT64_MAX, tmax = 0;
	size_t first = SIZE_MAX, last = 0, split = t->nbranches;
	int have_before = 0, timed = 0, ns;

	for (size_t i = 0; i < t->nbranches; i++) {
		const struct ptrec_branch *b = &t->branches[i];
		uint64_t ts = b->timestamp;
		if (!(b->flags & PTREC_BRF_HAS_TIME))
			continue;
		timed = 1;
		tmin = ts < tmin ? ts : tmin;
		tmax = ts > tmax ? ts : tmax;
		if (ts < lo) {
			before = have_before && before > ts ? before : ts;
			have_before = 1;
		} else if (ts > hi) {
			after = ts < after ? ts : after;
			split = split < i ? split : i;
		} else {
			first = first == SIZE_MAX ? i : first;
			last = i;
			in_first = ts < in_first ? ts : in_first;
			in_last = ts > in_last ? ts : in_last;
		}
	}
	if (!timed) {
		ptrec_warn(&r->warnings, "watch \"%s\": the ring holds no markers and the branches of "
		           "thread %" PRIu32 " carry no times, so the span cannot be placed; the "
		           "history is shown uncut", w->name, t->rec->hdr.tid);
		return;
	}
	t->span_by_time = 1;
	t->trace_first_tsc = tmin;
	t->trace_last_tsc = tmax;
	if (first == SIZE_MAX) {
		/* Nothing inside: say so rather than show branches from outside the span. */
		t->span_missed = 1;
		t->status = "no branch is timed inside the watched span";
		ptrec_warn(&r->warnings, "watch \"%s\": no branch of thread %" PRIu32 " is timed "
		           "inside its span (TSC %" PRIu64 "..%" PRIu64 "; the history covers %" PRIu64
		           "..%" PRIu64 ")", w->name, t->rec->hdr.tid, lo, hi, tmin, tmax);
		keep(t, split, split);
		return;
	}
	t->span_open = !have_before;
	t->span_res_begin = have_before ? ticks_ns(t, in_first - before, &ns) : 0;
	t->span_res_end = after != UINT64_MAX ? ticks_ns(t, after - in_last, &ns) : 0;
	ticks_ns(t, 0, &ns);
	t->span_res_ns = ns;
	if (t->span_open)
		ptrec_warn(&r->warnings, "watch \"%s\": no branch kept is timed before its begin (the "
		           "span is older than the history kept); the span starts at the oldest branch",
		           w->name);
	keep(t, first, last + 1);
}

void ptrec_report_cut_span(struct ptrec_report *r, struct ptrec_report_thread *t,
                           const struct ptrec_dump_watch *w)
{
	size_t end = find_marker(t, t->nbranches, w->end_mark);

	if (end != SIZE_MAX) {
		cut_by_markers(r, t, w, end);
		return;
	}
	if (w->begin_tsc && w->end_tsc >= w->begin_tsc) {
		cut_by_time(r, t, w);
		return;
	}
	ptrec_warn(&r->warnings, "watch \"%s\": its end marker is not in the history of "
	           "thread %" PRIu32 "; the history is shown uncut", w->name, t->rec->hdr.tid);
}
