/* report.c — builds the report model: thread order, decoding of each ring, rebuilt stacks,
 * the stack unwound from the registers and the faulting instruction's bytes. */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/arch.h"
#include "decode/pt_image.h"
#include "ptrec.h"
#include "report/report.h"

#define UNWIND_MAX 1024  /* frames unwound per thread at most */

void ptrec_report_options_init(struct ptrec_report_options *opt)
{
	memset(opt, 0, sizeof(*opt));
	opt->branches = 64;
	opt->other_branches = 16;
	opt->pt_budget_ms = 100;
}

static size_t read_code(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return ptrec_symbolizer_read(ctx, addr, buf, len);
}

static int decode_thread(struct ptrec_report *r, struct ptrec_report_thread *t)
{
	const struct ptrec_dump_thread *h = &t->rec->hdr;
	size_t cap;

	if (t->rec == &r->orphan) {
		t->status = "never attached to the recorder: no ring (registers and stack only)";
		return 0;
	}
	if (h->flags & PTREC_THREAD_UNTRACED) {
		t->status = "untraced: the thread had no ring";
		return 0;
	}
	switch (h->backend) {
	case PTREC_BACKEND_INTEL_PT:
		return ptrec_report_decode_pt(r, t);
	case PTREC_BACKEND_INTEL_BTS:
	case PTREC_BACKEND_INSTRUMENTED:
		break;
	default:
		t->status = "no branch history (no backend)";
		return 0;
	}
	t->soft = h->backend == PTREC_BACKEND_INSTRUMENTED;
	/* Instrumented rings hold 16-byte soft records from dump version 2 on (entry-only
	 * records add inferred returns), 24-byte BTS-format records before. */
	int soft2 = t->soft && r->dump->header.version >= 2;
	cap = soft2 ? (size_t)(h->data_size / sizeof(struct ptrec_soft_record)) * 2 + 512
	            : (size_t)(h->data_size / sizeof(struct ptrec_bts_record));
	if (cap) {
		t->branches = malloc(cap * sizeof(*t->branches));
		if (!t->branches)
			return -PTREC_ENOMEM;
	}
	if (soft2) {
		struct ptrec_soft_ring_info info = {h->pt_config, h->pt_config1, h->stack_pointer};
		t->nbranches = ptrec_soft_decode(t->rec->data, (size_t)h->data_size, h->head, &info,
		                                 t->branches, cap, &t->bts);
	} else {
		t->nbranches = ptrec_bts_decode(t->rec->data, (size_t)h->data_size, h->head,
		                                read_code, &r->sym, t->branches, cap, &t->bts);
	}
	t->total_branches = t->bts.events;
	if (t->bts.unclassified)
		ptrec_warn(&r->warnings, "thread %" PRIu32 ": %" PRIu64 " BTS records could not be "
		           "classified (code bytes unavailable); shown as jmp", h->tid,
		           t->bts.unclassified);
	if (t->bts.bad_kind)
		ptrec_warn(&r->warnings, "thread %" PRIu32 ": %" PRIu64 " instrumented records had "
		           "an invalid branch kind; skipped", h->tid, t->bts.bad_kind);
	if (t->bts.tail_bytes)
		ptrec_warn(&r->warnings, "thread %" PRIu32 ": ring ends with %" PRIu64 " bytes of a "
		           "partial record; ignored", h->tid, t->bts.tail_bytes);
	if (!t->nbranches && !t->status)
		t->status = "the ring holds no branches";
	return 0;
}

/* A thread the kernel showed blocked (its TASK record): unwound from its sp and pc alone. */
static int unwind_task(struct ptrec_report *r, struct ptrec_report_thread *t)
{
	const struct ptrec_dump_task *k = ptrec_dump_find_task(r->dump, t->rec->hdr.tid);
	uint32_t arch = r->dump->process.arch;
	uint64_t g[PTREC_REG_MAX] = {0};
	unsigned sp = PTREC_REG_RSP, pc = PTREC_REG_RIP, missing;

	t->task = k;
	if (!k || (k->state != PTREC_TASK_SYSCALL && k->state != PTREC_TASK_BLOCKED) || !k->pc)
		return 0;
	t->unwound = malloc(UNWIND_MAX * sizeof(*t->unwound));
	if (!t->unwound)
		return -PTREC_ENOMEM;
	if (arch == PTREC_EM_AARCH64) {
		sp = PTREC_A64_SP;
		pc = PTREC_A64_PC;
	}
	g[sp] = k->sp;
	g[pc] = k->pc;
	t->nunwound = ptrec_unwind_regs(&r->sym, r->dump, g, 1ull << sp | 1ull << pc, t->unwound,
	                                UNWIND_MAX, &t->unwind_stop, &missing);
	if (missing != PTREC_UNWIND_NO_REG) {
		snprintf(t->unwind_stop_buf, sizeof(t->unwind_stop_buf),
		         "%s unknown: the thread was %s; no other registers than sp and pc are "
		         "readable without ptrace", ptrec_unwind_reg_name(arch, missing),
		         k->state == PTREC_TASK_SYSCALL ? "in a system call"
		                                        : "blocked in the kernel");
		t->unwind_stop = t->unwind_stop_buf;
	} else if (!k->stack_size && t->nunwound <= 1) {
		t->unwind_stop = k->flags & PTREC_TASK_BUDGET
		                     ? "its stack is not in the dump (the budget for the stacks of "
		                       "other threads was used)"
		                     : "its stack is not in the dump (unreadable at sp)";
	}
	return 0;
}

int ptrec_report_build(struct ptrec_report *r, const struct ptrec_dump *dump,
                       const struct ptrec_report_options *opt)
{
	const struct ptrec_dump_process *p = &dump->process;
	size_t crashed = SIZE_MAX;
	int rc;

	memset(r, 0, sizeof(*r));
	r->dump = dump;
	r->opt = *opt;
	for (size_t i = 0; i < dump->warnings.count; i++)
		ptrec_warn(&r->warnings, "dump: %s", dump->warnings.items[i]);
	if ((rc = ptrec_symbolizer_init(&r->sym, dump, opt->debug_dirs, &r->warnings)))
		return rc;
	r->sym.binaries = opt->binaries;
	r->sym.debuginfod_cache = opt->debuginfod_cache;

	/* The crashing thread: the flagged one, else the PROCESS tid. */
	for (size_t i = 0; i < dump->nthreads && crashed == SIZE_MAX; i++)
		if (dump->threads[i].hdr.flags & PTREC_THREAD_CRASHED)
			crashed = i;
	for (size_t i = 0; i < dump->nthreads && crashed == SIZE_MAX; i++)
		if (dump->threads[i].hdr.tid == p->tid)
			crashed = i;
	if (crashed == SIZE_MAX && dump->nthreads && !dump->has_regs)
		ptrec_warn(&r->warnings, "no THREAD record for the crashing thread %" PRIu32, p->tid);
	r->threads = calloc(dump->nthreads + 1, sizeof(*r->threads));
	if (!r->threads)
		return -PTREC_ENOMEM;
	if (crashed != SIZE_MAX) {
		r->threads[r->nthreads].rec = &dump->threads[crashed];
		r->threads[r->nthreads++].crashed = 1;
	} else if (dump->has_regs) {
		/* Never attached: no ring, but its registers and stack are in the dump. */
		r->orphan.hdr.tid = dump->regs.tid ? dump->regs.tid : p->tid;
		r->orphan.hdr.flags = PTREC_THREAD_CRASHED | PTREC_THREAD_UNTRACED;
		r->orphan.offset = UINT64_MAX;
		r->threads[r->nthreads].rec = &r->orphan;
		r->threads[r->nthreads++].crashed = 1;
	}
	for (size_t i = 0; i < dump->nthreads && !opt->crashed_only; i++)
		if (i != crashed)
			r->threads[r->nthreads++].rec = &dump->threads[i];

	if (dump->has_regs) {
		const uint64_t *g = dump->regs.gregs;
		r->have_regs = 1;
		r->fault_pc = g[dump->process.arch == PTREC_EM_AARCH64 ? PTREC_A64_PC : PTREC_REG_RIP];
		if (r->nthreads && r->threads[0].crashed) {
			struct ptrec_report_thread *t = &r->threads[0];
			t->unwound = malloc(UNWIND_MAX * sizeof(*t->unwound));
			if (!t->unwound)
				return -PTREC_ENOMEM;
			t->nunwound = ptrec_unwind(&r->sym, dump, g, t->unwound, UNWIND_MAX,
			                           &t->unwind_stop);
		}
		r->nfault_bytes = ptrec_dump_read_memory(dump, r->fault_pc, r->fault_bytes,
		                                         sizeof(r->fault_bytes));
		if (r->nfault_bytes) {
			r->fault_bytes_source = "dump memory";
		} else {
			struct ptrec_module *m = ptrec_symbolizer_module(&r->sym, r->fault_pc);
			r->nfault_bytes = ptrec_symbolizer_read(&r->sym, r->fault_pc, r->fault_bytes,
			                                        sizeof(r->fault_bytes));
			if (r->nfault_bytes && m) {
				snprintf(r->fault_bytes_file, sizeof(r->fault_bytes_file), "file %s",
				         m->path);
				r->fault_bytes_source = r->fault_bytes_file;
			}
		}
	} else {
		ptrec_warn(&r->warnings, "the dump has no REGS record: no faulting instruction and "
		           "no unwound stack");
	}
	for (size_t i = 0; i < r->nthreads; i++)
		if (!r->threads[i].crashed && (rc = unwind_task(r, &r->threads[i])))
			return rc;
	for (size_t i = 0; i < r->nthreads; i++) {
		struct ptrec_report_thread *t = &r->threads[i];
		size_t max = 256;
		if ((rc = decode_thread(r, t)))
			return rc;
		if (t->crashed && dump->has_watch)
			ptrec_report_cut_span(r, t, &dump->watch);
		if (!t->nbranches)
			continue;
		/* The time span of the history, whatever decoded it. */
		for (size_t k = 0; k < t->nbranches; k++)
			if (t->branches[k].flags & PTREC_BRF_HAS_TIME) {
				if (!t->has_time)
					t->first_time = t->branches[k].timestamp;
				t->has_time = 1;
				t->last_time = t->branches[k].timestamp;
			}
		/* The crashing thread's stack is checked against the unwound one first, which may
		 * drop many frames (a longjmp out of a deep recursion): rebuild it deeper. */
		int confirm = t->nunwound && t->unwind_stop && strstr(t->unwind_stop, "outermost");
		size_t deep = confirm ? 4096 : max;
		t->stack = malloc(deep * sizeof(*t->stack));
		if (!t->stack)
			return -PTREC_ENOMEM;
		t->nstack = ptrec_callstack_rebuild(t->branches, t->nbranches, t->soft, t->stack, deep,
		                                    &t->stack_info);
		if (confirm) {
			t->nstack = ptrec_callstack_confirm(t->stack, t->nstack, t->unwound, t->nunwound,
			                                    &t->stack_info);
			if (t->nstack > max) {
				t->stack_info.dropped += t->nstack - max;
				t->nstack = t->stack_info.depth = max;
			}
		}
	}
	ptrec_report_signature(r, r->signature, sizeof(r->signature));
	return 0;
}

void ptrec_report_free(struct ptrec_report *r)
{
	for (size_t i = 0; i < r->nthreads; i++) {
		free(r->threads[i].branches);
		free(r->threads[i].stack);
		free(r->threads[i].unwound);
	}
	free(r->threads);
	ptrec_pt_img_free(r->pt_image);
	ptrec_symbolizer_free(&r->sym);
	ptrec_warnings_free(&r->warnings);
	memset(r, 0, sizeof(*r));
}
