/* flow_compare.c — checks that every way of decoding a PT trace gives the same flow (test-only).
 *
 *   flow_compare [--runs] [--elf FILE[:BASE]]... TRACE
 *
 * Built twice: flow_compare with the decoder as it is, flow_compare_general with a decoder
 * built without its hot paths (PT_FLOW_GENERAL_ONLY: every step through the general walk);
 * with --runs both print every run, one line each, so that the two can be compared.
 * The reference is ptrec_pt_flow_next_run, one run per call.  Against it: ptrec_pt_flow_next_runs
 * in batches of 1, 7 and 64 runs (every run compared field by field, instruction lengths
 * included) and ptrec_pt_flow_count (its totals against the reference runs added up).  Prints
 * the reference totals as `key: value` lines (the keys of `ptrec decode --stat` they share) and
 * exits 0, or names the first difference and exits 1; 2 for bad arguments. */
#include "config.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptrec.h"
#include "decode/elf_load.h"
#include "decode/pt_flow.h"
#include "decode/pt_image.h"

/* The reference runs, with copies of their lengths and texts. */
struct ref_run {
	struct ptrec_pt_flow_run run; /* as delivered (len and why point into the copies) */
	uint8_t *len;                 /* copy of run.len */
};

static struct ref_run *refs;
static size_t nref, capref;

static int keep(const struct ptrec_pt_flow_run *run)
{
	if (nref == capref) {
		size_t cap = capref ? capref * 2 : 4096;
		struct ref_run *r = realloc(refs, cap * sizeof(*r));
		if (!r)
			return -1;
		refs = r;
		capref = cap;
	}
	struct ref_run *r = &refs[nref];
	r->run = *run;
	r->len = malloc(run->ninsn ? run->ninsn : 1);
	if (!r->len)
		return -1;
	if (run->ninsn) /* len may be NULL without instructions */
		memcpy(r->len, run->len, run->ninsn);
	nref++;
	return 0;
}

/* Adds a run to the totals as `ptrec decode --stat` counts them. */
static void add(struct ptrec_pt_flow_counts *c, const struct ptrec_pt_flow_run *run)
{
	const struct ptrec_branch *ev = &run->ev;
	c->insns += run->ninsn;
	if (run->aux) {
		c->aux++;
		if (run->aux == PT_FLOW_AUX_PTW)
			c->ptw++;
	}
	if (ev->kind == PTREC_BR_NONE)
		return;
	c->kind[ev->kind]++;
	if (ev->kind == PTREC_BR_JCC && (ev->flags & PTREC_BRF_TAKEN))
		c->jcc_taken++;
	if (ev->flags & PTREC_BRF_COMPRESSED_RET)
		c->ret_compressed++;
	if (ev->flags & PTREC_BRF_HAS_TIME) {
		if (!c->have_time)
			c->time_first = ev->timestamp;
		c->have_time = 1;
		c->time_last = ev->timestamp;
	}
}

/* 0 if run equals the reference run i, else prints the difference and returns 1. */
static int same_run(const char *how, size_t i, const struct ptrec_pt_flow_run *run)
{
	if (i >= nref) {
		printf("FAIL: %s: run %zu beyond the reference's %zu runs\n", how, i, nref);
		return 1;
	}
	const struct ptrec_pt_flow_run *r = &refs[i].run;
	const char *what = NULL;
	if (run->ip != r->ip || run->ninsn != r->ninsn || run->mode != r->mode)
		what = "ip, instruction count or mode";
	else if (run->ninsn && (run->last_iclass != r->last_iclass ||
	                        memcmp(run->len, refs[i].len, run->ninsn)))
		what = "instruction lengths or last class";
	else if (run->flags != r->flags)
		what = "flags";
	else if (run->aux != r->aux || (run->aux && (run->aux_payload != r->aux_payload ||
	                                             run->aux_arg != r->aux_arg ||
	                                             run->aux_ip != r->aux_ip)))
		what = "auxiliary item"; /* aux_* mean nothing without an item */
	else if (memcmp(&run->ev, &r->ev, sizeof(run->ev)) || run->offset != r->offset)
		what = "event";
	else if ((run->why == NULL) != (r->why == NULL) ||
	         (run->why && strcmp(run->why, r->why)))
		what = "gap text";
	if (!what)
		return 0;
	printf("FAIL: %s: run %zu differs in its %s: ip %#" PRIx64 " n %" PRIu32 " kind %u "
	       "%#" PRIx64 "->%#" PRIx64 " off %" PRIu64 ", reference ip %#" PRIx64 " n %" PRIu32
	       " kind %u %#" PRIx64 "->%#" PRIx64 " off %" PRIu64 "\n", how, i, what, run->ip,
	       run->ninsn, run->ev.kind, run->ev.from, run->ev.to, run->offset, r->ip, r->ninsn,
	       r->ev.kind, r->ev.from, r->ev.to, r->offset);
	return 1;
}

static struct ptrec_pt_flow *open_flow(const uint8_t *buf, size_t len, struct ptrec_pt_img *img)
{
	struct ptrec_pt_flow_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.buf = buf;
	cfg.len = len;
	cfg.image = img;
	cfg.time.mtc_freq = 3; /* as `ptrec decode` without --mtc-freq */
	return ptrec_pt_flow_new(&cfg);
}

static uint8_t *read_file(const char *path, size_t *size)
{
	FILE *fp = fopen(path, "rb");
	uint8_t *b = NULL;
	long n;
	if (!fp || fseek(fp, 0, SEEK_END) || (n = ftell(fp)) < 0 || fseek(fp, 0, SEEK_SET) ||
	    !(b = malloc((size_t)n + 1)) || fread(b, 1, (size_t)n, fp) != (size_t)n) {
		free(b);
		b = NULL;
	} else {
		*size = (size_t)n;
	}
	if (fp)
		fclose(fp);
	return b;
}

static int load_elf(struct ptrec_pt_img *img, const char *spec)
{
	char name[4096];
	snprintf(name, sizeof(name), "%s", spec);
	char *colon = strrchr(name, ':');
	int has_base = 0;
	uint64_t base = 0;
	if (colon && colon[1] >= '0' && colon[1] <= '9') {
		*colon = 0;
		has_base = 1;
		base = strtoull(colon + 1, NULL, 0);
	}
	return ptrec_elf_load_image(img, name, has_base, base, NULL);
}

static void print_run(const struct ref_run *r)
{
	const struct ptrec_pt_flow_run *run = &r->run;
	printf("%#" PRIx64 " %" PRIu32 " m%u c%u f%u [", run->ip, run->ninsn, run->mode,
	       run->last_iclass, run->flags);
	for (uint32_t i = 0; i < run->ninsn; i++)
		printf("%u", r->len[i]);
	printf("] k%u %#" PRIx64 "->%#" PRIx64 " t%" PRIu64 " f%u @%" PRIu64, run->ev.kind,
	       run->ev.from, run->ev.to, run->ev.timestamp, run->ev.flags, run->offset);
	if (run->aux)
		printf(" aux%u %#" PRIx64 " %#" PRIx64 " %#" PRIx64, run->aux, run->aux_payload,
		       run->aux_arg, run->aux_ip);
	printf("%s%s\n", run->why ? " " : "", run->why ? run->why : "");
}

static void print_counts(const struct ptrec_pt_flow_counts *c)
{
	printf("insns: %" PRIu64 "\njcc: %" PRIu64 "\njcc-taken: %" PRIu64 "\njmp: %" PRIu64
	       "\ncall: %" PRIu64 "\nret: %" PRIu64 "\nret-compressed: %" PRIu64 "\nind-jmp: %"
	       PRIu64 "\nind-call: %" PRIu64 "\nfar: %" PRIu64 "\ninterrupt: %" PRIu64
	       "\nenable: %" PRIu64 "\ndisable: %" PRIu64 "\nptwrite: %" PRIu64 "\noverflows: %"
	       PRIu64 "\ngaps: %" PRIu64 "\n", c->insns, c->kind[PTREC_BR_JCC], c->jcc_taken,
	       c->kind[PTREC_BR_JMP], c->kind[PTREC_BR_CALL], c->kind[PTREC_BR_RET],
	       c->ret_compressed, c->kind[PTREC_BR_IND_JMP], c->kind[PTREC_BR_IND_CALL],
	       c->kind[PTREC_BR_FAR], c->kind[PTREC_BR_INTERRUPT], c->kind[PTREC_BR_ENABLE],
	       c->kind[PTREC_BR_DISABLE], c->ptw, c->kind[PTREC_BR_OVERFLOW], c->kind[PTREC_BR_GAP]);
	if (c->have_time)
		printf("time-first: %" PRIu64 "\ntime-last: %" PRIu64 "\n", c->time_first,
		       c->time_last);
}

int main(int argc, char **argv)
{
	struct ptrec_pt_img *img = ptrec_pt_img_new();
	const char *trace = NULL;
	int runs_out = 0;
	if (!img)
		return 2;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--elf") && i + 1 < argc) {
			if (load_elf(img, argv[++i]) < 0) {
				fprintf(stderr, "flow_compare: cannot load %s\n", argv[i]);
				return 2;
			}
		} else if (!strcmp(argv[i], "--runs")) {
			runs_out = 1;
		} else {
			trace = argv[i];
		}
	}
	size_t len = 0;
	uint8_t *buf = trace ? read_file(trace, &len) : NULL;
	if (!buf) {
		fprintf(stderr, "usage: flow_compare [--elf FILE[:BASE]]... TRACE (readable)\n");
		return 2;
	}

	/* The reference. */
	struct ptrec_pt_flow_counts ref;
	memset(&ref, 0, sizeof(ref));
	struct ptrec_pt_flow *f = open_flow(buf, len, img);
	struct ptrec_pt_flow_run run;
	int e, fails = 0;
	while (f && (e = ptrec_pt_flow_next_run(f, &run)) > 0) {
		add(&ref, &run);
		if (keep(&run))
			return 2;
	}
	if (!f || e < 0)
		return 2;
	ptrec_pt_flow_free(f);

	/* Batches. */
	static const size_t batch[] = {1, 7, 64};
	static struct ptrec_pt_flow_run runs[64];
	for (size_t b = 0; b < sizeof(batch) / sizeof(batch[0]) && !fails; b++) {
		char how[64];
		size_t i = 0;
		snprintf(how, sizeof(how), "next_runs by %zu", batch[b]);
		f = open_flow(buf, len, img);
		while (!fails && (e = ptrec_pt_flow_next_runs(f, runs, batch[b])) > 0)
			for (int k = 0; k < e && !fails; k++)
				fails += same_run(how, i++, &runs[k]);
		if (!fails && i != nref) {
			printf("FAIL: %s: %zu runs, the reference %zu\n", how, i, nref);
			fails++;
		}
		ptrec_pt_flow_free(f);
	}

	/* Totals without runs. */
	struct ptrec_pt_flow_counts c;
	memset(&c, 0, sizeof(c));
	f = open_flow(buf, len, img);
	e = ptrec_pt_flow_count(f, &c);
	if (e || memcmp(&c, &ref, offsetof(struct ptrec_pt_flow_counts, have_time)) ||
	    c.have_time != ref.have_time) {
		printf("FAIL: ptrec_pt_flow_count (returned %d) differs from the runs' totals:\n", e);
		print_counts(&c);
		printf("the runs':\n");
		fails++;
	}
	if (ptrec_pt_flow_stats(f)->insns != ref.insns) {
		printf("FAIL: ptrec_pt_flow_count: stats say %" PRIu64 " instructions\n",
		       ptrec_pt_flow_stats(f)->insns);
		fails++;
	}
	ptrec_pt_flow_free(f);
	for (size_t i = 0; runs_out && i < nref; i++)
		print_run(&refs[i]);
	print_counts(&ref);
	for (size_t i = 0; i < nref; i++)
		free(refs[i].len);
	free(refs);
	free(buf);
	ptrec_pt_img_free(img);
	return fails ? 1 : 0;
}
