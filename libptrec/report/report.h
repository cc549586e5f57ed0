/* report.h — the report of one dump: the decoded and symbolized model that the text, JSON and
 * trace renderers print.  Built by ptrec_report_build from a parsed dump.  Not
 * async-signal-safe (runs in `ptrec report`, also when exec'd at crash time). */
#ifndef PTREC_REPORT_H
#define PTREC_REPORT_H

#include <stdio.h>

#include "core/branch.h"
#include "decode/bts_decode.h"
#include "decode/soft_decode.h"
#include "report/callstack.h"
#include "report/signature.h"
#include "report/unwind.h"
#include "dump/dump_read.h"
#include "symbols/symbolize.h"
#include "core/warnings.h"

struct ptrec_pt_img;

/* Output formats. */
enum ptrec_report_format {
	PTREC_REPORT_TEXT = 0,  /* the default, doc/report-format.md */
	PTREC_REPORT_JSON,      /* one JSON object, schema in doc/report-format.md */
	PTREC_REPORT_TRACE,     /* Chrome trace-event / Perfetto JSON timeline */
};

/* What to put in the report. */
struct ptrec_report_options {
	unsigned branches;          /* last branches shown for the crashing thread (default 64) */
	unsigned other_branches;    /* last branches shown for other threads (default 16) */
	int crashed_only;           /* 1: only the crashing thread (--threads crashed) */
	const char *const *debug_dirs; /* extra debug directories, NULL-terminated, or NULL */
	const char *const *binaries; /* replacement files for modules whose file is gone or has
	                               another build-id (--binary), NULL-terminated, or NULL */
	const char *debuginfod_cache; /* a debuginfod client's cache searched for debug files and
	                               executables by build-id, or NULL (symbols/symbolize.h) */
	const char *dump_path;      /* shown in the header */
	unsigned pt_budget_ms;      /* intel_pt: time a thread's decoding may take stepping back
	                               for older calls (default 100; 0: no limit) */
};

/* One thread of the report. */
struct ptrec_report_thread {
	const struct ptrec_dump_thread_rec *rec; /* its THREAD record */
	int crashed;                /* 1 for the crashing thread */
	struct ptrec_branch *branches; /* decoded history, oldest first (owned) */
	size_t nbranches;
	uint64_t total_branches;    /* branches the ring held (>= nbranches if capped) */
	int has_time;               /* 1 if any branch has a timestamp */
	uint64_t first_time, last_time; /* TSC of the oldest/newest timed branch */
	const char *status;         /* NULL, or why there is no history ("decoder not available
	                               in this build", "untraced", ...) */
	int soft;                   /* instrumented records (return-address conventions) */
	struct ptrec_frame *stack;  /* rebuilt call stack, innermost first (owned) */
	size_t nstack;
	struct ptrec_callstack_info stack_info;
	struct ptrec_bts_stats bts; /* decoder statistics (BTS-format rings) */
	size_t trimmed;             /* events after the fault (signal handler) left out */
	struct ptrec_unwind_frame *unwound; /* stack unwound from the thread's registers and
	                               dumped stack, innermost first (owned), or NULL */
	size_t nunwound;
	const char *unwind_stop;    /* why the unwinding ended */
	const struct ptrec_dump_task *task; /* what the kernel showed of the thread (TASK record:
	                               other threads of a crash), or NULL */
	char unwind_stop_buf[160];  /* unwind_stop when composed (the register that was unknown) */
	int span;                   /* 1: branches is cut to a watch's span (event thread) */
	size_t span_before;         /* events older than the begin marker left out */
	size_t span_after;          /* events newer than the end marker left out */
	int span_open;              /* 1: the begin marker was not in the ring (overwritten), or
	                               no branch kept is timed before the begin: the span
	                               starts with the oldest branch kept */
	int span_by_time;           /* 1: no markers; the span is the branches timed between
	                               the watch's begin_tsc and end_tsc */
	int span_missed;            /* 1 (span_by_time): no branch is timed inside the span;
	                               branches is empty */
	uint64_t span_res_begin;    /* span_by_time: from the last branch time before the begin to
	                               the first inside the span (0: none before): how exactly
	                               the begin is placed */
	uint64_t span_res_end;      /* from the last branch time inside to the first after the end
	                               (0: none after) */
	int span_res_ns;            /* 1: span_res_* are nanoseconds, 0: TSC ticks (the thread's
	                               TSC conversion is unknown) */
	uint64_t trace_first_tsc;   /* span_by_time: the oldest and newest branch times of the */
	uint64_t trace_last_tsc;    /* history before it was cut */
};

/* The whole report. */
struct ptrec_report {
	const struct ptrec_dump *dump;       /* the parsed dump */
	struct ptrec_report_options opt;     /* options used */
	struct ptrec_symbolizer sym;         /* the symbolizer */
	struct ptrec_warnings warnings;      /* everything non-fatal, in order found */
	struct ptrec_report_thread *threads; /* crashing thread first, then dump order */
	size_t nthreads;
	int have_regs;                       /* the dump holds the crashing thread's registers */
	uint64_t fault_pc;                   /* RIP of the crashing thread (REGS; 0 without them,
	                                        or after a call through a null pointer) */
	uint8_t fault_bytes[16];             /* instruction bytes at fault_pc */
	size_t nfault_bytes;
	const char *fault_bytes_source;      /* "dump memory", "file PATH", or NULL */
	char fault_bytes_file[4096];
	struct ptrec_dump_thread_rec orphan; /* stands for the crashing thread when the dump has
	                                        its registers but no THREAD record (the thread
	                                        never attached) */
	struct ptrec_pt_img *pt_image;           /* code image for intel_pt rings, built on demand */
	char signature[PTREC_SIGNATURE_MAX];     /* the crash signature (report/signature.h) */
};

/* Fills opt with defaults. */
void ptrec_report_options_init(struct ptrec_report_options *opt);

/* Decodes, rebuilds stacks and prepares symbolization for dump (which must outlive r).
 * Returns 0 or -PTREC_ENOMEM. */
int ptrec_report_build(struct ptrec_report *r, const struct ptrec_dump *dump,
                       const struct ptrec_report_options *opt);

/* Frees r. */
void ptrec_report_free(struct ptrec_report *r);

/* Decodes the intel_pt ring of t into t->branches (report_pt.c).  Returns 0 (decoding
 * problems become warnings and t->status) or -PTREC_ENOMEM. */
int ptrec_report_decode_pt(struct ptrec_report *r, struct ptrec_report_thread *t);

/* Cuts the event thread t's history to the watch w's span (report_span.c): the branches from
 * its begin to its end marker; without an end marker but with w's begin_tsc/end_tsc, the
 * branches timed between them (span_by_time); otherwise leaves it uncut with a warning. */
void ptrec_report_cut_span(struct ptrec_report *r, struct ptrec_report_thread *t,
                           const struct ptrec_dump_watch *w);

/* Renderers.  Each writes the whole report to out and returns 0, or -PTREC_EIO if writing
 * failed. */
int ptrec_report_text(struct ptrec_report *r, FILE *out);
int ptrec_report_json(struct ptrec_report *r, FILE *out);
int ptrec_report_trace(struct ptrec_report *r, FILE *out);

/* Helpers shared by the renderers (report_util.c). */
const char *ptrec_report_signal_name(int signo);                 /* "SIGSEGV", or "SIG?" */
const char *ptrec_report_signal_code_name(int signo, int code);  /* "SEGV_MAPERR", or NULL */
const char *ptrec_report_event_name(unsigned event);             /* "crash", "assert", "snapshot",
                                                                    "watch" */
/* Where the dump's signal came from (ptrec_report_origin). */
enum ptrec_report_origin {
	PTREC_ORIGIN_NONE,     /* no signal, or one that carries neither an address nor a sender */
	PTREC_ORIGIN_FAULT,    /* a fault with its address: fault_addr */
	PTREC_ORIGIN_NO_ADDR,  /* a SIGSEGV of a general-protection fault (SI_KERNEL): no address */
	PTREC_ORIGIN_SENT,     /* sent by kill, sigqueue or tgkill (SI_USER, SI_QUEUE, SI_TKILL):
	                          *pid and *uid are the sender's */
};
enum ptrec_report_origin ptrec_report_origin(const struct ptrec_dump_process *p, uint32_t *pid,
                                             uint32_t *uid);
/* What the event thread did, for its label: "crashed" (crash, assertion), "took the
 * snapshot", "watch over budget". */
const char *ptrec_report_role(const struct ptrec_report *r);
/* The name of system call nr of the machine arch (PROCESS.arch: x86-64 or aarch64), e.g.
 * "epoll_wait", or NULL for one the tables lack. */
const char *ptrec_report_syscall_name(uint32_t arch, int64_t nr);
/* aarch64 dumps: the faulting instruction's bytes as 4-byte little-endian words, "b9400000
 * f9400421 ..." in buf (at most cap bytes); returns how many words (0 for an x86-64 dump). */
size_t ptrec_report_fault_words(const struct ptrec_report *r, char *buf, size_t cap);
/* The class of aarch64 instruction w: "a load or store", "bl", "brk", "udf", ...; NULL for
 * another. */
const char *ptrec_report_a64_class(uint32_t w);
/* What a TASK state says, for the reports: "blocked in a system call", "running", ... */
const char *ptrec_report_task_state(uint32_t state);
/* 1 if a marker value is a watch's begin/end marker (PTREC_MARK_WATCH_TAG). */
int ptrec_mark_is_watch(uint64_t value);
/* 1 if the branch's from / to address is a return address (instrumented conventions). */
int ptrec_branch_from_is_ret(const struct ptrec_report_thread *t, const struct ptrec_branch *b);
int ptrec_branch_to_is_ret(const struct ptrec_report_thread *t, const struct ptrec_branch *b);
/* Nanoseconds of a TSC value with the thread's perf time conversion, or the TSC itself when
 * the conversion is unknown. *exact is set to 1 when converted. */
uint64_t ptrec_tsc_to_ns(const struct ptrec_dump_thread *t, uint64_t tsc, int *exact);

#endif
