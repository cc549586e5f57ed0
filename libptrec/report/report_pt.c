/* report_pt.c — intel_pt thread rings in the report: builds the code image once per report
 * from the dump's modules (the executable segments of each ELF file whose build-id matched, at
 * their load bias; the vDSO from the dump's bytes) and its MEMORY code records (JIT), then runs
 * the flow decoder tail-first (pt_tail.h) for the last events of each ring, stepping further
 * back while the rebuilt call stack has returns to calls made before the events kept, within
 * a time budget (opt.pt_budget_ms; a warning says how far back it looked when it ran out).
 * For the crashing thread
 * the history is cut at the fault: the flow decoder reports the faulting instruction as the
 * source of the DISABLE (or INTERRUPT) event, and what follows is the signal handler. */
#include "config.h"

#include <elf.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "decode/branch_ring.h"
#include "decode/pt_flow.h"
#include "decode/pt_image.h"
#include "decode/pt_tail.h"
#include "ptrec.h"
#include "report/report.h"

/* Events kept per PT ring: enough for the rebuilt call stack and any --branches up to it. */
#define PT_KEEP_MIN 16384

static int build_image(struct ptrec_report *r)
{
	struct ptrec_symbolizer *s = &r->sym;
	const struct ptrec_dump *d = r->dump;
	size_t added = 0;

	r->pt_image = ptrec_pt_img_new();
	if (!r->pt_image)
		return -PTREC_ENOMEM;
	for (size_t i = 0; i < s->nmods; i++) {
		struct ptrec_module *m = &s->mods[i];
		if (m->state == 0)
			ptrec_symbolizer_module(s, m->start); /* loads it */
		if (m->state != 1 || !m->has_elf)
			continue; /* unreadable, or its build-id did not match: no code from it */
		for (size_t k = 0; k < m->elf.nloads; k++) {
			const struct ptrec_elf_load *l = &m->elf.loads[k];
			if (!(l->flags & PF_X) || !l->filesz)
				continue;
			if (ptrec_pt_img_add_bytes(r->pt_image, l->vaddr + m->bias, m->elf.data + l->offset,
			                       (size_t)l->filesz, 0) == 0)
				added++;
		}
	}
	for (size_t i = 0; i < d->nmemory; i++) {
		const struct ptrec_dump_memory_rec *mr = &d->memory[i];
		if (mr->hdr.kind != PTREC_MEM_CODE || !mr->hdr.size)
			continue;
		if (ptrec_pt_img_add_bytes(r->pt_image, mr->hdr.vaddr, mr->bytes, (size_t)mr->hdr.size,
		                       0) == 0)
			added++;
	}
	if (!added)
		ptrec_warn(&r->warnings, "no code could be loaded for the intel_pt decoder (no "
		           "readable module matched the dump): PT rings are not decoded");
	return 0;
}

#define PT_KEEP_MAX (1u << 22) /* events kept at most when stepping back for the call stack */

static double mono_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* opts.stop: the budget's deadline passed. */
static int past_deadline(void *arg)
{
	return mono_now() >= *(const double *)arg;
}

/* 1 if the last n events (oldest first) return to calls made before them. */
static int returns_past_start(const struct branch_ring *ring)
{
	size_t n = ptrec_branch_ring_count(ring);
	struct ptrec_branch *b = malloc((n ? n : 1) * sizeof(*b));
	struct ptrec_frame fr[1];
	struct ptrec_callstack_info info;
	if (!b)
		return 0;
	for (size_t i = 0; i < n; i++)
		b[i] = *ptrec_branch_ring_get(ring, i);
	ptrec_callstack_rebuild(b, n, 0, fr, 1, &info);
	free(b);
	return info.unmatched_returns > 0;
}

int ptrec_report_decode_pt(struct ptrec_report *r, struct ptrec_report_thread *t)
{
	const struct ptrec_dump_thread *h = &t->rec->hdr;
	const struct ptrec_dump_process *p = &r->dump->process;
	struct ptrec_pt_flow_last_opts opts;
	struct ptrec_pt_flow_cpu cpu;
	struct ptrec_pt_tail_info info;
	struct branch_ring ring;
	double deadline = mono_now() + (double)r->opt.pt_budget_ms * 1e-3;
	struct ptrec_branch *store;
	size_t keep = r->opt.branches > PT_KEEP_MIN ? r->opt.branches : PT_KEEP_MIN, n;
	int rc;

	if (!r->pt_image) {
		if ((rc = build_image(r)))
			return rc;
	}
	memset(&opts, 0, sizeof(opts));
	memset(&cpu, 0, sizeof(cpu));
	cpu.family = (uint16_t)p->cpu_family;
	cpu.model = (uint16_t)p->cpu_model;
	cpu.stepping = (uint16_t)p->cpu_stepping;
	opts.errata = ptrec_pt_flow_cpu_errata(&cpu);
	opts.time.ctc_den = h->tsc_ratio_d;
	opts.time.ctc_num = h->tsc_ratio_n;
	opts.time.mtc_freq = (uint8_t)h->mtc_period;
	opts.time.nominal_ratio = (uint8_t)h->nom_freq;
	if (r->opt.pt_budget_ms) {
		opts.stop = past_deadline;
		opts.stop_arg = &deadline;
	}
	/* The last events; more while returns in them pop calls made before them. */
	for (store = NULL;; keep *= 4) {
		free(store);
		store = malloc(keep * sizeof(*store));
		if (!store)
			return -PTREC_ENOMEM;
		ptrec_branch_ring_init(&ring, store, keep);
		rc = ptrec_pt_flow_decode_tail(t->rec->data, (size_t)h->data_size, r->pt_image, &opts,
		                               &ring, &info);
		if (rc < 0 || info.reached_start || keep * 4 > PT_KEEP_MAX ||
		    !returns_past_start(&ring))
			break;
	}
	if (rc == -PTREC_ERATE)
		ptrec_warn(&r->warnings, "thread %" PRIu32 ": intel_pt: the decoding budget (%u ms) ran "
		           "out: looked back %" PRIu64 " of %" PRIu64 " trace bytes (%" PRIu32
		           " segments from offset %" PRIu64 "); older calls may be missing from the "
		           "call stack", h->tid, r->opt.pt_budget_ms, info.bytes, h->data_size,
		           info.segments, info.from);
	if (rc < 0 && rc != -PTREC_ERATE) {
		free(store);
		if (rc == -PTREC_ENOMEM)
			return rc;
		t->status = "intel_pt: the trace could not be decoded";
		ptrec_warn(&r->warnings, "thread %" PRIu32 ": intel_pt decoding failed: %s", h->tid,
		           ptrec_strerror(rc));
		return 0;
	}
	if (rc > 0)
		ptrec_warn(&r->warnings, "thread %" PRIu32 ": %d gap(s) in the intel_pt trace "
		           "(history lost there; shown in the branch list)", h->tid, rc);
	if (info.stats.overflows)
		ptrec_warn(&r->warnings, "thread %" PRIu32 ": %" PRIu64 " hardware overflow(s) in "
		           "the intel_pt trace", h->tid, info.stats.overflows);
	n = ptrec_branch_ring_count(&ring);
	t->branches = malloc((n ? n : 1) * sizeof(*t->branches));
	if (!t->branches) {
		free(store);
		return -PTREC_ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		t->branches[i] = *ptrec_branch_ring_get(&ring, i);
	t->nbranches = n;
	t->total_branches = info.events; /* the events decoded (the newest part of the ring) */
	free(store);

	/* The crashing thread: end the history at the fault, before the signal handler. */
	if (t->crashed && r->fault_pc) {
		for (size_t i = n; i > 0; i--) {
			const struct ptrec_branch *b = &t->branches[i - 1];
			if ((b->kind == PTREC_BR_DISABLE || b->kind == PTREC_BR_INTERRUPT) &&
			    b->from == r->fault_pc) {
				t->trimmed = n - i;
				t->nbranches = i;
				break;
			}
		}
	}
	if (!t->nbranches)
		t->status = "intel_pt: no branches decoded";
	return 0;
}
