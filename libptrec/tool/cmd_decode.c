/* cmd_decode.c — `ptrec decode`: an Intel PT trace plus a code image into branch events (default),
 * every executed instruction (--insn), the last N branch events (--last N, decoded tail-first)
 * or the trace's totals (--stat).
 * See doc/ptrec-decode.md. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptrec.h"
#include "decode/branch_ring.h"
#include "decode/elf_load.h"
#include "decode/pt_flow.h"
#include "decode/pt_tail.h"
#include "tool/tool.h"

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: ptrec decode [--raw FILE[:FROM[-TO]]:VADDR]... [--elf FILE[:BASE]]...\n"
	        "                    [--self] [--cpu F/M[/S]] [--insn | --last N [--whole] | --stat]\n"
	        "                    [--mtc-freq N] [--tsc-ratio NUM/DEN] [--nom-freq N] TRACE\n"
	        "  --raw   map bytes FROM..TO of FILE at VADDR (default: the whole file)\n"
	        "  --elf   map the executable PT_LOAD segments of FILE (at BASE for PIE/.so)\n"
	        "  --self  map this process's executable mappings (testing)\n"
	        "  --cpu   apply the PT errata of that CPU (family/model/stepping)\n"
	        "  --insn  print every executed instruction, events in [brackets]\n"
	        "  --last  print only the last N branch events (decoding the newest segments first)\n"
	        "  --whole with --last: decode the whole trace to find them\n"
	        "  --tail-info  with --last: say on stderr how much of the trace was decoded\n"
	        "  --stat  decode the whole trace and print its totals, one key: value per line\n"
	        "  --mtc-freq   IA32_RTIT_CTL.MTCFreq / perf mtc_period, 0..15 (default 3)\n"
	        "  --tsc-ratio  TSC/crystal clock ratio, CPUID.15H EBX/EAX (default: calibrated)\n"
	        "  --nom-freq   max non-turbo ratio, perf max_nonturbo_ratio (default: calibrated)\n"
	        "exit: 0 decoded, 1 decoded with gaps, 2 usage, 3 unreadable input\n");
}

/* Prints a branch event as one line: KIND FROM -> TO [flags] [@time]. */
static void print_event(FILE *out, const struct ptrec_branch *ev, const struct ptrec_pt_flow_run *run)
{
	fprintf(out, "%-9s %016" PRIx64 " -> %016" PRIx64, ptrec_branch_kind_name(ev->kind), ev->from,
	        ev->to);
	if (ev->kind == PTREC_BR_JCC)
		fputs(ev->flags & PTREC_BRF_TAKEN ? " taken" : " not-taken", out);
	if (ev->flags & PTREC_BRF_COMPRESSED_RET)
		fputs(" compressed", out);
	if (ev->kind == PTREC_BR_GAP) {
		fprintf(out, " (%s", run && run->why ? run->why : ptrec_strerror(-(int)ev->reason));
		if (run)
			fprintf(out, ", trace offset 0x%" PRIx64, run->offset);
		fputc(')', out);
	}
	if (ev->flags & PTREC_BRF_HAS_TIME)
		fprintf(out, " @%" PRIu64 "%s", ev->timestamp, ev->flags & PTREC_BRF_CYCLE ? "c" : "");
	fputc('\n', out);
}

/* Prints an event of the --insn listing on its own line in square brackets. */
static void print_insn_event(FILE *out, const struct ptrec_branch *ev,
                             const struct ptrec_pt_flow_run *run)
{
	if (run->aux == PT_FLOW_AUX_PTW) {
		fprintf(out, "[ptwrite: 0x%" PRIx64 "]\n", run->aux_payload);
		return;
	}
	switch (ev->kind) {
	case PTREC_BR_ENABLE:
		fputs("[enabled]\n", out);
		break;
	case PTREC_BR_DISABLE:
		fputs("[disabled]\n", out);
		break;
	case PTREC_BR_OVERFLOW:
		fputs("[overflow]\n", out);
		break;
	case PTREC_BR_GAP:
		fprintf(out, "[gap: %s, trace offset 0x%" PRIx64 "]\n",
		        run->why ? run->why : ptrec_strerror(-(int)ev->reason), run->offset);
		break;
	case PTREC_BR_INTERRUPT:
		fprintf(out, "[interrupt: %016" PRIx64 " -> %016" PRIx64 "]\n", ev->from, ev->to);
		break;
	case PTREC_BR_TSX_ABORT:
		fprintf(out, "[tsx abort: %016" PRIx64 " -> %016" PRIx64 "]\n", ev->from, ev->to);
		break;
	default:
		break; /* ordinary branches are visible in the instruction stream */
	}
}

/* Parses an unsigned number in 0..max; returns 0 or -1. */
static int parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	char *end;
	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	unsigned long v = strtoul(s, &end, 0);
	if (errno || *end || v > max)
		return -1;
	*out = v;
	return 0;
}

/* Parses NUM/DEN (both 1..2^32-1) for --tsc-ratio; returns 0 or -1. */
static int parse_ratio(const char *s, struct ptrec_pt_time_config *tc)
{
	const char *slash = strchr(s, '/');
	unsigned long num, den;
	char buf[32];
	if (!slash || (size_t)(slash - s) >= sizeof(buf))
		return -1;
	memcpy(buf, s, (size_t)(slash - s));
	buf[slash - s] = 0;
	if (parse_uint(buf, UINT32_MAX, &num) || parse_uint(slash + 1, UINT32_MAX, &den) || !num ||
	    !den)
		return -1;
	tc->ctc_num = (uint32_t)num;
	tc->ctc_den = (uint32_t)den;
	return 0;
}

/* Applies one of the clock options (--mtc-freq, --tsc-ratio, --nom-freq) to tc; returns 0 or a
 * TOOL_EXIT_USAGE after an error message. */
static int clock_option(const char *opt, const char *val, struct ptrec_pt_time_config *tc)
{
	unsigned long v;
	if (!strcmp(opt, "--mtc-freq")) {
		if (parse_uint(val, 15, &v)) {
			tool_error(NULL, -1, "--mtc-freq %s: expected 0..15", val);
			return TOOL_EXIT_USAGE;
		}
		tc->mtc_freq = (uint8_t)v;
	} else if (!strcmp(opt, "--tsc-ratio")) {
		if (parse_ratio(val, tc)) {
			tool_error(NULL, -1, "--tsc-ratio %s: expected NUM/DEN (CPUID.15H EBX/EAX, "
			           "both non-zero)", val);
			return TOOL_EXIT_USAGE;
		}
	} else {
		if (parse_uint(val, 255, &v) || !v) {
			tool_error(NULL, -1, "--nom-freq %s: expected a ratio 1..255", val);
			return TOOL_EXIT_USAGE;
		}
		tc->nominal_ratio = (uint8_t)v;
	}
	return 0;
}

static int parse_count(const char *s, unsigned long *out)
{
	char *end;
	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	unsigned long v = strtoul(s, &end, 0);
	if (errno || *end || v == 0 || v > (1ul << 24))
		return -1;
	*out = v;
	return 0;
}

/* Parses FILE[:BASE] for --elf: BASE is the part after the last ':' if it is a number. */
static int add_elf(struct ptrec_pt_img *img, const char *spec)
{
	char *name = strdup(spec);
	if (!name) {
		tool_error(spec, -1, "out of memory");
		return TOOL_EXIT_INPUT;
	}
	int has_base = 0;
	uint64_t base = 0;
	char *colon = strrchr(name, ':');
	if (colon && colon[1] >= '0' && colon[1] <= '9') {
		char *end;
		errno = 0;
		unsigned long long v = strtoull(colon + 1, &end, 0);
		if (!errno && !*end) {
			*colon = 0;
			has_base = 1;
			base = v;
		}
	}
	long long bad = -1;
	int e = ptrec_elf_load_image(img, name, has_base, base, &bad);
	int ret = 0;
	if (e == -PTREC_EIO) {
		tool_error(name, -1, "cannot read: %s", strerror(errno));
		ret = TOOL_EXIT_INPUT;
	} else if (e == -PTREC_EFORMAT) {
		tool_error(name, bad, "not a usable ELF file (bad header or no executable segment)");
		ret = TOOL_EXIT_INPUT;
	} else if (e < 0) {
		tool_error(name, -1, "%s", ptrec_strerror(e));
		ret = TOOL_EXIT_INPUT;
	}
	free(name);
	return ret;
}

static int add_raw(struct ptrec_pt_img *img, const char *spec)
{
	int e = ptrec_pt_img_add_raw_spec(img, spec);
	if (e == -PTREC_EIO) {
		tool_error(spec, -1, "cannot read: %s", strerror(errno));
		return TOOL_EXIT_INPUT;
	}
	if (e == -PTREC_EINVAL) {
		tool_error(NULL, -1, "--raw %s: expected FILE[:FROM[-TO]]:VADDR with FROM < TO <= "
		           "the file size", spec);
		return TOOL_EXIT_USAGE;
	}
	if (e < 0) {
		tool_error(spec, -1, "%s", ptrec_strerror(e));
		return TOOL_EXIT_INPUT;
	}
	return 0;
}

int cmd_decode(int argc, char **argv)
{
	struct ptrec_pt_flow_cpu cpu = {0, 0, 0};
	/* MTCFreq 3 unless told: perf's default mtc_period and what the recorder asks for. */
	struct ptrec_pt_time_config clock = {0, 0, 3, 0};
	int insn_mode = 0, stat_mode = 0, whole_mode = 0, tail_info = 0;
	unsigned long last = 0;
	const char *trace = NULL;
	int ret = TOOL_EXIT_OK;

	struct ptrec_pt_img *img = ptrec_pt_img_new();
	if (!img) {
		tool_error(NULL, -1, "out of memory");
		return TOOL_EXIT_INPUT;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *val = NULL;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			ptrec_pt_img_free(img);
			return TOOL_EXIT_OK;
		}
		if (!strcmp(a, "--raw") || !strcmp(a, "--elf") || !strcmp(a, "--cpu") ||
		    !strcmp(a, "--last") || !strcmp(a, "--mtc-freq") || !strcmp(a, "--tsc-ratio") ||
		    !strcmp(a, "--nom-freq")) {
			if (i + 1 >= argc) {
				tool_error(NULL, -1, "%s needs an argument", a);
				ret = TOOL_EXIT_USAGE;
				break;
			}
			val = argv[++i];
		}
		if (!strcmp(a, "--raw"))
			ret = add_raw(img, val);
		else if (!strcmp(a, "--elf"))
			ret = add_elf(img, val);
		else if (!strcmp(a, "--cpu")) {
			if (ptrec_pt_flow_parse_cpu(val, &cpu)) {
				tool_error(NULL, -1, "--cpu %s: expected FAMILY/MODEL[/STEPPING]", val);
				ret = TOOL_EXIT_USAGE;
			}
		} else if (!strcmp(a, "--last")) {
			if (parse_count(val, &last)) {
				tool_error(NULL, -1, "--last %s: expected a count 1..16777216", val);
				ret = TOOL_EXIT_USAGE;
			}
		} else if (!strcmp(a, "--mtc-freq") || !strcmp(a, "--tsc-ratio") ||
		           !strcmp(a, "--nom-freq")) {
			ret = clock_option(a, val, &clock);
		} else if (!strcmp(a, "--insn"))
			insn_mode = 1;
		else if (!strcmp(a, "--stat"))
			stat_mode = 1;
		else if (!strcmp(a, "--whole"))
			whole_mode = 1;
		else if (!strcmp(a, "--tail-info"))
			tail_info = 1;
		else if (!strcmp(a, "--self")) {
			if (ptrec_pt_img_add_self(img) < 0) {
				tool_error("/proc/self/maps", -1, "cannot read");
				ret = TOOL_EXIT_INPUT;
			}
		} else if (a[0] == '-' && a[1]) {
			tool_error(NULL, -1, "unknown option %s", a);
			ret = TOOL_EXIT_USAGE;
		} else if (trace) {
			tool_error(NULL, -1, "more than one trace file (%s, %s)", trace, a);
			ret = TOOL_EXIT_USAGE;
		} else
			trace = a;
		if (ret)
			break;
	}
	if (!ret && !trace) {
		tool_error(NULL, -1, "no trace file given");
		ret = TOOL_EXIT_USAGE;
	}
	if (!ret && insn_mode + stat_mode + (last != 0) > 1) {
		tool_error(NULL, -1, "--insn, --last and --stat cannot be combined");
		ret = TOOL_EXIT_USAGE;
	}
	if (!ret && whole_mode && !last) {
		tool_error(NULL, -1, "--whole goes with --last");
		ret = TOOL_EXIT_USAGE;
	}
	if (ret) {
		if (ret == TOOL_EXIT_USAGE)
			usage(stderr);
		ptrec_pt_img_free(img);
		return ret;
	}

	struct tool_file tf;
	if (tool_file_read(trace, &tf) < 0) {
		ptrec_pt_img_free(img);
		return TOOL_EXIT_INPUT;
	}
	struct ptrec_pt_flow_config cfg = {tf.data, tf.size, img, ptrec_pt_flow_cpu_errata(&cpu), clock};
	struct ptrec_pt_flow *f = ptrec_pt_flow_new(&cfg);
	if (!f) {
		tool_error(trace, -1, "out of memory");
		tool_file_free(&tf);
		ptrec_pt_img_free(img);
		return TOOL_EXIT_INPUT;
	}

	FILE *out = stdout;
	int e;
	uint64_t tail_gaps = 0;
	if (stat_mode) {
		e = decode_stat(out, f, tf.data, tf.size);
	} else if (insn_mode) {
		struct ptrec_pt_flow_insn insn;
		const struct ptrec_pt_flow_run *run;
		struct ptrec_pt_flow_iter *it = malloc(sizeof(*it));
		if (!it) {
			e = -PTREC_ENOMEM;
		} else {
			ptrec_pt_flow_iter_init(it, f);
			while ((e = ptrec_pt_flow_iter_next(it, &insn, &run)) > 0) {
				if (e == PT_FLOW_INSN)
					fprintf(out, "%016" PRIx64 "\n", insn.ip);
				else
					print_insn_event(out, &run->ev, run);
			}
			free(it);
		}
	} else if (last) {
		struct ptrec_branch *slots = calloc(last, sizeof(*slots));
		struct ptrec_pt_flow_run *runs = NULL; /* gap texts are not kept in --last mode */
		struct branch_ring ring;
		if (!slots || ptrec_branch_ring_init(&ring, slots, last)) {
			tool_error(NULL, -1, "out of memory for %lu events", last);
			free(slots);
			e = -PTREC_ENOMEM;
		} else {
			struct ptrec_pt_flow_last_opts lo;
			struct ptrec_pt_tail_info ti;
			memset(&lo, 0, sizeof(lo));
			lo.errata = cfg.errata;
			lo.time = clock;
			e = whole_mode ? ptrec_pt_flow_decode_last(tf.data, tf.size, img, &lo, &ring,
			                                           &ti.stats)
			               : ptrec_pt_flow_decode_tail(tf.data, tf.size, img, &lo, &ring, &ti);
			tail_gaps = e > 0 ? (uint64_t)e + ti.stats.overflows : ti.stats.overflows;
			if (tail_info && !whole_mode)
				fprintf(stderr, "from %" PRIu64 " bytes %" PRIu64 " segments %" PRIu32
				        " whole %d\n", ti.from, ti.bytes, ti.segments, ti.whole);
			if (e > 0)
				e = 0;
			for (size_t i = 0; i < ptrec_branch_ring_count(&ring); i++)
				print_event(out, ptrec_branch_ring_get(&ring, i), runs);
			free(slots);
		}
	} else {
		struct ptrec_pt_flow_run run;
		while ((e = ptrec_pt_flow_next_run(f, &run)) > 0) {
			if (run.ev.kind != PTREC_BR_NONE)
				print_event(out, &run.ev, &run);
			else if (run.aux == PT_FLOW_AUX_PTW)
				fprintf(out, "ptwrite   0x%" PRIx64 "\n", run.aux_payload);
		}
	}
	const struct ptrec_pt_flow_stats *st = ptrec_pt_flow_stats(f);
	if (e < 0) {
		tool_error(trace, -1, "decoding stopped: %s", ptrec_strerror(e));
		ret = TOOL_EXIT_GAPS;
	} else if (st->gaps || st->overflows || tail_gaps) {
		ret = TOOL_EXIT_GAPS;
	}
	if (fflush(out) != 0)
		ret = TOOL_EXIT_INPUT;
	ptrec_pt_flow_free(f);
	tool_file_free(&tf);
	ptrec_pt_img_free(img);
	return ret;
}
