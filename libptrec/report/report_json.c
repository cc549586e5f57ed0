/* report_json.c — the JSON report: one object, schema in doc/report-format.md.  Addresses are
 * hex strings ("0x401136") so that 64-bit values survive every JSON parser. */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ptrec.h"
#include "decode/pt_flow.h"
#include "decode/pt_packet.h"
#include "report/json_str.h"
#include "report/report.h"

/* Writes s as a JSON string (report/json_str.h). */
static void jstr(FILE *out, const char *s)
{
	ptrec_json_str(out, s);
}

/* Writes the members of a LOC object (without its braces); at (may be NULL) overrides the
 * file:line (a frame that called an inlined function is at the call site). */
static void jloc_members(struct ptrec_report *r, FILE *out, uint64_t addr, int ret,
                         const struct ptrec_inline_frame *at)
{
	struct ptrec_symbol s;

	fprintf(out, "\"addr\":\"0x%" PRIx64 "\"", addr);
	if (!addr)
		return;
	ptrec_symbolize(&r->sym, addr, ret, &s);
	if (at) {
		s.file = at->file;
		s.line = at->line;
	}
	if (s.module) {
		fputs(",\"module\":", out);
		jstr(out, s.module->path);
		fprintf(out, ",\"module_offset\":\"0x%" PRIx64 "\"", s.module_offset);
	}
	if (s.name) {
		fputs(",\"function\":", out);
		jstr(out, s.name);
		fprintf(out, ",\"offset\":\"0x%" PRIx64 "\"", s.offset);
	}
	if (s.file) {
		fputs(",\"file\":", out);
		jstr(out, s.file);
		fprintf(out, ",\"line\":%u", s.line);
	}
}

static void jloc(struct ptrec_report *r, FILE *out, uint64_t addr, int ret)
{
	fputc('{', out);
	jloc_members(r, out, addr, ret, NULL);
	fputc('}', out);
}

static void jbranch(struct ptrec_report *r, const struct ptrec_report_thread *t,
                    const struct ptrec_branch *b, FILE *out)
{
	fputs("{\"kind\":", out);
	jstr(out, ptrec_branch_kind_name(b->kind));
	fputs(",\"from\":", out);
	jloc(r, out, b->from, ptrec_branch_from_is_ret(t, b));
	fputs(",\"to\":", out);
	/* (an EVENT's `to` is data, said below: no place in the code) */
	jloc(r, out, b->kind == PTREC_BR_EVENT ? 0 : b->to, ptrec_branch_to_is_ret(t, b));
	if (b->kind == PTREC_BR_JCC)
		fprintf(out, ",\"taken\":%s", b->flags & PTREC_BRF_TAKEN ? "true" : "false");
	if (b->kind == PTREC_BR_MARKER) {
		fprintf(out, ",\"value\":\"0x%" PRIx64 "\"", b->to);
		if (ptrec_mark_is_watch(b->to))
			fprintf(out, ",\"watch\":\"%s\"", b->to & 1 ? "end" : "begin");
	}
	if (b->kind == PTREC_BR_EVENT) { /* event trace: its CFE type, vector, EVD data */
		unsigned type = b->reason >> 8;
		const char *name = ptrec_pt_cfe_name(type);
		fputs(",\"event\":", out);
		if (name)
			jstr(out, name);
		else
			fprintf(out, "%u", type);
		if (ptrec_pt_cfe_has_vector(type))
			fprintf(out, ",\"vector\":%u", b->reason & 0xffu);
		if (b->flags & PTREC_BRF_EVENT_DATA)
			fprintf(out, ",\"%s\":\"0x%" PRIx64 "\"",
			        type == PT_CFE_VMEXIT || type == PT_CFE_VMEXIT_INTR ? "exit_qualification"
			                                                           : "cr2", b->to);
		if (b->flags & PTREC_BRF_EVENT_REASON)
			fprintf(out, ",\"exit_reason\":%" PRIu32, b->reserved);
	}
	if (b->kind == PTREC_BR_GAP) {
		fputs(",\"reason\":", out);
		jstr(out, ptrec_strerror(-(int)b->reason));
		if (b->reserved) /* trace bytes skipped before decoding resumed at "to" */
			fprintf(out, ",\"skipped_bytes\":%" PRIu32, b->reserved);
	}
	if (b->flags & PTREC_BRF_HAS_TIME)
		fprintf(out, ",\"tsc\":%" PRIu64, b->timestamp);
	fputc('}', out);
}

/* The members of a span placed by time (no markers): whether any branch lies inside it, the
 * times the history covers, and how exactly its begin and end are placed (null: unknown). */
static void jspan_time(const struct ptrec_report_thread *t, FILE *out)
{
	fprintf(out, ",\"in_history\":%s,\"history_first_tsc\":%" PRIu64
	        ",\"history_last_tsc\":%" PRIu64 ",\"resolution\":{\"unit\":\"%s\",\"begin\":",
	        t->span_missed ? "false" : "true", t->trace_first_tsc, t->trace_last_tsc,
	        t->span_res_ns ? "ns" : "tsc");
	if (t->span_res_begin)
		fprintf(out, "%" PRIu64, t->span_res_begin);
	else
		fputs("null", out);
	fputs(",\"end\":", out);
	if (t->span_res_end)
		fprintf(out, "%" PRIu64 "}", t->span_res_end);
	else
		fputs("null}", out);
}

/* "task": what the kernel showed of the thread (TASK record). */
static void jtask(uint32_t arch, const struct ptrec_dump_task *k, FILE *out)
{
	static const char *const states[] = {"?", "syscall", "blocked", "running", "unreadable"};
	fprintf(out, ",\"task\":{\"state\":\"%s\"", states[k->state <= 4 ? k->state : 0]);
	if (k->state == PTREC_TASK_SYSCALL) {
		const char *name = ptrec_report_syscall_name(arch, k->nr);
		fprintf(out, ",\"syscall\":{\"nr\":%" PRId64, k->nr);
		if (name) {
			fputs(",\"name\":", out);
			jstr(out, name);
		}
		fputs(",\"args\":[", out);
		for (int i = 0; i < 6; i++)
			fprintf(out, "%s\"0x%" PRIx64 "\"", i ? "," : "", k->args[i]);
		fputs("]}", out);
	}
	if (k->state == PTREC_TASK_SYSCALL || k->state == PTREC_TASK_BLOCKED)
		fprintf(out, ",\"sp\":\"0x%" PRIx64 "\",\"pc\":\"0x%" PRIx64
		        "\",\"stack_bytes\":%" PRIu64, k->sp, k->pc, k->stack_size);
	if (k->state == PTREC_TASK_UNREADABLE) {
		fputs(",\"error\":", out);
		jstr(out, strerror(k->err));
	}
	fprintf(out, ",\"moved\":%s,\"budget_used\":%s}",
	        k->flags & PTREC_TASK_MOVED ? "true" : "false",
	        k->flags & PTREC_TASK_BUDGET ? "true" : "false");
}

static void jthread(struct ptrec_report *r, const struct ptrec_report_thread *t, FILE *out)
{
	const struct ptrec_dump_thread *h = &t->rec->hdr;
	unsigned max = t->crashed ? r->opt.branches : r->opt.other_branches;
	size_t n = t->nbranches < max ? t->nbranches : max;

	fprintf(out, "{\"tid\":%" PRIu32 ",\"name\":", h->tid);
	jstr(out, h->name);
	fputs(",\"backend\":", out);
	jstr(out, ptrec_backend_name(h->backend));
	int crash = r->dump->process.event == PTREC_EVENT_CRASH ||
	            r->dump->process.event == PTREC_EVENT_ASSERT;
	fprintf(out, ",\"crashed\":%s,\"event_thread\":%s", t->crashed && crash ? "true" : "false",
	        t->crashed ? "true" : "false");
	if (t->crashed) {
		fputs(",\"role\":", out);
		jstr(out, ptrec_report_role(r));
	}
	fprintf(out, ",\"flags\":%" PRIu32, h->flags);
	if (t->task)
		jtask(r->dump->process.arch, t->task, out);
	fprintf(out, ",\"ring\":{\"size\":%" PRIu64 ",\"head\":%" PRIu64 ",\"bytes\":%" PRIu64
	        ",\"wrapped\":%s}", h->ring_size, h->head, h->data_size,
	        h->flags & PTREC_THREAD_WRAPPED ? "true" : "false");
	fprintf(out, ",\"history\":{\"branches\":%" PRIu64, t->total_branches);
	if (t->has_time) {
		int exact;
		uint64_t a = ptrec_tsc_to_ns(h, t->first_time, &exact);
		uint64_t b = ptrec_tsc_to_ns(h, t->last_time, &exact);
		fprintf(out, ",\"first_tsc\":%" PRIu64 ",\"last_tsc\":%" PRIu64, t->first_time,
		        t->last_time);
		if (exact)
			fprintf(out, ",\"span_ns\":%" PRIu64, b >= a ? b - a : 0);
	}
	if (t->status) {
		fputs(",\"status\":", out);
		jstr(out, t->status);
	}
	fprintf(out, ",\"gaps\":%zu,\"skipped_frames\":%zu}", t->stack_info.gaps,
	        t->stack_info.skipped);
	fputs(",\"stack\":[", out);
	for (size_t i = 0; i < t->nstack; i++) {
		const struct ptrec_frame *f = &t->stack[i];
		if (i)
			fputc(',', out);
		fputs("{\"site\":", out);
		jloc(r, out, f->site, f->site_is_return_address);
		if (f->func) {
			fputs(",\"callee\":", out);
			jloc(r, out, f->func, 0);
		}
		fprintf(out, ",\"resumed\":%s}", f->resumed ? "true" : "false");
	}
	fputc(']', out);
	if (t->unwound) {
		fputs(",\"backtrace\":[", out);
		for (size_t k = 0; k < t->nunwound; k++) {
			const struct ptrec_unwind_frame *f = &t->unwound[k];
			struct ptrec_inline_frame in[16];
			size_t ni = f->signal_frame ? 0 : ptrec_symbolize_inline(&r->sym, f->pc,
			                                                          f->return_address, in, 16);
			/* Inlined calls first, innermost first: {"addr", "function", "file", "line",
			 * "inlined": true, "inlined_into"}. */
			for (size_t i = 0; i + 1 < ni; i++) {
				fprintf(out, "%s{\"addr\":\"0x%" PRIx64 "\",\"function\":", k || i ? "," : "",
				        f->pc);
				jstr(out, in[i].name ? in[i].name : "?");
				if (in[i].file) {
					fputs(",\"file\":", out);
					jstr(out, in[i].file);
					fprintf(out, ",\"line\":%u", in[i].line);
				}
				fputs(",\"inlined\":true,\"inlined_into\":", out);
				jstr(out, in[i + 1].name ? in[i + 1].name : "?");
				fputs(",\"found_by\":", out);
				jstr(out, ptrec_unwind_how_name(f->how));
				fputc('}', out);
			}
			fputs(k || ni > 1 ? ",{" : "{", out);
			jloc_members(r, out, f->pc, f->return_address, ni ? &in[ni - 1] : NULL);
			fputs(",\"found_by\":", out);
			jstr(out, ptrec_unwind_how_name(f->how));
			if (f->signal_frame)
				fputs(",\"signal_frame\":true", out);
			fputc('}', out);
		}
		fputs("],\"backtrace_stop\":", out);
		jstr(out, t->unwind_stop);
	}
	if (t->span) {
		n = t->nbranches; /* a watch's span is shown whole */
		fprintf(out, ",\"span\":{\"older_left_out\":%zu,\"newer_left_out\":%zu,"
		        "\"begin_overwritten\":%s,\"placed_by\":\"%s\"", t->span_before,
		        t->span_after, t->span_open ? "true" : "false",
		        t->span_by_time ? "time" : "markers");
		if (t->span_by_time)
			jspan_time(t, out);
		fputc('}', out);
	}
	fputs(",\"branches\":[", out);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc(',', out);
		jbranch(r, t, &t->branches[t->nbranches - 1 - i], out);
	}
	fputs("]}", out);
}

int ptrec_report_json(struct ptrec_report *r, FILE *out)
{
	const struct ptrec_dump *d = r->dump;
	const struct ptrec_dump_process *p = &d->process;
	const char *code = ptrec_report_signal_code_name(p->signo, p->si_code);

	fputs("{\"format\":\"ptrec-report\",\"version\":1", out);
	fputs(",\"signature\":", out);
	jstr(out, r->signature);
	fputs(",\"process\":{", out);
	fprintf(out, "\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"event\":", p->pid, p->tid);
	jstr(out, ptrec_report_event_name(p->event));
	fprintf(out, ",\"signal\":{\"number\":%d,\"name\":", p->signo);
	jstr(out, ptrec_report_signal_name(p->signo));
	fprintf(out, ",\"code\":%d,\"code_name\":", p->si_code);
	if (code)
		jstr(out, code);
	else
		fputs("null", out);
	fprintf(out, ",\"errno\":%d}", p->si_errno);
	uint32_t by_pid = 0, by_uid = 0;
	enum ptrec_report_origin origin = ptrec_report_origin(p, &by_pid, &by_uid);
	if (origin == PTREC_ORIGIN_SENT)
		fprintf(out, ",\"fault_addr\":null,\"sender\":{\"pid\":%" PRIu32 ",\"uid\":%" PRIu32
		        "}", by_pid, by_uid);
	else if (origin == PTREC_ORIGIN_FAULT)
		fprintf(out, ",\"fault_addr\":\"0x%" PRIx64 "\",\"sender\":null", p->fault_addr);
	else
		fputs(",\"fault_addr\":null,\"sender\":null", out);
	fprintf(out, ",\"time\":{\"sec\":%" PRId64 ",\"nsec\":%" PRId64 "}", p->time_sec,
	        p->time_nsec);
	fputs(",\"backend\":", out);
	jstr(out, ptrec_backend_name(p->backend));
	fputs(",\"comm\":", out);
	jstr(out, p->comm);
	fputs(",\"exe\":", out);
	jstr(out, p->exe);
	fputs(",\"reason\":", out);
	jstr(out, p->reason);
	fprintf(out, ",\"cpu\":{\"family\":%" PRIu32 ",\"model\":%" PRIu32 ",\"stepping\":%" PRIu32
	        "}}", p->cpu_family, p->cpu_model, p->cpu_stepping);
	if (d->has_watch) {
		fputs(",\"watch\":{\"name\":", out);
		jstr(out, d->watch.name);
		fprintf(out, ",\"budget_ns\":%" PRIu64 ",\"duration_ns\":%" PRIu64
		        ",\"begin_mark\":\"0x%" PRIx64 "\",\"end_mark\":\"0x%" PRIx64
		        "\",\"all_threads\":%s,\"begin_tsc\":%" PRIu64 ",\"end_tsc\":%" PRIu64 "}",
		        d->watch.budget_ns, d->watch.duration_ns, d->watch.begin_mark,
		        d->watch.end_mark, d->watch.flags & PTREC_WATCH_ALL_THREADS ? "true" : "false",
		        d->watch.begin_tsc, d->watch.end_tsc);
	}
	fprintf(out, ",\"dump\":{\"complete\":%s,\"threads\":%zu}", d->complete ? "true" : "false",
	        d->nthreads);
	fputs(",\"recorder\":[", out);
	if (d->status_text) {
		int first = 1;
		for (const char *l = d->status_text; *l;) {
			size_t n = strcspn(l, "\n");
			if (n) {
				char line[1024];
				snprintf(line, sizeof(line), "%.*s", (int)n, l);
				if (!first)
					fputc(',', out);
				jstr(out, line);
				first = 0;
			}
			l += n + (l[n] == '\n');
		}
	}
	fputc(']', out);
	fputs(",\"fault\":", out);
	if (r->have_regs) {
		fputs("{\"location\":", out);
		jloc(r, out, r->fault_pc, 0);
		fputs(",\"bytes\":\"", out);
		for (size_t i = 0; i < r->nfault_bytes; i++)
			fprintf(out, "%s%02x", i ? " " : "", r->fault_bytes[i]);
		char words[16 * 9 + 1];
		if (ptrec_report_fault_words(r, words, sizeof(words))) {
			const char *c = ptrec_report_a64_class((uint32_t)strtoul(words, NULL, 16));
			fprintf(out, "\",\"words\":\"%s\",\"insn_class\":", words);
			if (c)
				jstr(out, c);
			else
				fputs("null", out);
			fputs(",\"bytes_source\":", out);
		} else {
			fputs("\",\"bytes_source\":", out);
		}
		if (r->fault_bytes_source)
			jstr(out, r->fault_bytes_source);
		else
			fputs("null", out);
		fputc('}', out);
	} else {
		fputs("null", out);
	}
	fputs(",\"threads\":[", out);
	for (size_t i = 0; i < r->nthreads; i++) {
		if (i)
			fputc(',', out);
		jthread(r, &r->threads[i], out);
	}
	/* Warnings last: symbolization above may have added some. */
	fputs("],\"warnings\":[", out);
	for (size_t i = 0; i < r->warnings.count; i++) {
		if (i)
			fputc(',', out);
		jstr(out, r->warnings.items[i]);
	}
	fputs("]}\n", out);
	return ferror(out) ? -PTREC_EIO : 0;
}
