/* test_pt_span.c — a latency watch on intel_pt without PTWRITE: the ring holds no markers, the
 * watch's dump carries the TSC read at its begin and end, and the report keeps exactly the
 * branches whose times lie between them.  The trace is made with ptgen's own packet writers
 * (tests/ptgen/pt_encode.c) as the recorder asks the kernel for it: TSC, MTC every 2^3
 * crystal ticks, returns as TIP (noretcomp), no PTW, no CYC.  The program calls six functions
 * one after the other through a register, so every branch is decided by its own TIP packet:
 *
 *   0x10000: ff d0  call *%rax   (f1 at 0x10100)   ... 0x1000a: ff d0  call *%rax (f6 0x10150)
 *   0x1000c: 0f 05  syscall      (leaves user mode: TIP.PGD)
 *   0x10100 + 0x10*(i-1): c3  ret  (fi)
 *
 * Clocks: TSC/crystal ratio 100/1 (CPUID 15H), the perf conversion 1 ns per TSC tick.
 * Packets: PSB, TSC(T0), TMA(CTC 0x1000, FastCounter 0), PSBEND, MODE.Exec, TIP.PGE(0x10000),
 * then for i = 1..6: MTC(CTC[10:3] = i), TIP(fi), TIP(back to the caller); TIP.PGD.
 * By the SDM, MTC i marks CTC 0x1000 + 8i, i.e. TSC T0 + 800 i, so the call and return of fi
 * are timed T0 + 800 i and the enable T0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "dump_writer.h"
#include "json_check.h"
#include "pt_encode.h"
#include "ptrec.h"
#include "report/report.h"

#define T0 0x100000ull
#define FN(i) (0x10100ull + 0x10u * ((i) - 1))   /* function i, 1..6 */
#define SITE(i) (0x10000ull + 2u * ((i) - 1))    /* its call site */

static uint8_t code[0x160];
static struct pe_buf trace;

static void make_trace(void)
{
	for (int i = 1; i <= 6; i++) {
		code[SITE(i) - 0x10000] = 0xff;
		code[SITE(i) - 0x10000 + 1] = 0xd0;
		code[FN(i) - 0x10000] = 0xc3;
	}
	code[0x0c] = 0x0f;
	code[0x0d] = 0x05;
	pe_psb(&trace);
	pe_tsc(&trace, T0);
	pe_tma(&trace, 0x1000, 0);
	pe_psbend(&trace);
	pe_mode_exec(&trace, 1, 0, 1);
	pe_ip(&trace, PE_TIP_PGE, PE_IP_FULL, 0x10000);
	for (int i = 1; i <= 6; i++) {
		pe_mtc(&trace, (uint8_t)i);
		pe_ip(&trace, PE_TIP, PE_IP_FULL, FN(i));
		pe_ip(&trace, PE_TIP, PE_IP_FULL, SITE(i) + 2);
	}
	pe_ip(&trace, PE_TIP_PGD, PE_IP_SUPPRESSED, 0);
	CHECK(!trace.failed);
}

/* A watch dump of thread 51 over the trace, the WATCH record watch_size bytes long. */
static struct tbuf make_dump(uint64_t begin_tsc, uint64_t end_tsc, size_t watch_size)
{
	static const struct tw_clock clk = {.mtc_period = 3, .tsc_ratio_n = 100, .tsc_ratio_d = 1,
	                                    .time_mult = 1, .time_shift = 0};
	struct tbuf b = {0};
	tw_header_v(&b, PTREC_DUMP_VERSION);
	tw_process(&b, 50, 51, PTREC_EVENT_WATCH, 0, 0, 0, PTREC_BACKEND_INTEL_PT, 1, "srv", "/srv",
	           "watch \"req\" took 9 us, over its budget of 1 us");
	tw_regs(&b, 51, 0x1000c, 0x7000, 0);
	tw_watch(&b, "req", 1000, 9000, PTREC_MARK_WATCH_TAG << 36 | 2,
	         PTREC_MARK_WATCH_TAG << 36 | 3, 0, begin_tsc, end_tsc, watch_size);
	tw_memory(&b, 0x10000, PTREC_MEM_CODE, 0, code, sizeof(code));
	tw_thread_clock(&b, 51, PTREC_BACKEND_INTEL_PT, PTREC_THREAD_CRASHED, "srv", 4096,
	                trace.len, trace.data, trace.len, &clk);
	tw_end(&b);
	return b;
}

/* The report of a dump, rendered by render into a string (malloc'd). */
static char *render(struct ptrec_report *r, int (*fn)(struct ptrec_report *, FILE *))
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	CHECK(f && fn(r, f) == 0);
	fclose(f);
	return text;
}

/* The event thread's history as "kind from>to" items, oldest first. */
static void history(const struct ptrec_report_thread *t, char *out, size_t cap)
{
	out[0] = '\0';
	for (size_t i = 0; i < t->nbranches; i++) {
		const struct ptrec_branch *b = &t->branches[i];
		char one[80];
		snprintf(one, sizeof(one), "%s%s %llx>%llx", i ? ", " : "",
		         ptrec_branch_kind_name(b->kind), (unsigned long long)b->from,
		         (unsigned long long)b->to);
		strncat(out, one, cap - strlen(out) - 1);
	}
}

struct built {
	struct tbuf file;
	struct ptrec_dump dump;
	struct ptrec_report report;
	char got[2048];
};

static void build(struct built *x, uint64_t begin_tsc, uint64_t end_tsc, size_t watch_size)
{
	struct ptrec_report_options opt;
	struct ptrec_dump_error err;

	x->file = make_dump(begin_tsc, end_tsc, watch_size);
	CHECK(ptrec_dump_parse(x->file.p, x->file.n, &x->dump, &err) == 0);
	ptrec_report_options_init(&opt);
	CHECK(ptrec_report_build(&x->report, &x->dump, &opt) == 0);
	CHECK(x->report.nthreads == 1 && x->report.threads[0].crashed);
	history(&x->report.threads[0], x->got, sizeof(x->got));
}

static void done(struct built *x)
{
	ptrec_report_free(&x->report);
	ptrec_dump_free(&x->dump);
	free(x->file.p);
}

/* The span from just before MTC 3 to just after MTC 5: exactly f3, f4 and f5. */
static void test_middle(void)
{
	struct built x;
	char *o;

	build(&x, T0 + 2300, T0 + 4100, sizeof(struct ptrec_dump_watch));
	const struct ptrec_report_thread *t = &x.report.threads[0];
	CHECK_EQ_U64(x.dump.watch.begin_tsc, T0 + 2300);
	CHECK_EQ_U64(x.dump.watch.end_tsc, T0 + 4100);
	CHECK_STR(x.got, "ind-call 10004>10120, ret 10120>10006, ind-call 10006>10130, ret 10130>10008, "
	                 "ind-call 10008>10140, ret 10140>1000a");
	CHECK(t->span && t->span_by_time && !t->span_missed && !t->span_open);
	/* Left out: enable, f1 and f2 before; f6 and the disable at the syscall after. */
	CHECK_EQ_U64(t->span_before, 5);
	CHECK_EQ_U64(t->span_after, 3);
	/* f2 (T0+1600) was the last time before the begin, f3 (T0+2400) the first inside; f5
	 * (T0+4000) the last inside, f6 (T0+4800) the first after: one MTC period each. */
	CHECK(t->span_res_ns);
	CHECK_EQ_U64(t->span_res_begin, 800);
	CHECK_EQ_U64(t->span_res_end, 800);

	o = render(&x.report, ptrec_report_text);
	CHECK(strstr(o, "span:     placed by time (no markers in the trace: intel_pt without "
	                "PTWRITE): the branches timed in TSC 1050876..1052676; timing resolution "
	                "at the begin 800 ns, at the end 800 ns\n") != NULL);
	CHECK(strstr(o, "the watched span, placed by time: 6 branches timed from its begin to its "
	                "end (newest first; 5 older and 3 newer left out):") != NULL);
	CHECK(strstr(o, "0x10140 -> 0x1000a") && strstr(o, "0x10004 -> 0x10120"));
	CHECK(!strstr(o, "0x10110") && !strstr(o, "0x10150")); /* f2, f6 */
	free(o);

	o = render(&x.report, ptrec_report_json);
	CHECK(json_valid(o));
	CHECK(strstr(o, "\"begin_tsc\":1050876,\"end_tsc\":1052676") != NULL);
	CHECK(strstr(o, "\"span\":{\"older_left_out\":5,\"newer_left_out\":3,"
	                "\"begin_overwritten\":false,\"placed_by\":\"time\",\"in_history\":true,"
	                "\"history_first_tsc\":1048576,\"history_last_tsc\":1053376,"
	                "\"resolution\":{\"unit\":\"ns\",\"begin\":800,\"end\":800}}") != NULL);
	free(o);

	/* The timeline: a slice for the span from its begin (t = 0) to its end (1.8 us), the
	 * calls of f3 at 0.1 us, f5 at 1.7 us inside it. */
	o = render(&x.report, ptrec_report_trace);
	CHECK(json_valid(o));
	CHECK(strstr(o, "{\"ph\":\"B\",\"pid\":50,\"tid\":51,\"ts\":0.000,\"name\":\"watch req "
	                "(placed by time)\"}") != NULL);
	CHECK(strstr(o, "{\"ph\":\"B\",\"pid\":50,\"tid\":51,\"ts\":0.100,\"name\":\"0x10120\"}"));
	CHECK(strstr(o, "{\"ph\":\"B\",\"pid\":50,\"tid\":51,\"ts\":1.700,\"name\":\"0x10140\"}"));
	CHECK(strstr(o, "{\"ph\":\"E\",\"pid\":50,\"tid\":51,\"ts\":1.800}") != NULL);
	free(o);
	done(&x);
}

/* A span the history does not reach says so and shows no branches. */
static void test_missed(void)
{
	static const struct {
		uint64_t lo, hi;
		const char *why;
	} cases[] = {
		{T0 + 9000, T0 + 20000, "all before the span began"},
		{T0 - 5000, T0 - 1000, "all after it ended (the span was overwritten)"},
		{T0 + 2500, T0 + 3100, "before and after it (no traced code ran during the span)"},
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct built x;
		char line[512], *o;

		build(&x, cases[c].lo, cases[c].hi, sizeof(struct ptrec_dump_watch));
		const struct ptrec_report_thread *t = &x.report.threads[0];
		CHECK(t->span && t->span_by_time && t->span_missed);
		CHECK_EQ_U64(t->nbranches, 0);
		CHECK_EQ_U64(t->span_before + t->span_after, 14); /* the whole history */
		o = render(&x.report, ptrec_report_text);
		snprintf(line, sizeof(line), "the branches timed in TSC %llu..%llu; none is: the "
		         "history covers TSC 1048576..1053376, %s\n", (unsigned long long)cases[c].lo,
		         (unsigned long long)cases[c].hi, cases[c].why);
		CHECK(strstr(o, line) != NULL);
		CHECK(strstr(o, "(none: no branch of this history is timed inside the span)"));
		CHECK(strstr(o, "partial  no branch is timed inside the watched span\n")); /* Rings */
		CHECK(!strstr(o, "0x10120") && !strstr(o, "0x10110"));
		free(o);
		o = render(&x.report, ptrec_report_json);
		CHECK(json_valid(o) && strstr(o, "\"in_history\":false") &&
		      strstr(o, "\"branches\":[]"));
		free(o);
		done(&x);
	}
}

/* A span that began before the oldest branch: it starts with the oldest, flagged open. */
static void test_open(void)
{
	struct built x;

	build(&x, T0 - 100, T0 + 1700, sizeof(struct ptrec_dump_watch));
	const struct ptrec_report_thread *t = &x.report.threads[0];
	CHECK_STR(x.got, "enable 0>10000, ind-call 10000>10100, ret 10100>10002, ind-call 10002>10110, "
	                 "ret 10110>10004");
	CHECK(t->span_by_time && t->span_open);
	CHECK_EQ_U64(t->span_res_begin, 0);
	CHECK_EQ_U64(t->span_res_end, 800);
	done(&x);
}

/* WATCH records from before begin_tsc/end_tsc (104 bytes) still read, the TSCs as 0: without
 * markers the history is left uncut.  A longer record (a later writer) is read too. */
static void test_record_sizes(void)
{
	struct built x;

	build(&x, T0 + 2300, T0 + 4100, PTREC_DUMP_WATCH_V1_SIZE);
	CHECK(x.dump.has_watch);
	CHECK_STR(x.dump.watch.name, "req");
	CHECK_EQ_U64(x.dump.watch.budget_ns, 1000);
	CHECK_EQ_U64(x.dump.watch.begin_tsc, 0);
	CHECK_EQ_U64(x.dump.watch.end_tsc, 0);
	CHECK(!x.report.threads[0].span);
	CHECK_EQ_U64(x.report.threads[0].nbranches, 14);
	done(&x);

	build(&x, T0 + 2300, T0 + 4100, sizeof(struct ptrec_dump_watch) + 16);
	CHECK_EQ_U64(x.dump.watch.end_tsc, T0 + 4100);
	CHECK_EQ_U64(x.report.threads[0].nbranches, 6);
	done(&x);

	struct tbuf f = make_dump(0, 0, PTREC_DUMP_WATCH_V1_SIZE - 8);
	struct ptrec_dump d;
	struct ptrec_dump_error err;
	CHECK(ptrec_dump_parse(f.p, f.n, &d, &err) == -PTREC_EFORMAT);
	CHECK(strstr(err.cause, "WATCH record has 96 payload bytes, expected at least 104"));
	free(f.p);
}

int main(void)
{
	make_trace();
	test_middle();
	test_missed();
	test_open();
	test_record_sizes();
	free(trace.data);
	return check_done();
}
