/* ptt_run — runs .ptt conformance cases (libipt's public test-suite format, supplied from
 * outside) through libptrec's PT flow decoder and compares our instruction listing, printed in
 * ptxed's format, with each case's expected ptxed output.  Test-only (needs yasm).
 *
 *   ptt_run [-v] [--table FILE] [--min N] PATH...
 *       PATH: .ptt files or directories of them.  Prints one line per case
 *       (PASS / FAIL / SKIP and why) and a total line "conformance: P of C comparable cases
 *       match ptxed"; --table also writes the per-case table in Markdown.  Exit 0 when at
 *       least N (default 0) comparable cases match, 1 otherwise, 2 on usage errors.
 *
 * A case is comparable when it has an .exp(ptxed) section and its opt:ptxed options ask for a
 * full instruction listing (not --quiet, --filter, end-on-call or --stat).  A case with cpu
 * lines passes only if it matches for every CPU.  Lines are compared as ptxed's test script
 * does (diff -b: runs of blanks are equal, trailing blanks ignored). */
#define _GNU_SOURCE
#include "ptt_case.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decode/pt_flow.h"
#include "decode/pt_image.h"
#include "decode/pt_packet.h"
#include "ptrec.h"

struct opts {
	int event_ip;       /* --event:ip */
	int iflags;         /* --event:iflags */
	int show_blocks;    /* --block:show-blocks: "[block]" where libipt's block decoder starts one */
	int end_on_jump;    /* --block:end-on-jump: a direct JMP ends a block */
	int tick;           /* --event:tick: "[TIME  tick]" after a branch whose packet moved time */
	int time;           /* --event:time: events carry their time */
	struct ptrec_pt_time_config clk; /* --nom-freq, --mtc-freq, --cpuid-0x15.eax/ebx,
	                                    --insn:keep-tcal-on-ovf */
	char cpu[16];       /* --cpu from the options ("" none) */
	char unsupported[64];
	unsigned nraw;      /* --raw NAME.bin:OFFSET:ADDR: more of the case's binary at ADDR */
	struct { char file[256]; unsigned long long off, addr; } raw[4];
};

static int parse_opts(const char *s, struct opts *o)
{
	memset(o, 0, sizeof(*o));
	char buf[512];
	snprintf(buf, sizeof(buf), "%s", s);
	for (char *save = NULL, *t = strtok_r(buf, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
		if (!strcmp(t, "--event:ip")) {
			o->event_ip = 1;
		} else if (!strcmp(t, "--event:iflags")) {
			o->iflags = 1;
		} else if (!strcmp(t, "--block:show-blocks")) {
			o->show_blocks = 1;
		} else if (!strcmp(t, "--block:end-on-jump")) {
			o->end_on_jump = 1;
		} else if (!strcmp(t, "--event:tick")) {
			o->tick = 1;
		} else if (!strcmp(t, "--event:time")) {
			o->time = 1;
		} else if (!strcmp(t, "--insn:keep-tcal-on-ovf") ||
		           !strcmp(t, "--block:keep-tcal-on-ovf")) {
			o->clk.keep_cal_on_ovf = 1;
		} else if (!strcmp(t, "--nom-freq") || !strcmp(t, "--mtc-freq") ||
		           !strcmp(t, "--cpuid-0x15.eax") || !strcmp(t, "--cpuid-0x15.ebx")) {
			char *v = strtok_r(NULL, " \t", &save);
			unsigned long n = v ? strtoul(v, NULL, 0) : 0;
			if (t[2] == 'n')
				o->clk.nominal_ratio = (uint8_t)n;
			else if (t[2] == 'm')
				o->clk.mtc_freq = (uint8_t)n;
			else if (strstr(t, "eax"))
				o->clk.ctc_den = (uint32_t)n;
			else
				o->clk.ctc_num = (uint32_t)n;
		} else if (!strcmp(t, "--cpu")) {
			char *v = strtok_r(NULL, " \t", &save);
			snprintf(o->cpu, sizeof(o->cpu), "%s", v ? v : "");
		} else if (!strcmp(t, "--raw") && o->nraw < 4) {
			/* FILE:OFFSET:ADDR (ptxed's --raw with a start offset) */
			char *v = strtok_r(NULL, " \t", &save), *a = v ? strrchr(v, ':') : NULL;
			char *f = NULL;
			if (a && a > v) {
				*a = 0;
				f = strrchr(v, ':');
			}
			if (!f) {
				snprintf(o->unsupported, sizeof(o->unsupported), "--raw %s", v ? v : "");
				continue;
			}
			*f = 0;
			snprintf(o->raw[o->nraw].file, sizeof(o->raw[o->nraw].file), "%s", v);
			o->raw[o->nraw].off = strtoull(f + 1, NULL, 0);
			o->raw[o->nraw].addr = strtoull(a + 1, NULL, 0);
			o->nraw++;
		} else if (!strcmp(t, "--resync-on-error") || !strcmp(t, "--insn-decoder") || !strcmp(t, "--block-decoder") ||
		           !strcmp(t, "--check") || !strcmp(t, "--no-inst")) {
			/* same listing */
		} else if (!o->unsupported[0]) {
			snprintf(o->unsupported, sizeof(o->unsupported), "%s", t);
		}
	}
	return 0;
}

/* The comparable cases: an .exp(ptxed) section and a full listing. */
static int comparable(const struct ptt_case *c)
{
	return c->has_exp && !strstr(c->opts, "--quiet") && !strstr(c->opts, "--filter") &&
	       !strstr(c->opts, "end-on-call") && !strstr(c->opts, "--stat");
}

static const char *err_text(int code, const char *why)
{
	switch (code) {
	case PTREC_ESTATE: /* the flow's errors: the packets do not give what the code asks */
		if (why && !strcmp(why, "bad status update"))
			return why;
		if (why && !strncmp(why, "unexpected packet context", 25))
			return "unexpected packet context";
		return "trace stream does not match query";
	case PTREC_ENOMAP:
		return "no memory mapped at this address";
	case PTREC_EOVERFLOW:
		return "overflow";
	case PTREC_ENOSYNC:
		return "no sync";
	case PTREC_EEOS:
		return "reached end of trace stream";
	case PTREC_ETRUNC:
		return "unexpected end of trace stream";
	default:
		return ptrec_strerror(-code);
	}
}

/* The time of the branch event being printed (--event:time), 0: none. */
static uint64_t ev_time;

/* Prints "[text]" or, with show, "[text, key: IP]"; "[TIME  text...]" when ev_time is set. */
static void ev_line(FILE *out, const char *text, const char *key, uint64_t ip, int show)
{
	fprintf(out, "[");
	if (ev_time)
		fprintf(out, "%016llx  ", (unsigned long long)ev_time);
	fprintf(out, "%s", text);
	if (show)
		fprintf(out, ", %s: %016llx", key, (unsigned long long)ip);
	fprintf(out, "]\n");
}

/* The EVD items before the CFE item being printed (event trace). */
static struct {
	unsigned have;    /* 1 << enum ptrec_pt_evd_type */
	uint64_t val[3];  /* by type */
} evd;

/* Prints a CFE item with the EVD items before it the way ptxed prints the event. */
static void print_cfe(FILE *out, const struct ptrec_pt_flow_run *run, const struct opts *o)
{
	unsigned t = (unsigned)run->aux_payload, v = (unsigned)run->aux_arg;
	const char *name = ptrec_pt_cfe_name(t);
	char text[200];
	size_t n = 0;
	if (t == PT_CFE_SIPI)
		n = (size_t)snprintf(text, sizeof(text), "sipi: %x", v);
	else if (t == PT_CFE_INTR || t == PT_CFE_UINTR || t == PT_CFE_SWINTR)
		n = (size_t)snprintf(text, sizeof(text), "%s %u", name, v);
	else
		n = (size_t)snprintf(text, sizeof(text), "%s", name ? name : "?");
	if (t == PT_CFE_VMEXIT_INTR)
		n += (size_t)snprintf(text + n, sizeof(text) - n, ", intr: %u", v);
	static const char *const key[3] = {"cr2", "vmxq", "vmxr"};
	static const unsigned order[3] = {PT_EVD_CR2, PT_EVD_VMXR, PT_EVD_VMXQ};
	for (unsigned i = 0; i < 3; i++)
		if (evd.have & (1u << order[i]))
			n += (size_t)snprintf(text + n, sizeof(text) - n, ", %s: %016llx", key[order[i]],
			                      (unsigned long long)evd.val[order[i]]);
	evd.have = 0;
	ev_line(out, text, "ip", run->aux_ip, o->event_ip && run->aux_ip);
}

/* Prints an auxiliary item (a status event) the way ptxed prints the event. */
static void print_aux(FILE *out, const struct ptrec_pt_flow_run *run, const struct opts *o)
{
	unsigned long long p = run->aux_payload, a = run->aux_arg;
	int show = o->event_ip && run->aux_ip;
	switch (run->aux) {
	case PT_FLOW_AUX_PTW: {
		char t[40];
		snprintf(t, sizeof(t), "ptwrite: %llx", p);
		ev_line(out, t, "ip", run->aux_ip, show);
		break;
	}
	case PT_FLOW_AUX_EXEC_MODE:
		ev_line(out, p == X86_MODE_64 ? "exec mode: 64-bit" : p == X86_MODE_32
		        ? "exec mode: 32-bit" : "exec mode: 16-bit", "ip", run->aux_ip, show);
		break;
	case PT_FLOW_AUX_PAGING:
		fprintf(out, "[paging, cr3: %016llx%s]\n", p, a ? ", nr" : "");
		break;
	case PT_FLOW_AUX_VMCS:
		fprintf(out, "[vmcs, base: %016llx]\n", p);
		break;
	case PT_FLOW_AUX_MNT:
		fprintf(out, "[mnt: %llx]\n", p);
		break;
	case PT_FLOW_AUX_PWRE:
		fprintf(out, "[pwre c%llu.%llu%s]\n", ((p >> 4) + 1) & 0xf, ((p & 0xf) + 1) & 0xf,
		        a ? " hw" : "");
		break;
	case PT_FLOW_AUX_PWRX:
		fprintf(out, "[pwrx %s%s%sc%llu (c%llu)]\n", (p & 0x100) ? "int: " : "",
		        (p & 0x400) ? "st: " : "", (p & 0x800) ? "hw: " : "", (((p >> 4) & 0xf) + 1) & 0xf,
		        ((p & 0xf) + 1) & 0xf);
		break;
	case PT_FLOW_AUX_MWAIT: {
		char t[40];
		snprintf(t, sizeof(t), "mwait %llx %llx", p, a);
		ev_line(out, t, "ip", run->aux_ip, show);
		break;
	}
	case PT_FLOW_AUX_EXSTOP:
		ev_line(out, "exstop", "ip", run->aux_ip, show);
		break;
	case PT_FLOW_AUX_STOP:
		fprintf(out, "[stopped]\n");
		break;
	case PT_FLOW_AUX_TSX:
		ev_line(out, p == 2 ? "aborted" : p ? "begin transaction" : "committed", "ip",
		        run->aux_ip, show);
		break;
	case PT_FLOW_AUX_END:
		fprintf(out, "[end of trace]\n");
		break;
	case PT_FLOW_AUX_CBR:
		fprintf(out, "[cbr: %llx]\n", p);
		break;
	case PT_FLOW_AUX_IFLAGS:
		if (o->iflags)
			ev_line(out, p ? "interrupts enabled" : "interrupts disabled", "ip", run->aux_ip,
			        show);
		break;
	case PT_FLOW_AUX_EVD:
		if (a < 3) {
			evd.have |= 1u << a;
			evd.val[a] = p;
		}
		break;
	case PT_FLOW_AUX_CFE:
		print_cfe(out, run, o);
		break;
	case PT_FLOW_AUX_TRIG: {
		char t[32];
		snprintf(t, sizeof(t), "trig %02llx%s", p, a ? ", mult" : "");
		ev_line(out, t, "ip", run->aux_ip, show);
		break;
	}
	default:
		break;
	}
}

/* Decodes c for cpu (may be "") and prints ptxed's listing into out. */
static void decode_case(struct ptt_case *c, const struct opts *o, const char *cpu, FILE *out)
{
	struct ptrec_pt_flow_cpu fcpu = {0, 0, 0};
	unsigned errata = 0;
	if (cpu[0]) {
		if (ptrec_pt_flow_parse_cpu(cpu, &fcpu) < 0 || fcpu.family == 0) {
			fprintf(out, "[0, 0: config error: unknown cpu]\n");
		} else {
			errata = ptrec_pt_flow_cpu_errata(&fcpu);
		}
	}
	/* SKL014 is about a direct branch that clears FilterEn, which only an address range
	 * filter can do; the comparable cases configure none (ptxed's --filter options make a
	 * case not comparable), so like ptxed without a filter the erratum does not apply. */
	errata &= ~PT_ERRATUM_SKL014;
	struct ptrec_pt_img *img = ptrec_pt_img_new();
	if (!img) {
		fprintf(out, "[out of memory]\n");
		return;
	}
	if (c->nsections == 0) {
		if (c->bin_len)
			ptrec_pt_img_add_bytes(img, c->org, c->bin, c->bin_len, 0);
	} else {
		for (unsigned i = 0; i < c->nsections; i++) {
			const struct ptt_section *s = &c->sections[i];
			if (s->size && s->file_off < c->bin_len) {
				uint64_t n = s->size;
				if (n > c->bin_len - s->file_off)
					n = c->bin_len - s->file_off;
				ptrec_pt_img_add_bytes(img, s->vstart, c->bin + s->file_off, n, 0);
			}
		}
	}
	/* --raw NAME.bin:OFF:ADDR adds the case's own binary from OFF on at ADDR, over the image
	 * above (libipt's suite loads NAME.bin at org and then these) */
	for (unsigned i = 0; i < o->nraw; i++) {
		char want[300];
		snprintf(want, sizeof(want), "%s.bin", c->name);
		if (strcmp(o->raw[i].file, want) || o->raw[i].off >= c->bin_len ||
		    ptrec_pt_img_add_bytes(img, o->raw[i].addr, c->bin + o->raw[i].off,
		                           c->bin_len - o->raw[i].off, 0) < 0)
			fprintf(out, "[0, 0: config error: cannot load --raw %s]\n", o->raw[i].file);
	}
	struct ptrec_pt_flow_config cfg = {0};
	cfg.buf = c->pt.data;
	cfg.len = c->pt.len;
	cfg.image = img;
	cfg.errata = errata;
	cfg.time = o->clk;
	struct ptrec_pt_flow *f = cfg.len ? ptrec_pt_flow_new(&cfg) : NULL;
	if (!f) {
		ptrec_pt_img_free(img);
		return;
	}
	ptrec_pt_flow_set_event_trace(f, o->iflags); /* ptxed's --event:iflags */
	evd.have = 0;
	struct ptrec_pt_flow_run run;
	unsigned long steps = 0;
	/* --block:show-blocks: libipt's block decoder ends a block at every branch that needs a
	 * packet, at events, and at a direct JMP only with --block:end-on-jump (a direct CALL only
	 * with end-on-call, which no comparable case uses) */
	int block_open = 0;
	uint64_t shown = 0; /* the last time printed (--event:tick) */
	while (ptrec_pt_flow_next_run(f, &run) > 0 && steps++ < 1000000) {
		uint64_t ip = run.ip, last = 0;
		ev_time = 0;
		if (o->show_blocks && run.ninsn && !block_open)
			fprintf(out, "[block]\n");
		block_open = run.ninsn || block_open;
		if (run.aux || (run.ev.kind != PTREC_BR_CALL &&
		                (run.ev.kind != PTREC_BR_JMP || o->end_on_jump)))
			block_open = 0;
		for (uint32_t i = 0; i < run.ninsn; i++) {
			fprintf(out, "%s%016llx\n", (run.flags & PT_FLOW_RUN_SPECULATIVE) ? "? " : "",
			        (unsigned long long)ip);
			last = ip;
			ip += run.len[i];
		}
		if (run.aux) {
			print_aux(out, &run, o);
			continue;
		}
		const struct ptrec_branch ev = run.ev;
		uint64_t t = (ev.flags & PTREC_BRF_HAS_TIME) ? ev.timestamp : 0;
		/* ptxed's tick: after a branch that took a packet (a TNT bit, a TIP) when the time
		 * moved since the last time it printed */
		int took_packet = ev.kind == PTREC_BR_JCC || ev.kind == PTREC_BR_RET ||
		                  ev.kind == PTREC_BR_IND_JMP || ev.kind == PTREC_BR_IND_CALL ||
		                  ev.kind == PTREC_BR_FAR;
		if (o->tick && t && t != shown && took_packet) {
			fprintf(out, "[%016llx  tick]\n", (unsigned long long)t);
			shown = t;
		}
		/* an event that is not a branch shows its time */
		if (o->time && t && !took_packet && ev.kind != PTREC_BR_JMP &&
		    ev.kind != PTREC_BR_CALL) {
			ev_time = t;
			shown = t;
		}
		switch (ev.kind) {
		case PTREC_BR_ENABLE:
			ev_line(out, (run.flags & PT_FLOW_RUN_RESUMED) ? "resumed" : "enabled", "ip", ev.to,
			        o->event_ip);
			break;
		case PTREC_BR_DISABLE:
			/* ptxed gives an asynchronous disable (FUP+TIP.PGD: the instruction at
			 * `from` did not execute) the TIP.PGD's IP too, when it has one */
			if (o->event_ip && ev.from && ev.to && !(run.ninsn && last == ev.from)) {
				fprintf(out, "[disabled, at: %016llx, ip: %016llx]\n",
				        (unsigned long long)ev.from, (unsigned long long)ev.to);
				break;
			}
			if (run.ninsn && last == ev.from) { /* synchronous: the branch at `from` ran;
			                                        ptxed gives the TIP.PGD's IP, if any */
				ev_line(out, "disabled", "ip", ev.to, o->event_ip && ev.to);
				break;
			}
			ev_line(out, "disabled", "at", ev.from, o->event_ip && ev.from);
			break;
		case PTREC_BR_OVERFLOW:
			ev_line(out, "overflow", "ip", ev.to, o->event_ip && ev.to);
			break;
		case PTREC_BR_TSX_ABORT:
			ev_line(out, "aborted", "ip", ev.from, o->event_ip);
			/* the abort is an asynchronous branch */
			/* fall through */
		case PTREC_BR_INTERRUPT:
			fprintf(out, "[interrupt");
			if (o->event_ip)
				fprintf(out, ", from: %016llx, to: %016llx", (unsigned long long)ev.from,
				        (unsigned long long)ev.to);
			fprintf(out, "]\n");
			break;
		case PTREC_BR_GAP:
			if (ev.reason == PTREC_ENOSYNC && c->pt.len == 0)
				break;
			fprintf(out, "[%llx, %llx: error: %s]\n", (unsigned long long)run.offset,
			        (unsigned long long)ev.from, err_text(ev.reason, run.why));
			break;
		default:
			break;
		}
	}
	ptrec_pt_flow_free(f);
	ptrec_pt_img_free(img);
}

/* Compares like diff -b; returns 0 if equal, else the 1-based first differing line. */
static int compare(const char *want, const char *got, char *detail, size_t dlen)
{
	int line = 1;
	for (;;) {
		const char *we = strchr(want, '\n'), *ge = strchr(got, '\n');
		if (!*want && !*got)
			return 0;
		size_t wn = we ? (size_t)(we - want) : strlen(want), gn = ge ? (size_t)(ge - got) : strlen(got);
		/* normalise: collapse blanks, drop trailing ones */
		char a[512], b[512];
		size_t an = 0, bn = 0;
		for (size_t i = 0; i < wn && an < sizeof(a) - 1; i++)
			if (!(want[i] == ' ' || want[i] == '\t') || (an && a[an - 1] != ' '))
				a[an++] = (want[i] == '\t') ? ' ' : want[i];
		for (size_t i = 0; i < gn && bn < sizeof(b) - 1; i++)
			if (!(got[i] == ' ' || got[i] == '\t') || (bn && b[bn - 1] != ' '))
				b[bn++] = (got[i] == '\t') ? ' ' : got[i];
		while (an && a[an - 1] == ' ')
			an--;
		while (bn && b[bn - 1] == ' ')
			bn--;
		a[an] = b[bn] = 0;
		if (!*want || !*got || strcmp(a, b)) {
			snprintf(detail, dlen, "line %d: expected '%s', got '%s'", line, *want ? a : "(end)",
			         *got ? b : "(end)");
			return line;
		}
		want = we ? we + 1 : want + wn;
		got = ge ? ge + 1 : got + gn;
		line++;
	}
}

struct result {
	char name[256];
	const char *verdict; /* PASS, FAIL, SKIP */
	char detail[1200];
};

static int add_path(char ***list, size_t *n, const char *path)
{
	struct stat st;
	if (stat(path, &st) < 0) {
		fprintf(stderr, "ptt_run: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (S_ISDIR(st.st_mode)) {
		struct dirent **ents;
		int k = scandir(path, &ents, NULL, alphasort);
		if (k < 0)
			return -1;
		for (int i = 0; i < k; i++) {
			size_t l = strlen(ents[i]->d_name);
			if (l > 4 && !strcmp(ents[i]->d_name + l - 4, ".ptt")) {
				char *p;
				if (asprintf(&p, "%s/%s", path, ents[i]->d_name) >= 0) {
					char **nl = realloc(*list, (*n + 1) * sizeof(**list));
					if (nl) {
						*list = nl;
						(*list)[(*n)++] = p;
					} else {
						free(p);
					}
				}
			}
			free(ents[i]);
		}
		free(ents);
		return 0;
	}
	char **nl = realloc(*list, (*n + 1) * sizeof(**list));
	if (!nl)
		return -1;
	*list = nl;
	(*list)[(*n)++] = strdup(path);
	return 0;
}

int main(int argc, char **argv)
{
	int verbose = 0;
	long min = 0;
	const char *table = NULL;
	char **paths = NULL;
	size_t npaths = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-v"))
			verbose = 1;
		else if (!strcmp(argv[i], "--min") && i + 1 < argc)
			min = strtol(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--table") && i + 1 < argc)
			table = argv[++i];
		else if (argv[i][0] == '-') {
			fprintf(stderr, "usage: ptt_run [-v] [--table FILE] [--min N] PATH...\n");
			return 2;
		} else if (add_path(&paths, &npaths, argv[i]) < 0)
			return 2;
	}
	if (npaths == 0) {
		fprintf(stderr, "usage: ptt_run [-v] [--table FILE] [--min N] PATH...\n");
		return 2;
	}
	char workdir[] = "/tmp/ptt_run.XXXXXX";
	if (!mkdtemp(workdir)) {
		fprintf(stderr, "ptt_run: mkdtemp: %s\n", strerror(errno));
		return 2;
	}
	struct result *res = calloc(npaths, sizeof(*res));
	struct ptt_case *c = malloc(sizeof(*c));
	if (!res || !c)
		return 2;
	long ncomp = 0, npass = 0;
	for (size_t i = 0; i < npaths; i++) {
		struct result *r = &res[i];
		int rc = ptt_case_load(c, paths[i], workdir);
		snprintf(r->name, sizeof(r->name), "%s", c->name);
		if (rc == 0 && !comparable(c)) {
			r->verdict = "SKIP";
			snprintf(r->detail, sizeof(r->detail), "%s",
			         c->has_exp ? "not a full listing (opt:ptxed)" : "no .exp(ptxed)");
			ptt_case_free(c);
			continue;
		}
		ncomp += rc == 0 || c->has_exp;
		r->verdict = "FAIL";
		if (rc) {
			snprintf(r->detail, sizeof(r->detail), "cannot prepare: %s", c->err);
			ptt_case_free(c);
			continue;
		}
		struct opts o;
		parse_opts(c->opts, &o);
		char *want = ptt_case_expand(c, c->exp ? c->exp : "");
		if (o.unsupported[0]) {
			snprintf(r->detail, sizeof(r->detail), "option %s not supported", o.unsupported);
		} else if (want) {
			unsigned ncpu = o.cpu[0] ? 1 : c->ncpus ? c->ncpus : 1;
			int ok = 1;
			for (unsigned k = 0; k < ncpu && ok; k++) {
				const char *cpu = o.cpu[0] ? o.cpu : c->ncpus ? c->cpus[k] : "";
				char *got = NULL;
				size_t glen = 0;
				FILE *out = open_memstream(&got, &glen);
				if (!out)
					break;
				decode_case(c, &o, cpu, out);
				fclose(out);
				char detail[1100];
				if (compare(want, got ? got : "", detail, sizeof(detail))) {
					ok = 0;
					snprintf(r->detail, sizeof(r->detail), "%s%s%s", cpu[0] ? "cpu " : "", cpu[0] ? cpu : "",
					         "");
					size_t dl = strlen(r->detail);
					snprintf(r->detail + dl, sizeof(r->detail) - dl, "%s%s", dl ? ": " : "", detail);
					if (verbose)
						printf("--- %s expected\n%s--- %s got\n%s", c->name, want, c->name, got ? got : "");
				}
				free(got);
			}
			if (ok) {
				r->verdict = "PASS";
				npass++;
			}
		}
		free(want);
		ptt_case_free(c);
	}
	for (size_t i = 0; i < npaths; i++)
		printf("%-48s %s%s%s\n", res[i].name, res[i].verdict, res[i].detail[0] ? "  " : "", res[i].detail);
	printf("conformance: %ld of %ld comparable cases match ptxed\n", npass, ncomp);
	if (table) {
		FILE *t = fopen(table, "w");
		if (t) {
			fprintf(t, "| case | result | why |\n| --- | --- | --- |\n");
			for (size_t i = 0; i < npaths; i++) {
				fprintf(t, "| %s | %s | ", res[i].name, res[i].verdict);
				for (const char *p = res[i].detail; *p; p++)
					fputs(*p == '|' ? "\\|" : (char[]){*p, 0}, t);
				fprintf(t, " |\n");
			}
			fprintf(t, "\n%ld of %ld comparable cases match.\n", npass, ncomp);
			fclose(t);
		}
	}
	/* clean the work directory */
	DIR *d = opendir(workdir);
	if (d) {
		struct dirent *e;
		while ((e = readdir(d)) != NULL) {
			if (e->d_name[0] == '.')
				continue;
			char p[4400];
			snprintf(p, sizeof(p), "%s/%s", workdir, e->d_name);
			unlink(p);
		}
		closedir(d);
	}
	rmdir(workdir);
	for (size_t i = 0; i < npaths; i++)
		free(paths[i]);
	free(paths);
	free(res);
	free(c);
	return npass >= min ? 0 : 1;
}
