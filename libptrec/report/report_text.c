/* report_text.c — the text report (layout documented in doc/report-format.md). */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ptrec.h"
#include "core/safe_str.h"
#include "decode/pt_flow.h"
#include "report/report.h"

/* Thread names, comm and paths come from the crashed process (an attacker may choose them):
 * printed with control bytes and non-ASCII as \xHH, so they cannot split lines or send
 * terminal escapes.  "-" for an empty name. */
static const char *esc(const char *s, char *buf, size_t cap)
{
	struct ptrec_sbuf b;
	ptrec_sbuf_init(&b, buf, cap);
	ptrec_sbuf_escaped(&b, s && s[0] ? s : "-");
	return buf;
}

/* Formats one address as "0xADDR symbol+0xoff (file:line)"; at (may be NULL) overrides the
 * file:line (a frame that called an inlined function is at the call site). */
static const char *loc_at(struct ptrec_report *r, uint64_t addr, int ret,
                          const struct ptrec_inline_frame *at, char *buf, size_t len)
{
	struct ptrec_symbol s;
	char tmp[1024];
	if (!addr) {
		snprintf(buf, len, "?");
		return buf;
	}
	ptrec_symbolize(&r->sym, addr, ret, &s);
	if (at) {
		s.file = at->file;
		s.line = at->line;
	}
	ptrec_symbol_format(&s, tmp, sizeof(tmp));
	if (s.name || s.module)
		snprintf(buf, len, "0x%" PRIx64 " %s", addr, tmp);
	else
		snprintf(buf, len, "0x%" PRIx64, addr);
	return buf;
}

static const char *loc(struct ptrec_report *r, uint64_t addr, int ret, char *buf, size_t len)
{
	return loc_at(r, addr, ret, NULL, buf, len);
}

static void print_branch(struct ptrec_report *r, const struct ptrec_report_thread *t,
                         const struct ptrec_branch *b, size_t idx, FILE *out)
{
	char from[1400], to[1400];
	const char *kind = ptrec_branch_kind_name(b->kind);

	fprintf(out, "  #%-4zu ", idx);
	switch (b->kind) {
	case PTREC_BR_GAP:
		fprintf(out, "-- gap: history lost here (%s)", ptrec_strerror(-(int)b->reason));
		if (b->from || b->to)
			fprintf(out, " between %s and %s", loc(r, b->from, 0, from, sizeof(from)),
			        loc(r, b->to, 0, to, sizeof(to)));
		if (b->reserved)
			fprintf(out, ", %" PRIu32 " trace bytes skipped", b->reserved);
		break;
	case PTREC_BR_OVERFLOW:
		fprintf(out, "-- overflow: the hardware dropped history here");
		if (b->to)
			fprintf(out, "; resumed at %s", loc(r, b->to, 0, to, sizeof(to)));
		break;
	case PTREC_BR_MARKER:
		if (ptrec_mark_is_watch(b->to))
			fprintf(out, "-- watch %s (marker %#" PRIx64 ")", b->to & 1 ? "end" : "begin",
			        b->to);
		else
			fprintf(out, "%-9s value %#" PRIx64, kind, b->to);
		if (b->from)
			fprintf(out, " at %s", loc(r, b->from, 0, from, sizeof(from)));
		break;
	case PTREC_BR_EVENT: /* event trace: what the processor said happened (no branch) */
		fprintf(out, "-- event: %s", ptrec_pt_flow_event_text(b, to, sizeof(to)));
		if (b->from)
			fprintf(out, " at %s", loc(r, b->from, 0, from, sizeof(from)));
		break;
	case PTREC_BR_EDGE:
		fprintf(out, "%-9s %s", kind, loc(r, b->from, ptrec_branch_from_is_ret(t, b), from,
		                                  sizeof(from)));
		break;
	default:
		fprintf(out, "%-9s %s -> %s",
		        b->kind == PTREC_BR_JCC ? (b->flags & PTREC_BRF_TAKEN ? "jcc-taken"
		                                                             : "jcc-not")
		                                : kind,
		        loc(r, b->from, ptrec_branch_from_is_ret(t, b), from, sizeof(from)),
		        loc(r, b->to, ptrec_branch_to_is_ret(t, b), to, sizeof(to)));
		break;
	}
	if (b->flags & PTREC_BRF_HAS_TIME) {
		int exact;
		uint64_t now = ptrec_tsc_to_ns(&t->rec->hdr, t->last_time, &exact);
		uint64_t then = ptrec_tsc_to_ns(&t->rec->hdr, b->timestamp, &exact);
		fprintf(out, "  [t-%" PRIu64 "%s]", now >= then ? now - then : 0, exact ? "ns" : " tsc");
	}
	fputc('\n', out);
}

static void print_stack(struct ptrec_report *r, const struct ptrec_report_thread *t,
                        int with_pc, FILE *out)
{
	char buf[1400];
	size_t n = 0;

	fprintf(out, "call stack from branch history (innermost first):\n");
	if (!t->nbranches) {
		fprintf(out, "  (none: %s)\n", t->status ? t->status : "no history");
		return;
	}
	if (with_pc && r->have_regs)
		fprintf(out, "  #%-3zu %s\n", n++, loc(r, r->fault_pc, 0, buf, sizeof(buf)));
	for (size_t i = 0; i < t->nstack; i++) {
		const struct ptrec_frame *f = &t->stack[i];
		size_t same = 1;
		/* Recursion: identical frames in a row print once, with their count. */
		while (i + same < t->nstack && t->stack[i + same].site == f->site &&
		       t->stack[i + same].func == f->func)
			same++;
		if (same > 2) {
			fprintf(out, "  #%zu-#%zu %s  calls itself: %zu identical frames (recursion)\n",
			        n, n + same - 1, loc(r, f->site, f->site_is_return_address, buf,
			                             sizeof(buf)), same);
			n += same;
			i += same - 1;
			continue;
		}
		fprintf(out, "  #%-3zu %s", n++, loc(r, f->site, f->site_is_return_address, buf,
		                                    sizeof(buf)));
		if (f->func) {
			struct ptrec_symbol s;
			ptrec_symbolize(&r->sym, f->func, 0, &s);
			if (s.name)
				fprintf(out, "  calls %s", s.name);
		}
		if (f->resumed)
			fprintf(out, "  (caller learnt from a return; its own call is older than the "
			             "history)");
		fputc('\n', out);
	}
	if (!t->nstack)
		fprintf(out, "  (no call is open in the recorded history)\n");
	if (t->stack_info.dropped)
		fprintf(out, "  ... %zu outer frames not shown\n", t->stack_info.dropped);
	if (t->stack_info.skipped)
		fprintf(out, "  note: %zu frame(s) a jump left (longjmp, a caught exception) are not on "
		             "the unwound stack: not shown\n", t->stack_info.skipped);
	if (t->stack_info.gaps)
		fprintf(out, "  note: %zu gap(s)/overflow(s) in the history: frames may be missing\n",
		        t->stack_info.gaps);
	else if (!t->stack_info.unmatched_returns && (t->rec->hdr.flags & PTREC_THREAD_WRAPPED))
		fprintf(out, "  note: the ring wrapped; callers older than its history are not "
		             "shown\n");
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Instrumented rings: the functions whose calls take the most of the history (candidates for
 * PTREC_NO_TRACE), at most 5, with their share of the calls. */
static void print_busiest(struct ptrec_report *r, const struct ptrec_report_thread *t, FILE *out)
{
	uint64_t *to = malloc((t->nbranches ? t->nbranches : 1) * sizeof(*to));
	uint64_t best[5] = {0}, count[5] = {0};
	size_t n = 0;

	if (!to)
		return;
	for (size_t i = 0; i < t->nbranches; i++)
		if (t->branches[i].kind == PTREC_BR_CALL)
			to[n++] = t->branches[i].to;
	qsort(to, n, sizeof(*to), cmp_u64);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && to[j] == to[i])
			j++;
		/* Insert (to[i], j - i) into the top 5, largest first. */
		for (size_t k = 0; k < 5; k++) {
			if (j - i > count[k]) {
				memmove(best + k + 1, best + k, (4 - k) * sizeof(*best));
				memmove(count + k + 1, count + k, (4 - k) * sizeof(*count));
				best[k] = to[i];
				count[k] = j - i;
				break;
			}
		}
		i = j;
	}
	if (n) {
		fprintf(out, "functions filling the ring fastest (calls in the history; PTREC_NO_TRACE "
		             "drops a hot leaf):\n");
		for (size_t k = 0; k < 5 && count[k]; k++) {
			struct ptrec_symbol sym;
			ptrec_symbolize(&r->sym, best[k], 0, &sym);
			fprintf(out, "  %6" PRIu64 " %5.1f%%  %s\n", count[k], 100.0 * count[k] / n,
			        sym.name ? sym.name : "?");
		}
	}
	free(to);
}

static void print_unwound(struct ptrec_report *r, const struct ptrec_report_thread *t, FILE *out)
{
	char buf[1400];
	size_t num = 0;

	fprintf(out, "stack (unwound from %s and the dumped stack, innermost first):\n",
	        t->task ? "the sp and pc the kernel showed" : "the registers");
	for (size_t k = 0; k < t->nunwound; k++) {
		const struct ptrec_unwind_frame *f = &t->unwound[k];
		const char *how = ptrec_unwind_how_name(f->how);
		struct ptrec_inline_frame in[16];
		size_t same = 1, n;
		while (k + same < t->nunwound && t->unwound[k + same].pc == f->pc)
			same++;
		if (k > 0 && same > 2) {
			fprintf(out, "  #%zu-#%zu %s  [%s]  (%zu identical frames: recursion)\n", num,
			        num + same - 1, loc(r, f->pc, f->return_address, buf, sizeof(buf)), how,
			        same);
			k += same - 1;
			num += same;
			continue;
		}
		if (f->signal_frame) {
			fprintf(out, "  #%-3zu 0x%" PRIx64 " <signal handler called>  [%s]\n", num++,
			        f->pc, how);
			continue;
		}
		/* Inlined calls at this pc: one line each, innermost first, like addr2line -i. */
		n = ptrec_symbolize_inline(&r->sym, f->pc, f->return_address, in, 16);
		for (size_t i = 0; i + 1 < n; i++) {
			fprintf(out, "  #%-3zu 0x%" PRIx64 " %s", num++, f->pc, in[i].name ? in[i].name : "?");
			if (in[i].file)
				fprintf(out, " (%s:%u)", in[i].file, in[i].line);
			fprintf(out, "  (inlined into %s", in[i + 1].name ? in[i + 1].name : "?");
			if (in[i + 1].file)
				fprintf(out, " at %s:%u", in[i + 1].file, in[i + 1].line);
			fprintf(out, ")  [%s]\n", how);
		}
		if (!f->pc) /* a call through a null pointer: pc 0, as gdb shows it */
			snprintf(buf, sizeof(buf), "0x0");
		else
			loc_at(r, f->pc, f->return_address, n ? &in[n - 1] : NULL, buf, sizeof(buf));
		fprintf(out, "  #%-3zu %s  [%s]\n", num++, buf, how);
	}
	fprintf(out, "  (stops: %s)\n", t->unwind_stop ? t->unwind_stop : "?");
}

/* What the kernel showed of a thread other than the event thread (its TASK record). */
static void print_task(const struct ptrec_report *r, const struct ptrec_report_thread *t,
                       FILE *out)
{
	const struct ptrec_dump_task *k = t->task;

	fprintf(out, "state:    %s", ptrec_report_task_state(k->state));
	switch (k->state) {
	case PTREC_TASK_SYSCALL: {
		const char *name = ptrec_report_syscall_name(r->dump->process.arch, k->nr);
		fprintf(out, ": %s (%" PRId64 "), args", name ? name : "syscall", k->nr);
		for (int i = 0; i < 6; i++)
			fprintf(out, " 0x%" PRIx64, k->args[i]);
		break;
	}
	case PTREC_TASK_RUNNING:
		fputs(": no registers are readable without ptrace, no stack", out);
		break;
	case PTREC_TASK_UNREADABLE:
		fprintf(out, ": %s", strerror(k->err));
		break;
	}
	fprintf(out, "  (/proc/%" PRIu32 "/task/%" PRIu32 "/syscall at the crash)\n",
	        r->dump->process.pid, k->tid);
	if (k->flags & PTREC_TASK_MOVED)
		fputs("  note: the thread ran while its stack was copied (the kernel showed another "
		      "sp or pc after): frames may be wrong\n", out);
	if (k->flags & PTREC_TASK_BUDGET)
		fprintf(out, "  note: %s of its stack kept: the dump's budget for the stacks of "
		        "other threads was used\n", k->stack_size ? "only part" : "none");
}

/* The header line of a span placed by time (no markers). */
static void print_span_by_time(const struct ptrec_report_thread *t,
                               const struct ptrec_dump_watch *w, FILE *out)
{
	const char *unit = t->span_res_ns ? "ns" : "TSC ticks";

	fprintf(out, "span:     placed by time (no markers in the trace: intel_pt without PTWRITE): "
	        "the branches timed in TSC %" PRIu64 "..%" PRIu64, w->begin_tsc, w->end_tsc);
	if (t->span_missed) {
		fprintf(out, "; none is: the history covers TSC %" PRIu64 "..%" PRIu64 ", %s\n",
		        t->trace_first_tsc, t->trace_last_tsc,
		        t->trace_last_tsc < w->begin_tsc ? "all before the span began"
		        : t->trace_first_tsc > w->end_tsc ? "all after it ended (the span was "
		                                            "overwritten)"
		        : "before and after it (no traced code ran during the span)");
		return;
	}
	fputs("; timing resolution at the begin ", out);
	if (t->span_res_begin)
		fprintf(out, "%" PRIu64 " %s", t->span_res_begin, unit);
	else
		fputs("unknown (no branch timed before it)", out);
	fputs(", at the end ", out);
	if (t->span_res_end)
		fprintf(out, "%" PRIu64 " %s\n", t->span_res_end, unit);
	else
		fputs("unknown (no branch timed after it)\n", out);
}

static void print_branches(struct ptrec_report *r, const struct ptrec_report_thread *t,
                           unsigned max, FILE *out)
{
	size_t n = t->nbranches < max ? t->nbranches : max;

	if (t->span) {
		/* A watch's span: all of it, whatever --branches says. */
		if (t->span_by_time)
			fprintf(out, "the watched span, placed by time: %zu branches timed from its begin "
			        "to its end", t->nbranches);
		else
			fprintf(out, "the watched span: %zu branches from its begin to its end marker",
			        t->nbranches);
		fprintf(out, " (newest first; %zu older and %zu newer left out):\n", t->span_before,
		        t->span_after);
		if (t->span_missed)
			fputs("  (none: no branch of this history is timed inside the span)\n", out);
		for (size_t i = 0; i < t->nbranches; i++)
			print_branch(r, t, &t->branches[t->nbranches - 1 - i], i, out);
		if (t->span_open)
			fputs(t->span_by_time ? "  -- no branch kept is timed before the begin: the span "
			                        "is older than the history kept\n"
			                      : "  -- the begin marker was overwritten: the span is older "
			                        "than the ring\n", out);
		return;
	}
	fprintf(out, "last %zu of %" PRIu64 " branches (newest first):\n", n, t->total_branches);
	if (t->trimmed)
		fprintf(out, "  (%zu branches after the fault, in the signal handler, left out)\n",
		        t->trimmed);
	if (!t->nbranches) {
		fprintf(out, "  (none: %s)\n", t->status ? t->status : "no history");
		return;
	}
	for (size_t i = 0; i < n; i++)
		print_branch(r, t, &t->branches[t->nbranches - 1 - i], i, out);
	if (n < t->nbranches)
		fprintf(out, "  ... %zu older branches not shown (--branches N)\n", t->nbranches - n);
	else if (t->total_branches > t->nbranches + t->trimmed)
		fprintf(out, "  -- oldest branch kept by the decoder (%" PRIu64 " older not kept)\n",
		        t->total_branches - t->nbranches - t->trimmed);
	else if (t->rec->hdr.flags & PTREC_THREAD_WRAPPED)
		fprintf(out, "  -- oldest branch the ring still held (older ones were overwritten)\n");
	else
		fprintf(out, "  -- start of the recording\n");
}

static void print_ring(const struct ptrec_report_thread *t, FILE *out)
{
	const struct ptrec_dump_thread *h = &t->rec->hdr;
	char name[4 * sizeof(h->name) + 1];

	fprintf(out, "  %-8" PRIu32 " %-16s %-13s %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %-8s",
	        h->tid, esc(h->name, name, sizeof(name)), ptrec_backend_name(h->backend), h->ring_size,
	        h->data_size, t->total_branches,
	        h->flags & PTREC_THREAD_UNTRACED ? "untraced"
	        : h->flags & PTREC_THREAD_WRAPPED ? "wrapped" : "partial");
	if (t->has_time) {
		int exact;
		uint64_t a = ptrec_tsc_to_ns(h, t->first_time, &exact);
		uint64_t b = ptrec_tsc_to_ns(h, t->last_time, &exact);
		fprintf(out, " %" PRIu64 "%s", b >= a ? b - a : 0, exact ? "ns" : " tsc");
	} else {
		fprintf(out, " %s", t->status ? t->status : "no timestamps");
	}
	fputc('\n', out);
}

int ptrec_report_text(struct ptrec_report *r, FILE *out)
{
	const struct ptrec_dump *d = r->dump;
	const struct ptrec_dump_process *p = &d->process;
	const char *code = ptrec_report_signal_code_name(p->signo, p->si_code);
	char tbuf[64] = "?";
	struct tm tm;
	time_t sec = (time_t)p->time_sec;

	if (gmtime_r(&sec, &tm))
		strftime(tbuf, sizeof(tbuf), "%Y-%m-%d %H:%M:%S", &tm);

	fprintf(out, "ptrec report (format 1)%s%s\n", r->opt.dump_path ? " of " : "",
	        r->opt.dump_path ? r->opt.dump_path : "");
	fprintf(out, "\n== Process\n");
	char exe[4 * sizeof(p->exe) + 1], comm[4 * sizeof(p->comm) + 1];
	fprintf(out, "program:  %s (comm %s)\n", esc(p->exe[0] ? p->exe : "?", exe, sizeof(exe)),
	        esc(p->comm, comm, sizeof(comm)));
	fprintf(out, "pid:      %" PRIu32 "  thread: %" PRIu32 "\n", p->pid, p->tid);
	fprintf(out, "event:    %s", ptrec_report_event_name(p->event));
	if (p->signo)
		fprintf(out, ", signal %s (%d), code %s (%d)", ptrec_report_signal_name(p->signo), p->signo,
		        code ? code : "?", p->si_code);
	fputc('\n', out);
	uint32_t by_pid = 0, by_uid = 0;
	switch (ptrec_report_origin(p, &by_pid, &by_uid)) {
	case PTREC_ORIGIN_SENT:
		fprintf(out, "sent by:  pid %" PRIu32 ", uid %" PRIu32 " (%s)\n", by_pid, by_uid,
		        by_pid == p->pid ? "this process" : "another process");
		break;
	case PTREC_ORIGIN_NO_ADDR:
		fprintf(out, "fault address: none (SI_KERNEL: a general-protection fault, such as an "
		             "access at a non-canonical address; the CPU reports no address)\n");
		break;
	case PTREC_ORIGIN_FAULT:
		fprintf(out, "fault address: 0x%" PRIx64 "\n", p->fault_addr);
		break;
	case PTREC_ORIGIN_NONE:
		break;
	}
	/* Before anything the process chose (reason): the crash path reads this line back. */
	char sig[4 * sizeof(r->signature) + 1];
	fprintf(out, "signature: %s\n", esc(r->signature, sig, sizeof(sig)));
	if (p->event == PTREC_EVENT_SNAPSHOT || p->event == PTREC_EVENT_WATCH) {
		const struct ptrec_dump_thread_rec *who = ptrec_dump_find_thread(d, p->tid);
		fprintf(out, "asked by: thread %" PRIu32 " (%s)%s\n", p->tid,
		        who && who->hdr.name[0] ? who->hdr.name : "-",
		        p->event == PTREC_EVENT_WATCH ? ", its watch went over budget"
		                                      : ", calling ptrec_snapshot");
	}
	if (p->reason[0])
		fprintf(out, "reason:   %s\n", p->reason);
	if (d->has_watch) {
		fprintf(out, "watch:    \"%s\": took %" PRIu64 " us, budget %" PRIu64 " us (%s)\n",
		        d->watch.name, d->watch.duration_ns / 1000, d->watch.budget_ns / 1000,
		        d->watch.flags & PTREC_WATCH_ALL_THREADS ? "all threads" : "its thread only");
		if (r->nthreads && r->threads[0].span_by_time)
			print_span_by_time(&r->threads[0], &d->watch, out);
	}
	fprintf(out, "time:     %s.%09" PRId64 " UTC\n", tbuf, p->time_nsec);
	fprintf(out, "backend:  %s\n", ptrec_backend_name(p->backend));
	fprintf(out, "cpu:      family %" PRIu32 " model %" PRIu32 " stepping %" PRIu32 "\n",
	        p->cpu_family, p->cpu_model, p->cpu_stepping);
	fprintf(out, "dump:     %s, %zu thread(s)\n",
	        d->complete ? "complete" : "CUT SHORT (no END record; see warnings)", d->nthreads);

	fprintf(out, "\n== Rings\n");
	fprintf(out, "  %-8s %-16s %-13s %10s %10s %10s %-8s %s\n", "tid", "name", "backend",
	        "ring", "bytes", "branches", "state", "time span");
	for (size_t i = 0; i < r->nthreads; i++)
		print_ring(&r->threads[i], out);

	if (d->status_text) {
		/* The recorder's own account: configuration and why refused backends were refused. */
		fprintf(out, "\n== Recorder\n");
		for (const char *l = d->status_text; *l;) {
			size_t n = strcspn(l, "\n");
			if (n)
				fprintf(out, "  %.*s\n", (int)n, l);
			l += n + (l[n] == '\n');
		}
	}

	fprintf(out, "\n== Faulting instruction\n");
	if (r->have_regs) {
		struct ptrec_symbol s;
		ptrec_symbolize(&r->sym, r->fault_pc, 0, &s);
		fprintf(out, "address:  0x%" PRIx64 "%s\n", r->fault_pc,
		        p->event == PTREC_EVENT_CRASH ? ""
		                                      : "  (no fault: where the registers were taken)");
		if (s.name)
			fprintf(out, "symbol:   %s+0x%" PRIx64 "\n", s.name, s.offset);
		if (s.module)
			fprintf(out, "module:   %s+0x%" PRIx64 "\n", s.module->path, s.module_offset);
		if (s.file)
			fprintf(out, "source:   %s:%u\n", s.file, s.line);
		if (r->nfault_bytes) {
			fprintf(out, "bytes:   ");
			for (size_t i = 0; i < r->nfault_bytes; i++)
				fprintf(out, " %02x", r->fault_bytes[i]);
			fprintf(out, "  (from %s)\n", r->fault_bytes_source);
			char words[16 * 9 + 1];
			if (ptrec_report_fault_words(r, words, sizeof(words))) {
				const char *c = ptrec_report_a64_class(
					(uint32_t)strtoul(words, NULL, 16));
				fprintf(out, "words:    %s  (aarch64, little-endian)\n", words);
				if (c)
					fprintf(out, "insn:     %.8s: %s\n", words, c);
			}
		} else {
			fprintf(out, "bytes:    unavailable (not in the dump, no readable file)\n");
		}
	} else {
		fprintf(out, "unknown (no registers in the dump)\n");
	}

	for (size_t i = 0; i < r->nthreads; i++) {
		const struct ptrec_report_thread *t = &r->threads[i];
		const struct ptrec_dump_thread *h = &t->rec->hdr;
		char name[4 * sizeof(h->name) + 1];
		fprintf(out, "\n== Thread %" PRIu32 " (%s)%s%s%s%s\n", h->tid,
		        esc(h->name, name, sizeof(name)), t->crashed ? " [" : "",
		        t->crashed ? ptrec_report_role(r) : "", t->crashed ? "]" : "",
		        h->flags & PTREC_THREAD_EXITED ? " [ended while the crash was handled]" : "");
		if (t->task)
			print_task(r, t, out);
		print_stack(r, t, t->crashed, out);
		if (t->unwound)
			print_unwound(r, t, out);
		if (t->soft)
			print_busiest(r, t, out);
		print_branches(r, t, t->crashed ? r->opt.branches : r->opt.other_branches, out);
	}

	fprintf(out, "\n== Warnings\n");
	for (size_t i = 0; i < r->warnings.count; i++)
		fprintf(out, "- %s\n", r->warnings.items[i]);
	if (r->warnings.dropped)
		fprintf(out, "- (%zu more warnings not shown)\n", r->warnings.dropped);
	if (!r->warnings.count && !r->warnings.dropped)
		fprintf(out, "(none)\n");
	return ferror(out) ? -PTREC_EIO : 0;
}
