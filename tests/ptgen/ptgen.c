/* ptgen.c — the test-only Intel PT ground-truth generator.
 *
 *   ptgen record [--max-steps N] -o DIR -- PROGRAM [ARGS...]
 *   ptgen encode [ENCODER OPTIONS] [-o TRACE] DIR
 *   ptgen run [--max-steps N] [ENCODER OPTIONS] -o DIR -- PROGRAM [ARGS...]
 *
 * `record` single-steps PROGRAM under ptrace from its entry point to its exit and writes
 * DIR/run.xl (the execution log), DIR/truth.txt (every executed user instruction address, one
 * per line, 16 lowercase hex digits), DIR/truth-events.txt (the same with [enabled] and
 * [disabled] lines where the trace turns on and off), DIR/image.txt (one `--elf FILE:BASE` argument per line
 * for every object that had code mapped) and DIR/vdso.so (the vDSO's bytes).
 * `encode` turns DIR/run.xl into a PT stream (default DIR/trace.pt); `run` does both.
 * See doc/ptgen.md. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "exec_log.h"
#include "pt_model.h"
#include "step_trace.h"

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: ptgen record [--max-steps N] -o DIR -- PROGRAM [ARGS...]\n"
	        "       ptgen encode [ENCODER OPTIONS] [-o TRACE] DIR\n"
	        "       ptgen run [--max-steps N] [ENCODER OPTIONS] -o DIR -- PROGRAM [ARGS...]\n"
	        "encoder options:\n"
	        "  --psb-period BYTES   PSB+ after at least BYTES of trace (default 4096; 0: start only)\n"
	        "  --no-retcomp         no return compression (every RET sends TIP)\n"
	        "  --tnt short|long     6-bit TNT only, or long TNT up to 47 bits (default long)\n"
	        "  --defer-tip          hold TIPs back behind a partial TNT (SDM \"Deferred TIPs\")\n"
	        "  --ip min|sext|full|mix  IP compression (default min)\n"
	        "  --timing LIST        none, all, or a comma list of tsc,mtc,cyc,cbr (default none)\n"
	        "  --mtc-freq N         MTC on CTC bit N, 0..15 (default 3)\n"
	        "  --repeat N           the run N times, each an independent PSB-started segment\n"
	        "  --seed N             seed of --ip mix (default 1)\n"
	        "  --corrupt-tnt K      flip TNT bit K (0-based): a deliberately wrong trace\n"
	        "  --overflow K:N       internal buffer overflow: the packets of instructions K..K+N-1\n"
	        "                       (0-based) are lost, then OVF (+ FUP)\n");
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 0);
	if (errno || !*s || *end || *s == '-')
		return -1;
	*v = x;
	return 0;
}

static int parse_timing(const char *s, unsigned *out)
{
	*out = 0;
	if (!strcmp(s, "none"))
		return 0;
	if (!strcmp(s, "all")) {
		*out = PM_T_TSC | PM_T_MTC | PM_T_CYC | PM_T_CBR;
		return 0;
	}
	char buf[128];
	snprintf(buf, sizeof(buf), "%s", s);
	for (char *save, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (!strcmp(t, "tsc"))
			*out |= PM_T_TSC;
		else if (!strcmp(t, "mtc"))
			*out |= PM_T_MTC;
		else if (!strcmp(t, "cyc"))
			*out |= PM_T_CYC;
		else if (!strcmp(t, "cbr"))
			*out |= PM_T_CBR;
		else
			return -1;
	}
	return 0;
}

/* Parses one encoder option at argv[*i]; returns 1 if it was one, 0 if not, -1 on error. */
static int encoder_option(int argc, char **argv, int *i, struct pm_config *cfg)
{
	const char *o = argv[*i];
	uint64_t v;
	if (!strcmp(o, "--no-retcomp")) {
		cfg->retcomp = 0;
		return 1;
	}
	if (!strcmp(o, "--defer-tip")) {
		cfg->defer_tip = 1;
		return 1;
	}
	static const char *const with_arg[] = {"--psb-period", "--tnt", "--ip", "--timing",
	                                       "--mtc-freq", "--repeat", "--seed", "--corrupt-tnt",
	                                       "--overflow"};
	unsigned k;
	for (k = 0; k < sizeof(with_arg) / sizeof(with_arg[0]); k++)
		if (!strcmp(o, with_arg[k]))
			break;
	if (k == sizeof(with_arg) / sizeof(with_arg[0]))
		return 0;
	if (*i + 1 >= argc) {
		fprintf(stderr, "ptgen: %s needs a value\n", o);
		return -1;
	}
	const char *a = argv[++*i];
	int bad = 0;
	switch (k) {
	case 0:
		bad = parse_u64(a, &v) != 0;
		cfg->psb_period = (size_t)v;
		break;
	case 1:
		if (!strcmp(a, "short"))
			cfg->tnt_max = 6;
		else if (!strcmp(a, "long"))
			cfg->tnt_max = 47;
		else
			bad = 1;
		break;
	case 2:
		if (!strcmp(a, "min"))
			cfg->ipcomp = PM_IP_MIN;
		else if (!strcmp(a, "sext"))
			cfg->ipcomp = PM_IP_SEXT;
		else if (!strcmp(a, "full"))
			cfg->ipcomp = PM_IP_FULL;
		else if (!strcmp(a, "mix"))
			cfg->ipcomp = PM_IP_MIX;
		else
			bad = 1;
		break;
	case 3:
		bad = parse_timing(a, &cfg->timing) != 0;
		break;
	case 4:
		bad = parse_u64(a, &v) != 0 || v > 15;
		cfg->mtc_freq = (unsigned)v;
		break;
	case 5:
		bad = parse_u64(a, &v) != 0 || v < 1 || v > 1000000;
		cfg->repeat = (unsigned)v;
		break;
	case 6:
		bad = parse_u64(a, &v) != 0;
		cfg->seed = v;
		break;
	case 7:
		bad = parse_u64(a, &v) != 0 || v > INT64_MAX;
		cfg->corrupt_tnt = (int64_t)v;
		break;
	case 8: {
		char at[32];
		const char *colon = strchr(a, ':');
		uint64_t len = 0;
		bad = !colon || (size_t)(colon - a) >= sizeof(at);
		if (!bad) {
			memcpy(at, a, (size_t)(colon - a));
			at[colon - a] = 0;
			bad = parse_u64(at, &v) != 0 || v > INT64_MAX / 2 || parse_u64(colon + 1, &len) != 0 ||
			      len == 0 || len > INT64_MAX / 2;
			cfg->ovf_at = (int64_t)v;
			cfg->ovf_len = len;
		}
		break;
	}
	}
	if (bad) {
		fprintf(stderr, "ptgen: bad value for %s: '%s'\n", o, a);
		return -1;
	}
	return 1;
}

static char *path_in(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = malloc(n);
	if (p)
		snprintf(p, n, "%s/%s", dir, name);
	return p;
}

static int do_record(const char *dir, uint64_t max_steps, char **prog)
{
	if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "ptgen: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	char *xl = path_in(dir, "run.xl"), *truth = path_in(dir, "truth.txt");
	char *image = path_in(dir, "image.txt"), *vdso = path_in(dir, "vdso.so");
	char *events = path_in(dir, "truth-events.txt");
	struct xl_log log = {0};
	struct st_image img = {0};
	struct st_result res;
	struct st_options opt = {.vdso_path = vdso, .max_steps = max_steps};
	int rc = 1;
	if (!xl || !truth || !image || !vdso || !events)
		goto out;
	rc = st_record(prog, &opt, &log, &img, &res);
	if (rc != 0)
		goto out;
	rc = 1;
	FILE *f = fopen(image, "w");
	if (!f)
		goto io;
	for (unsigned i = 0; i < img.count; i++)
		fprintf(f, "--elf %s:0x%" PRIx64 "\n", img.objs[i].path, img.objs[i].base);
	if (fclose(f) != 0 || xl_write(&log, xl) != 0 || xl_write_truth(&log, truth) != 0 ||
	    xl_write_truth_events(&log, events) != 0)
		goto io;
	uint64_t insns = 0, async = 0;
	for (size_t i = 0; i < log.count; i++) {
		insns += log.recs[i].type == XL_INSN;
		async += log.recs[i].type == XL_ASYNC;
	}
	printf("ptgen: %s: %" PRIu64 " instructions (%" PRIu64 " single-steps) from entry 0x%" PRIx64
	       ", %" PRIu64 " signal entries, %u objects, exit status %d\n",
	       prog[0], insns, res.steps, res.entry, async, img.count, res.exit_status);
	rc = 0;
	goto out;
io:
	fprintf(stderr, "ptgen: %s: cannot write: %s\n", dir, strerror(errno));
out:
	xl_free(&log);
	st_image_free(&img);
	free(xl);
	free(truth);
	free(image);
	free(vdso);
	free(events);
	return rc;
}

static int do_encode(const char *dir, const char *trace, const struct pm_config *cfg)
{
	char *xl = path_in(dir, "run.xl");
	char *deflt = path_in(dir, "trace.pt");
	struct xl_log log;
	struct pe_buf out = {0};
	struct pm_stats st;
	int rc = 1;
	if (!xl || !deflt || xl_read(&log, xl) != 0)
		goto out;
	if (!trace)
		trace = deflt;
	if (pm_encode(&log, cfg, &out, &st) == 0) {
		FILE *f = fopen(trace, "wb");
		int ok = f && (out.len == 0 || fwrite(out.data, 1, out.len, f) == out.len);
		if (f && fclose(f) != 0)
			ok = 0;
		if (!ok) {
			fprintf(stderr, "ptgen: %s: cannot write: %s\n", trace, strerror(errno));
		} else {
			printf("ptgen: %s: %zu bytes, %" PRIu64 " instructions, %" PRIu64 " psb, %" PRIu64
			       " tnt packets (%" PRIu64 " bits, %" PRIu64 " compressed returns), %" PRIu64
			       " tip, %" PRIu64 " tip.pge, %" PRIu64 " tip.pgd, %" PRIu64 " fup, %" PRIu64
			       " ovf, %" PRIu64 " timing, tsc %" PRIu64 "..%" PRIu64 "\n",
			       trace, out.len, st.insns, st.psb, st.tnt_packets, st.tnt_bits, st.ret_comp,
			       st.tip, st.pge, st.pgd, st.fup, st.ovf, st.timing, st.tsc_first, st.tsc_last);
			rc = 0;
		}
	}
	xl_free(&log);
out:
	free(out.data);
	free(xl);
	free(deflt);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	const char *cmd = argv[1];
	int rec = !strcmp(cmd, "record"), enc = !strcmp(cmd, "encode"), run = !strcmp(cmd, "run");
	if (!rec && !enc && !run) {
		fprintf(stderr, "ptgen: unknown command '%s'\n", cmd);
		usage(stderr);
		return 2;
	}
	struct pm_config cfg;
	pm_config_default(&cfg);
	const char *out = NULL, *dir = NULL;
	uint64_t max_steps = 0;
	char **prog = NULL;
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];
		int r = (enc || run) ? encoder_option(argc, argv, &i, &cfg) : 0;
		if (r < 0)
			return 2;
		if (r > 0)
			continue;
		if (!strcmp(a, "-o") && i + 1 < argc) {
			out = argv[++i];
		} else if (!strcmp(a, "--max-steps") && !enc && i + 1 < argc) {
			if (parse_u64(argv[++i], &max_steps) != 0) {
				fprintf(stderr, "ptgen: bad value for --max-steps: '%s'\n", argv[i]);
				return 2;
			}
		} else if (!strcmp(a, "--") && !enc) {
			prog = argv + i + 1;
			break;
		} else if (enc && a[0] != '-' && !dir) {
			dir = a;
		} else {
			fprintf(stderr, "ptgen: unexpected argument '%s'\n", a);
			usage(stderr);
			return 2;
		}
	}
	if (enc) {
		if (!dir) {
			usage(stderr);
			return 2;
		}
		return do_encode(dir, out, &cfg);
	}
	if (!out || !prog || !prog[0]) {
		usage(stderr);
		return 2;
	}
	int rc = do_record(out, max_steps, prog);
	if (rc != 0 || rec)
		return rc;
	return do_encode(out, NULL, &cfg);
}
