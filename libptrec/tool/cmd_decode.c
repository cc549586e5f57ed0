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
#include "tool/line_fmt.h"
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

/* Prints a branch event as one line: KIND FROM -> TO [flags] [@time] (built in a buffer: this
 * is most of the time of a whole-trace `ptrec decode`). */
static void print_event(FILE *out, const struct ptrec_branch *ev, const struct ptrec_pt_flow_run *run)
{
	if (ev->kind == PTREC_BR_EVENT) { /* event trace: "event     IP TEXT" */
		char text[160];
		fprintf(out, "event     %016" PRIx64 " %s\n", ev->from,
		        ptrec_pt_flow_event_text(ev, text, sizeof(text)));
		return;
	}
	char line[160], *p = line_pad(line, ptrec_branch_kind_name(ev->kind), 9);
	*p++ = ' ';
	p = line_str(line_hex16(p, ev->from), " -> ");
	p = line_hex16(p, ev->to);
	if (ev->kind == PTREC_BR_JCC)
		p = line_str(p, ev->flags & PTREC_BRF_TAKEN ? " taken" : " not-taken");
	if (ev->flags & PTREC_BRF_COMPRESSED_RET)
		p = line_str(p, " compressed");
	if (ev->kind == PTREC_BR_GAP) { /* rare; the text has no bound */
		fwrite(line, 1, (size_t)(p - line), out);
		fprintf(out, " (%s", run && run->why ? run->why : ptrec_strerror(-(int)ev->reason));
		if (run)
			fprintf(out, ", trace offset 0x%" PRIx64, run->offset);
		if (ev->reserved) /* (from a ring: where it ended is in ->to) */
			fprintf(out, ", %" PRIu32 " bytes skipped", ev->reserved);
		fputc(')', out);
		p = line;
	}
	if (ev->flags & PTREC_BRF_HAS_TIME) {
		p = line_dec(line_str(p, " @"), ev->timestamp);
		if (ev->flags & PTREC_BRF_CYCLE)
			*p++ = 'c';
	}
	*p++ = '\n';
	fwrite(line, 1, (size_t)(p - line), out);
}

/* Prints an event of the --insn listing on its own line in square brackets. */
static void print_insn_event(FILE *out, const struct ptrec_branch *ev,
                             const struct ptrec_pt_flow_run *run)
{
	if (run->aux == PT_FLOW_AUX_PTW) {
		fprintf(out, "[ptwrite: 0x%" PRIx64 "]\n", run->aux_payload);
		return;
	}
	if (run->aux == PT_FLOW_AUX_RESYNC) { /* where the last gap ended */
		fprintf(out, "[resync: ip %016" PRIx64 ", trace offset 0x%" PRIx64 ", %" PRIu64
		        " bytes skipped]\n", run->aux_ip, run->aux_payload, run->aux_arg);
		return;
	}
	if (run->aux == PT_FLOW_AUX_END) { /* the instructions after the last packet are unknown */
		fputs("[end of trace]\n", out);
		return;
	}
	if (run->aux == PT_FLOW_AUX_EVD || run->aux == PT_FLOW_AUX_CFE) { /* event trace */
		static struct ptrec_branch evd; /* the EVD data before the CFE (one decode a run) */
		struct ptrec_branch event;
		char text[160];
		if (ptrec_pt_flow_event_branch(run, &evd, &event))
			fprintf(out, "[%s]\n", ptrec_pt_flow_event_text(&event, text, sizeof(text)));
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
	if (tool_parse_number(buf, 1, UINT32_MAX, &num) ||
	    tool_parse_number(slash + 1, 1, UINT32_MAX, &den))
		return -1;
	tc->ctc_num = (uint32_t)num;
	tc->ctc_den = (uint32_t)den;
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

/* Maps the --raw FILE[:FROM[-TO]]:VADDR of a. */
static int add_raw(struct ptrec_pt_img *img, const struct tool_args *a)
{
	const char *spec = a->arg;
	int e = ptrec_pt_img_add_raw_spec(img, spec);
	if (e == -PTREC_EIO) {
		tool_error(spec, -1, "cannot read: %s", strerror(errno));
		return TOOL_EXIT_INPUT;
	}
	if (e == -PTREC_EINVAL)
		return tool_bad_value(a, "FILE[:FROM[-TO]]:VADDR with FROM < TO <= the file size");
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
	struct ptrec_pt_time_config clock = {.mtc_freq = 3};
	int insn_mode = 0, stat_mode = 0, whole_mode = 0, tail_info = 0;
	unsigned long last = 0, v;
	const char *trace = NULL;
	int ret = TOOL_EXIT_OK;
	enum {
		OPT_RAW = 256, OPT_ELF, OPT_SELF, OPT_CPU, OPT_INSN, OPT_LAST, OPT_WHOLE, OPT_TAIL_INFO,
		OPT_STAT, OPT_MTC_FREQ, OPT_TSC_RATIO, OPT_NOM_FREQ,
	};
	static const struct option opts[] = {
		{"raw", required_argument, NULL, OPT_RAW},
		{"elf", required_argument, NULL, OPT_ELF},
		{"self", no_argument, NULL, OPT_SELF},
		{"cpu", required_argument, NULL, OPT_CPU},
		{"insn", no_argument, NULL, OPT_INSN},
		{"last", required_argument, NULL, OPT_LAST},
		{"whole", no_argument, NULL, OPT_WHOLE},
		{"tail-info", no_argument, NULL, OPT_TAIL_INFO},
		{"stat", no_argument, NULL, OPT_STAT},
		{"mtc-freq", required_argument, NULL, OPT_MTC_FREQ},
		{"tsc-ratio", required_argument, NULL, OPT_TSC_RATIO},
		{"nom-freq", required_argument, NULL, OPT_NOM_FREQ},
		TOOL_OPT_HELP, TOOL_OPT_LAST,
	};
	struct tool_args a = TOOL_ARGS_INIT(argc, argv, opts, usage);

	struct ptrec_pt_img *img = ptrec_pt_img_new();
	if (!img) {
		tool_error(NULL, -1, "out of memory");
		return TOOL_EXIT_INPUT;
	}
	for (int o; !ret && (o = tool_getopt(&a)) != TOOL_ARGS_END;) {
		switch (o) {
		case TOOL_ARGS_STOP:
			ptrec_pt_img_free(img);
			return a.status;
		case OPT_RAW:
			ret = add_raw(img, &a);
			break;
		case OPT_ELF:
			ret = add_elf(img, a.arg);
			break;
		case OPT_SELF:
			if (ptrec_pt_img_add_self(img) < 0) {
				tool_error("/proc/self/maps", -1, "cannot read");
				ret = TOOL_EXIT_INPUT;
			}
			break;
		case OPT_CPU:
			if (ptrec_pt_flow_parse_cpu(a.arg, &cpu))
				ret = tool_bad_value(&a, "FAMILY/MODEL[/STEPPING]");
			break;
		case OPT_LAST:
			ret = tool_opt_number(&a, 1, 1ul << 24, &last);
			break;
		case OPT_INSN:
			insn_mode = 1;
			break;
		case OPT_STAT:
			stat_mode = 1;
			break;
		case OPT_WHOLE:
			whole_mode = 1;
			break;
		case OPT_TAIL_INFO:
			tail_info = 1;
			break;
		case OPT_MTC_FREQ:
			if (!(ret = tool_opt_number(&a, 0, 15, &v)))
				clock.mtc_freq = (uint8_t)v;
			break;
		case OPT_TSC_RATIO:
			if (parse_ratio(a.arg, &clock))
				ret = tool_bad_value(&a, "NUM/DEN (CPUID.15H EBX/EAX, both non-zero)");
			break;
		case OPT_NOM_FREQ:
			if (!(ret = tool_opt_number(&a, 1, 255, &v)))
				clock.nominal_ratio = (uint8_t)v;
			break;
		case TOOL_ARGS_OPERAND:
			if (trace)
				ret = tool_usage_error(&a, "more than one trace file (%s, %s)", trace,
				                       a.arg);
			trace = a.arg;
			break;
		}
	}
	if (!ret && !trace)
		ret = tool_no_operand(&a, "TRACE file");
	if (!ret && insn_mode + stat_mode + (last != 0) > 1)
		ret = tool_usage_error(&a, "--insn, --last and --stat cannot be combined");
	if (!ret && whole_mode && !last)
		ret = tool_usage_error(&a, "--whole goes with --last");
	if (ret) {
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
				if (e == PT_FLOW_INSN) {
					char line[17];
					*line_hex16(line, insn.ip) = '\n';
					fwrite(line, 1, sizeof(line), out);
				} else {
					print_insn_event(out, &run->ev, run);
				}
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
		struct ptrec_branch evd = {0}, event; /* event trace: the EVD data before a CFE */
		while ((e = ptrec_pt_flow_next_run(f, &run)) > 0) {
			if (run.ev.kind != PTREC_BR_NONE)
				print_event(out, &run.ev, &run);
			else if (run.aux && ptrec_pt_flow_event_branch(&run, &evd, &event))
				print_event(out, &event, NULL);
			else if (run.aux == PT_FLOW_AUX_PTW)
				fprintf(out, "ptwrite   0x%" PRIx64 "\n", run.aux_payload);
			else if (run.aux == PT_FLOW_AUX_RESYNC) /* where the last gap ended */
				fprintf(out, "resync    -> %016" PRIx64 " (trace offset 0x%" PRIx64 ", %" PRIu64
				        " bytes skipped)\n", run.aux_ip, run.aux_payload, run.aux_arg);
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
