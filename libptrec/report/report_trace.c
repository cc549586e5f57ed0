/* report_trace.c — a Chrome trace-event / Perfetto JSON timeline: one track per thread, a
 * slice per call rebuilt from the branch history (B at the call, E at the return).  Real
 * times (microseconds, from the TSC conversion) when the trace has timestamps; otherwise one
 * microsecond per branch event, which keeps the order and nothing more. */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>

#include "ptrec.h"
#include "report/json_str.h"
#include "report/report.h"

static void jstr(FILE *out, const char *s)
{
	ptrec_json_str(out, s);
}

/* Timestamp (nanoseconds since the thread's first timed event) of event i of thread t; without
 * timestamps one microsecond per event. */
static uint64_t ts_of(const struct ptrec_report_thread *t, size_t i, uint64_t base_ns,
                      uint64_t prev)
{
	const struct ptrec_branch *b = &t->branches[i];
	if (t->has_time) {
		int exact;
		uint64_t ns;
		if (!(b->flags & PTREC_BRF_HAS_TIME))
			return prev; /* untimed events between timed ones keep the last time */
		ns = ptrec_tsc_to_ns(&t->rec->hdr, b->timestamp, &exact);
		return ns >= base_ns ? ns - base_ns : 0;
	}
	return (uint64_t)i * 1000;
}

/* Writes ts (ns) as microseconds with three decimals, without floating point. */
static void put_ts(FILE *out, uint64_t ns)
{
	fprintf(out, "%" PRIu64 ".%03u", ns / 1000, (unsigned)(ns % 1000));
}

static void event(FILE *out, int *first, const char *ph, const char *name, uint32_t pid,
                  uint32_t tid, uint64_t ts)
{
	fputs(*first ? "\n" : ",\n", out);
	*first = 0;
	fprintf(out, "{\"ph\":\"%s\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"ts\":", ph, pid,
	        tid);
	put_ts(out, ts);
	if (name) {
		fputs(",\"name\":", out);
		jstr(out, name);
	}
	fputc('}', out);
}

int ptrec_report_trace(struct ptrec_report *r, FILE *out)
{
	const struct ptrec_dump_process *p = &r->dump->process;
	int first = 1;

	fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", out);
	fputs("\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":", out);
	fprintf(out, "%" PRIu32 ",\"args\":{\"name\":", p->pid);
	jstr(out, p->comm[0] ? p->comm : p->exe);
	fputs("}}", out);
	first = 0;
	for (size_t i = 0; i < r->nthreads; i++) {
		const struct ptrec_report_thread *t = &r->threads[i];
		const struct ptrec_dump_thread *h = &t->rec->hdr;
		uint64_t base_ns = 0;
		size_t depth = 0;
		uint64_t ts = 0;
		char tname[64];

		snprintf(tname, sizeof(tname), "%s%s%s%s", h->name[0] ? h->name : "thread",
		         t->crashed ? " (" : "", t->crashed ? ptrec_report_role(r) : "",
		         t->crashed ? ")" : "");
		fprintf(out, ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%" PRIu32
		        ",\"tid\":%" PRIu32 ",\"args\":{\"name\":", p->pid, h->tid);
		jstr(out, tname);
		fputs("}}", out);
		/* A span placed by time has no markers: its slice runs from the watch's begin TSC
		 * to its end TSC, around the branches timed inside. */
		int by_time = t->span_by_time && !t->span_missed;
		uint64_t end_ns = 0;
		if (t->has_time) {
			int exact;
			base_ns = ptrec_tsc_to_ns(h, t->first_time, &exact);
		}
		if (by_time) {
			const struct ptrec_dump_watch *w = &r->dump->watch;
			char name[96];
			int exact;
			uint64_t b = ptrec_tsc_to_ns(h, w->begin_tsc, &exact);
			base_ns = b < base_ns ? b : base_ns;
			end_ns = ptrec_tsc_to_ns(h, w->end_tsc, &exact) - base_ns;
			snprintf(name, sizeof(name), "watch %s (placed by time)", w->name);
			event(out, &first, "B", name, p->pid, h->tid, b - base_ns);
			depth++;
		}
		/* Calls open before the history starts are unknown; returns past them are skipped. */
		for (size_t k = 0; k < t->nbranches; k++) {
			const struct ptrec_branch *b = &t->branches[k];
			ts = ts_of(t, k, base_ns, ts);
			if (b->kind == PTREC_BR_CALL || b->kind == PTREC_BR_IND_CALL) {
				struct ptrec_symbol s;
				char name[64];
				ptrec_symbolize(&r->sym, b->to, 0, &s);
				if (!s.name)
					snprintf(name, sizeof(name), "0x%" PRIx64, b->to);
				event(out, &first, "B", s.name ? s.name : name, p->pid, h->tid, ts);
				depth++;
			} else if (b->kind == PTREC_BR_RET && depth) {
				event(out, &first, "E", NULL, p->pid, h->tid, ts);
				depth--;
			} else if (b->kind == PTREC_BR_MARKER) {
				/* A watch's span is a slice of its own; other markers are instants. */
				int w = ptrec_mark_is_watch(b->to);
				char name[96];
				if (w && !(b->to & 1)) {
					snprintf(name, sizeof(name), "watch %s",
					         r->dump->has_watch && b->to == r->dump->watch.begin_mark
					                 ? r->dump->watch.name : "(nested)");
					event(out, &first, "B", name, p->pid, h->tid, ts);
					depth++;
				} else if (w && depth) {
					event(out, &first, "E", NULL, p->pid, h->tid, ts);
					depth--;
				} else if (!w) {
					snprintf(name, sizeof(name), "mark 0x%" PRIx64, b->to);
					fprintf(out, ",\n{\"ph\":\"i\",\"s\":\"t\",\"pid\":%" PRIu32
					        ",\"tid\":%" PRIu32 ",\"ts\":", p->pid, h->tid);
					put_ts(out, ts);
					fputs(",\"name\":", out);
					jstr(out, name);
					fputc('}', out);
				}
			} else if (b->kind == PTREC_BR_GAP || b->kind == PTREC_BR_OVERFLOW) {
				fprintf(out, ",\n{\"ph\":\"i\",\"s\":\"t\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32
				        ",\"ts\":", p->pid, h->tid);
				put_ts(out, ts);
				fprintf(out, ",\"name\":\"%s\"}",
				        b->kind == PTREC_BR_GAP ? "trace gap" : "trace overflow");
			}
		}
		if (t->crashed && t->nbranches) {
			fprintf(out, ",\n{\"ph\":\"i\",\"s\":\"t\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32
			        ",\"ts\":", p->pid, h->tid);
			put_ts(out, ts + 1000);
			fputs(",\"name\":", out);
			jstr(out, p->signo ? ptrec_report_signal_name(p->signo) : ptrec_report_event_name(p->event));
			fputc('}', out);
		}
		/* Close what is still open at the end of the history (of the span). */
		while (depth--)
			event(out, &first, "E", NULL, p->pid, h->tid,
			      by_time && end_ns >= ts ? end_ns : ts + 1000);
	}
	fputs("\n]}\n", out);
	return ferror(out) ? -PTREC_EIO : 0;
}
