/* test_info.c — `ptrec info`: the JSON report over fake sysfs/procfs trees (every field the
 * test checks is worked out here from the tree it built), and the plain report on this
 * machine (exit 0, a verdict line, and the truth about PT on this CPU). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "check.h"
#include "fake_sysfs.h"

/* ---- a tiny JSON reader: validates the document and finds values by dotted path ---------- */

static const char *ws(const char *p)
{
	while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
		p++;
	return p;
}

/* Returns the end of the value starting at p, or NULL if it is not valid JSON. */
static const char *skip_value(const char *p, int depth);

static const char *skip_string(const char *p)
{
	if (*p != '"')
		return NULL;
	for (p++; *p && *p != '"'; p++) {
		if ((unsigned char)*p < 0x20)
			return NULL;
		if (*p == '\\') {
			p++;
			if (*p == 'u') {
				for (int i = 1; i <= 4; i++)
					if (!strchr("0123456789abcdefABCDEF", p[i]) || !p[i])
						return NULL;
				p += 4;
			} else if (!*p || !strchr("\"\\/bfnrt", *p)) {
				return NULL;
			}
		}
	}
	return *p == '"' ? p + 1 : NULL;
}

static const char *skip_value(const char *p, int depth)
{
	p = ws(p);
	if (depth > 32)
		return NULL;
	if (*p == '"')
		return skip_string(p);
	if (*p == '{' || *p == '[') {
		char close = *p == '{' ? '}' : ']';
		p = ws(p + 1);
		if (*p == close)
			return p + 1;
		for (;;) {
			if (close == '}') {
				p = skip_string(ws(p));
				if (!p)
					return NULL;
				p = ws(p);
				if (*p++ != ':')
					return NULL;
			}
			p = skip_value(p, depth + 1);
			if (!p)
				return NULL;
			p = ws(p);
			if (*p == ',') {
				p++;
				continue;
			}
			return *p == close ? p + 1 : NULL;
		}
	}
	if (!strncmp(p, "true", 4) || !strncmp(p, "null", 4))
		return p + 4;
	if (!strncmp(p, "false", 5))
		return p + 5;
	const char *s = p;
	if (*p == '-')
		p++;
	while (*p >= '0' && *p <= '9')
		p++;
	return p > s && p[-1] != '-' ? p : NULL;
}

/* The value at a dotted path ("perf.budget.threads"), or NULL. */
static const char *json_get(const char *doc, const char *path)
{
	const char *p = ws(doc);
	char key[128];

	while (*path) {
		size_t n = strcspn(path, ".");
		if (n >= sizeof(key) || *p != '{')
			return NULL;
		memcpy(key, path, n);
		key[n] = '\0';
		path += n + (path[n] == '.');
		p = ws(p + 1);
		const char *found = NULL;
		while (*p == '"') {
			const char *kend = skip_string(p);
			if (!kend)
				return NULL;
			int match = (size_t)(kend - p - 2) == strlen(key) && !strncmp(p + 1, key, n);
			p = ws(ws(kend) + 1); /* past ':' */
			if (match) {
				found = p;
				break;
			}
			p = skip_value(p, 0);
			if (!p)
				return NULL;
			p = ws(p);
			if (*p == ',')
				p = ws(p + 1);
		}
		if (!found)
			return NULL;
		p = found;
	}
	return p;
}

/* The string value at path, unescaped only for \" (enough for the checks), or "". */
static const char *json_str(const char *doc, const char *path, char *buf, size_t len)
{
	const char *v = json_get(doc, path);
	size_t n = 0;

	buf[0] = '\0';
	if (!v || *v != '"')
		return buf;
	for (v++; *v && *v != '"' && n + 1 < len; v++) {
		if (*v == '\\')
			v++;
		buf[n++] = *v;
	}
	buf[n] = '\0';
	return buf;
}

static long long json_num(const char *doc, const char *path)
{
	const char *v = json_get(doc, path);
	return v ? strtoll(v, NULL, 10) : -999999;
}

/* 1 for true, 0 for false, -1 otherwise. */
static int json_bool(const char *doc, const char *path)
{
	const char *v = json_get(doc, path);
	return !v ? -1 : !strncmp(v, "true", 4) ? 1 : !strncmp(v, "false", 5) ? 0 : -1;
}

static int json_valid(const char *doc)
{
	const char *end = skip_value(doc, 0);
	return end && !*ws(end);
}

/* ---- running the tool -------------------------------------------------------------------- */

/* Runs "$PTREC_TOOL info ARGS", returns stdout (malloc'd) and the exit status. */
static char *run_info(const char *args, int *status)
{
	const char *tool = getenv("PTREC_TOOL");
	char cmd[8192];
	size_t cap = 1 << 16, n = 0;
	char *out = malloc(cap);

	snprintf(cmd, sizeof(cmd), "'%s' info %s", tool, args);
	FILE *f = popen(cmd, "r");
	if (!f || !out) {
		*status = -1;
		free(out);
		return NULL;
	}
	for (;;) {
		if (n + 1 >= cap) {
			char *bigger = realloc(out, cap *= 2);
			if (!bigger)
				break;
			out = bigger;
		}
		size_t r = fread(out + n, 1, cap - 1 - n, f);
		if (!r)
			break;
		n += r;
	}
	out[n] = '\0';
	int st = pclose(f);
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	return out;
}

static void set_memlock(rlim_t cur)
{
	struct rlimit rl;

	getrlimit(RLIMIT_MEMLOCK, &rl);
	rl.rlim_cur = cur;
	if (rl.rlim_max != RLIM_INFINITY && cur > rl.rlim_max)
		rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_MEMLOCK, &rl);
}

/* ---- the text report and the JSON name the same facts --------------------------------------- */

#define KEYS_MAX 1024
#define PATH_MAX_ 160

/* A set of dotted key paths ("perf.budget.threads"). */
struct keyset {
	size_t n;
	char path[KEYS_MAX][PATH_MAX_];
};

static void keyset_add(struct keyset *k, const char *path)
{
	if (k->n < KEYS_MAX)
		snprintf(k->path[k->n++], PATH_MAX_, "%s", path);
}

static int keyset_has(const struct keyset *k, const char *path)
{
	for (size_t i = 0; i < k->n; i++)
		if (!strcmp(k->path[i], path))
			return 1;
	return 0;
}

/* Adds the path of every member of the JSON value at p (objects only; an array is one value)
 * under prefix to k.  Returns the end of the value, or NULL if it is not valid JSON. */
static const char *json_keys(const char *p, const char *prefix, struct keyset *k)
{
	p = ws(p);
	if (*p != '{')
		return skip_value(p, 0);
	p = ws(p + 1);
	if (*p == '}')
		return p + 1;
	for (;;) {
		const char *kend = skip_string(p);
		char path[PATH_MAX_];

		if (!kend)
			return NULL;
		snprintf(path, sizeof(path), "%s%s%.*s", prefix, *prefix ? "." : "",
		         (int)(kend - p - 2), p + 1);
		keyset_add(k, path);
		p = ws(kend);
		if (*p++ != ':')
			return NULL;
		p = json_keys(p, path, k);
		if (!p)
			return NULL;
		p = ws(p);
		if (*p == ',') {
			p = ws(p + 1);
			continue;
		}
		return *p == '}' ? p + 1 : NULL;
	}
}

/* Adds the path of every key line of the text report to k: "KEY  WORDS" indented two spaces
 * per level, a section's lines two more than its own.  Other lines (blank ones, the verdict
 * sentence "verdict: ...") name no key. */
static void text_keys(const char *out, struct keyset *k)
{
	static const char keychars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	                               "0123456789_-";
	char stack[8][PATH_MAX_];

	for (const char *line = out; *line;) {
		size_t len = strcspn(line, "\n"), ind = strspn(line, " ");
		size_t klen = strspn(line + ind, keychars);
		char end = line[ind + klen];

		if (klen && (end == ' ' || end == '\n' || !end) && ind % 2 == 0 && ind / 2 < 8 &&
		    klen < PATH_MAX_) {
			size_t depth = ind / 2;
			char path[PATH_MAX_ * 2] = "";

			snprintf(stack[depth], PATH_MAX_, "%.*s", (int)klen, line + ind);
			for (size_t i = 0; i <= depth; i++) /* (a cut path is a wrong key: it fails) */
				if (snprintf(path + strlen(path), sizeof(path) - strlen(path), "%s%s",
				             i ? "." : "", stack[i]) < 0)
					break;
			keyset_add(k, path);
		}
		line += len + (line[len] == '\n');
	}
}

/* `ptrec info ARGS` and `ptrec info ARGS --json` name the same facts: every key of the text
 * report is a JSON path, and every JSON member has its line in the text. */
static void check_same_keys(const char *args)
{
	static struct keyset text, json;
	char jargs[4700];
	int st;
	char *out = run_info(args, &st);

	snprintf(jargs, sizeof(jargs), "%s --json", args);
	char *jout = run_info(jargs, &st);
	CHECK(out && jout);
	if (!out || !jout) {
		free(out);
		free(jout);
		return;
	}
	text.n = json.n = 0;
	text_keys(out, &text);
	CHECK(json_keys(jout, "", &json) != NULL);
	CHECK(text.n > 60 && json.n > 60); /* not vacuous: both name the whole report */
	for (size_t i = 0; i < text.n; i++)
		if (!keyset_has(&json, text.path[i])) {
			printf("text key %s is not in the JSON (ptrec info %s)\n", text.path[i], args);
			CHECK(0);
		}
	for (size_t i = 0; i < json.n; i++)
		if (!keyset_has(&text, json.path[i])) {
			printf("JSON key %s has no line in the text (ptrec info %s)\n", json.path[i],
			       args);
			CHECK(0);
		}
	printf("ptrec info %s: %zu keys in the text, %zu in the JSON\n", args, text.n, json.n);
	free(out);
	free(jout);
}

/* An Intel PT + BTS machine, unprivileged, paranoid 2, 516 KiB x 2 CPUs, RLIMIT_MEMLOCK 64 KiB. */
static void test_pt_machine(const char *root)
{
	char args[4600], buf[1024];
	int st;

	CHECK(fake_sysfs_build(root, FAKE_PT_FULL | FAKE_BTS, 2, 516) == 0);
	fake_sysfs_write(root, "proc/self/status", "Name:\tserver\nCapEff:\t0000000000000000\n");
	fake_sysfs_write(root, "proc/sys/kernel/core_pattern", "/var/crash/core.%e.%p\n");
	fake_sysfs_write(root, "proc/sys/kernel/core_uses_pid", "0\n");
	set_memlock(64 << 10);

	snprintf(args, sizeof(args), "--root '%s' --json --ring-size 64K", root);
	char *out = run_info(args, &st);
	CHECK(out != NULL);
	if (!out)
		return;
	CHECK_EQ_U64(st, 0);
	CHECK(json_valid(out));
	CHECK_STR(json_str(out, "root", buf, sizeof(buf)), root);
	CHECK_STR(json_str(out, "machine", buf, sizeof(buf)), "x86-64");  /* the tree's, on either build */
	CHECK_EQ_U64(json_bool(out, "pmus.intel_pt.present"), 1);
	CHECK_EQ_U64(json_num(out, "pmus.intel_pt.type"), 8);
	CHECK_STR(json_str(out, "pmus.intel_pt.caps.mtc_periods", buf, sizeof(buf)), "249");
	CHECK_STR(json_str(out, "pmus.intel_pt.format.psb_period", buf, sizeof(buf)),
	          "config:24-27");
	CHECK_EQ_U64(json_num(out, "pmus.intel_bts.type"), 9);
	CHECK_EQ_U64(json_num(out, "perf.paranoid"), 2);
	CHECK_EQ_U64(json_bool(out, "perf.paranoid_allows_user_trace"), 1);
	CHECK_EQ_U64(json_num(out, "perf.mlock_kb"), 516);
	CHECK_EQ_U64(json_num(out, "perf.online_cpus"), 2);
	CHECK_EQ_U64(json_num(out, "perf.rlimit_memlock"), 65536);
	CHECK_EQ_U64(json_bool(out, "perf.cap_ipc_lock"), 0);
	/* 516 KiB = 129 pages per CPU, x 2 CPUs = 1056768 bytes per user, + 65536 RLIMIT_MEMLOCK
	 * = 1122304; each thread pins 64 KiB + user page + 1 data page = 73728: 15 threads. */
	CHECK_EQ_U64(json_bool(out, "perf.budget.unlimited"), 0);
	CHECK_EQ_U64(json_num(out, "perf.budget.user_bytes"), 1056768);
	CHECK_EQ_U64(json_num(out, "perf.budget.total_bytes"), 1122304);
	CHECK_EQ_U64(json_num(out, "perf.budget.per_thread_bytes"), 73728);
	CHECK_EQ_U64(json_num(out, "perf.budget.threads"), 15);
	/* pt(0) mtc(9) tsc(10) noretcomp(11) branch(13) mtc_period=3 (14-17) and, for 8 PSBs in
	 * 64 KiB, psb_period=2 (8 KiB, bits 24-27): 0x1 | 0xe00 | 0x2000 | 0xc000 | 0x2000000 */
	CHECK_STR(json_str(out, "perf.intel_pt_config.config", buf, sizeof(buf)), "0x200ee01");
	CHECK_STR(json_str(out, "core.core_pattern", buf, sizeof(buf)), "/var/crash/core.%e.%p");
	CHECK_EQ_U64(json_bool(out, "core.pipe"), 0);
	CHECK(strstr(json_str(out, "core.report_location", buf, sizeof(buf)),
	             "/var/crash/core.%e.%p.ptrec") != NULL);
	CHECK_EQ_U64(json_bool(out, "backends.intel_pt.usable"), 1);
	CHECK_EQ_U64(json_bool(out, "backends.intel_pt.probed"), 0);  /* never with --root */
	CHECK_STR(json_str(out, "verdict.backend", buf, sizeof(buf)), "intel_pt");
	CHECK(json_get(out, "verdict.rejected.intel_pt") == NULL);
	free(out);

	/* The same tree as text: the budget sentence, the filter check and the verdict line. */
	snprintf(args, sizeof(args), "--root '%s' --ring-size 64K", root);
	setenv("PTREC_FILTER", "filter * @ /usr/bin/server", 1);
	out = run_info(args, &st);
	CHECK(out && st == 0);
	if (out) {
		CHECK(strstr(out, "15 threads at ring size 64 KiB") != NULL);
		CHECK(strstr(out, "\n  filter                \"filter * @ /usr/bin/server\": the CPU "
		                  "filters up to 2 address ranges\n") != NULL);
		CHECK(strstr(out, "\nverdict: auto chooses intel_pt\n") != NULL);
		free(out);
	}
	check_same_keys(args);
	unsetenv("PTREC_FILTER");
}

/* Paranoid 3 (Debian default), unprivileged: both perf backends refused with that reason. */
static void test_paranoid_3(const char *root)
{
	char args[4600], buf[1024];
	int st;

	CHECK(fake_sysfs_build(root, FAKE_PT_FULL | FAKE_BTS, 3, 516) == 0);
	fake_sysfs_write(root, "proc/self/status", "CapEff:\t0000000000000000\n");
	fake_sysfs_write(root, "proc/sys/kernel/core_pattern",
	                 "|/usr/share/apport/apport -p%p -s%s -c%c\n");
	snprintf(args, sizeof(args), "--root '%s' --json", root);
	char *out = run_info(args, &st);
	CHECK(out && st == 0);
	if (!out)
		return;
	CHECK(json_valid(out));
	CHECK_EQ_U64(json_num(out, "perf.paranoid"), 3);
	CHECK_EQ_U64(json_bool(out, "perf.paranoid_allows_user_trace"), 0);
	CHECK_EQ_U64(json_bool(out, "backends.intel_pt.usable"), 0);
	CHECK(strstr(json_str(out, "verdict.rejected.intel_pt", buf, sizeof(buf)),
	             "perf_event_paranoid is 3") != NULL);
	CHECK(strstr(json_str(out, "verdict.rejected.intel_bts", buf, sizeof(buf)),
	             "perf_event_paranoid is 3") != NULL);
	CHECK_STR(json_str(out, "verdict.backend", buf, sizeof(buf)), "instrumented");
	CHECK_EQ_U64(json_bool(out, "core.pipe"), 1);
	CHECK(strstr(json_str(out, "core.report_location", buf, sizeof(buf)), "PTREC_DIR") != NULL);
	free(out);

	/* CAP_PERFMON (bit 38) lifts the paranoid restriction. */
	fake_sysfs_write(root, "proc/self/status", "CapEff:\t0000004000000000\n");
	out = run_info(args, &st);
	CHECK(out && st == 0);
	if (out) {
		CHECK_EQ_U64(json_bool(out, "perf.cap_perfmon"), 1);
		CHECK_STR(json_str(out, "verdict.backend", buf, sizeof(buf)), "intel_pt");
		free(out);
	}
	snprintf(args, sizeof(args), "--root '%s'", root);
	check_same_keys(args);
}

/* No mlock budget at all: PT refused for memory; BTS absent; the tree lacks MTC caps. */
static void test_no_budget(const char *root)
{
	char args[4600], buf[1024];
	int st;

	CHECK(fake_sysfs_build(root, FAKE_PT_NO_MTC, 2, 0) == 0);
	fake_sysfs_write(root, "proc/self/status", "CapEff:\t0000000000000000\n");
	set_memlock(0);
	snprintf(args, sizeof(args), "--root '%s' --json", root);
	char *out = run_info(args, &st);
	CHECK(out && st == 0);
	if (!out)
		return;
	CHECK(json_valid(out));
	CHECK_EQ_U64(json_num(out, "perf.budget.threads"), 0);
	CHECK(strstr(json_str(out, "backends.intel_pt.reason", buf, sizeof(buf)),
	             "mlock budget") != NULL);
	CHECK(strstr(json_str(out, "backends.intel_bts.reason", buf, sizeof(buf)),
	             "no intel_bts PMU in sysfs") != NULL);
	CHECK(strstr(json_str(out, "perf.intel_pt_config.summary", buf, sizeof(buf)),
	             "no mtc: caps/mtc=0") != NULL);
	CHECK_STR(json_str(out, "verdict.backend", buf, sizeof(buf)), "instrumented");
	free(out);
	snprintf(args, sizeof(args), "--root '%s'", root);
	check_same_keys(args);
}

/* An empty tree: nothing in sysfs. */
static void test_empty(const char *root)
{
	char args[4600], buf[1024];
	int st;

	snprintf(args, sizeof(args), "--root '%s' --json", root);
	char *out = run_info(args, &st);
	CHECK(out && st == 0);
	if (!out)
		return;
	CHECK(json_valid(out));
	CHECK_EQ_U64(json_bool(out, "pmus.intel_pt.present"), 0);
	CHECK(json_get(out, "perf.paranoid") && !strncmp(json_get(out, "perf.paranoid"), "null", 4));
	CHECK(strstr(json_str(out, "verdict.rejected.intel_pt", buf, sizeof(buf)),
	             "no intel_pt PMU in sysfs") != NULL);
	CHECK_STR(json_str(out, "verdict.backend", buf, sizeof(buf)), "instrumented");
	free(out);

	snprintf(args, sizeof(args), "--root '%s'", root);
	check_same_keys(args);

	out = run_info("--root", &st);
	CHECK_EQ_U64(st, 2);   /* usage error */
	free(out);
	out = run_info("--bogus", &st);
	CHECK_EQ_U64(st, 2);
	free(out);
}

/* ---- arm64 machines: trees shaped like the kernel's (midr_el1 "0x%016llx" per CPU, the
 * cs_etm PMU with its format/ and sinks/, coresight bus devices eteN/trbeN, arm_pmuv3's
 * caps/branches "%d" where BRBE was probed) ------------------------------------------------- */

/* `ptrec info --root ROOT --json` of an arm64 tree: exit 0, valid JSON, machine aarch64.
 * Returns the output (malloc'd) or NULL. */
static char *arm_json(const char *root)
{
	char args[4600], buf[64];
	int st;

	snprintf(args, sizeof(args), "--root '%s' --json", root);
	char *out = run_info(args, &st);
	CHECK(out && st == 0);
	if (out) {
		CHECK(json_valid(out));
		CHECK_STR(json_str(out, "machine", buf, sizeof(buf)), "aarch64");
	}
	return out;
}

static void write_midr(const char *root, int cpu, const char *midr)
{
	char rel[128];

	snprintf(rel, sizeof(rel), "sys/devices/system/cpu/cpu%d/regs/identification/midr_el1", cpu);
	CHECK(fake_sysfs_write(root, rel, midr) == 0);
}

/* A cloud VM on Neoverse N1 (Graviton2-like): a virtual PMU without BRBE, no CoreSight. */
static void test_arm_vm(const char *root)
{
	char args[4600], buf[1024];
	int st;

	CHECK(fake_sysfs_build(root, 0, 2, 516) == 0);
	fake_sysfs_write(root, "proc/self/status", "CapEff:\t0000000000000000\n");
	write_midr(root, 0, "0x00000000413fd0c1\n");
	write_midr(root, 1, "0x00000000413fd0c1\n");
	fake_sysfs_write(root, "sys/bus/event_source/devices/armv8_pmuv3_0/type", "8\n");
	fake_sysfs_write(root, "sys/bus/event_source/devices/armv8_pmuv3_0/caps/slots",
	                 "0x00000008\n");
	fake_sysfs_write(root, "sys/bus/event_source/devices/software/type", "1\n");
	char *out = arm_json(root);
	if (!out)
		return;
	CHECK_STR(json_str(out, "cpu.source", buf, sizeof(buf)), "sysfs");
	CHECK_EQ_U64(json_num(out, "cpu.cpus"), 2);
	/* 0x413fd0c1: implementer 0x41 (Arm), variant 3, architecture 0xf, part 0xd0c, rev 1 */
	CHECK_STR(json_str(out, "cpu.midr", buf, sizeof(buf)), "0x413fd0c1");
	CHECK_STR(json_str(out, "cpu.implementer", buf, sizeof(buf)), "0x41");
	CHECK_EQ_U64(json_num(out, "cpu.variant"), 3);
	CHECK_EQ_U64(json_num(out, "cpu.architecture"), 15);
	CHECK_STR(json_str(out, "cpu.part", buf, sizeof(buf)), "0xd0c");
	CHECK_EQ_U64(json_num(out, "cpu.revision"), 1);
	CHECK_STR(json_str(out, "cpu.name", buf, sizeof(buf)), "Arm Neoverse N1 r3p1");
	CHECK_STR(json_str(out, "cpu.other_kinds", buf, sizeof(buf)), "");
	CHECK(json_get(out, "pmus.intel_pt") == NULL);  /* no Intel PMUs on an arm64 machine */
	CHECK_EQ_U64(json_bool(out, "pmus.cs_etm.present"), 0);
	CHECK_EQ_U64(json_num(out, "pmus.cpu_pmus.armv8_pmuv3_0.type"), 8);
	CHECK_EQ_U64(json_num(out, "pmus.cpu_pmus.armv8_pmuv3_0.branches"), 0);
	CHECK(json_get(out, "pmus.cpu_pmus.software") == NULL);
	CHECK_EQ_U64(json_num(out, "trace_units.ete"), 0);
	CHECK_EQ_U64(json_num(out, "trace_units.trbe"), 0);
	CHECK_EQ_U64(json_bool(out, "trace_units.brbe"), 0);
	CHECK_EQ_U64(json_num(out, "perf.paranoid"), 2);
	CHECK(strstr(json_str(out, "verdict.rejected.intel_pt", buf, sizeof(buf)),
	             "this is an aarch64 machine (Arm Neoverse N1 r3p1)") != NULL);
	CHECK(strstr(json_str(out, "verdict.rejected.coresight", buf, sizeof(buf)),
	             "no cs_etm PMU in sysfs") != NULL);
	CHECK(strstr(json_str(out, "verdict.rejected.brbe", buf, sizeof(buf)),
	             "armv8_pmuv3_0 shows no caps/branches") != NULL);
	CHECK_EQ_U64(json_bool(out, "backends.coresight.usable"), 0);
	CHECK_EQ_U64(json_bool(out, "backends.instrumented.usable"), 1);
	CHECK_STR(json_str(out, "verdict.backend", buf, sizeof(buf)), "instrumented");
	free(out);

	snprintf(args, sizeof(args), "--root '%s'", root);
	out = run_info(args, &st);
	CHECK(out && st == 0);
	if (out) {
		CHECK(strstr(out, "\n  name                  Arm Neoverse N1 r3p1\n") != NULL);
		CHECK(strstr(out, "; coresight rejected: not implemented yet") != NULL);
		free(out);
	}
	check_same_keys(args);
}

/* A big.LITTLE board with everything: 4 Cortex-A520 and 4 Cortex-A720 (cpu10..13, to check
 * that CPUs are taken in number order), ETE and TRBE on each, BRBE in both PMUs. */
static void test_arm_board(const char *root)
{
	static const int cpus[] = {0, 1, 2, 3, 10, 11, 12, 13};
	char args[4600], buf[1024], rel[256];

	CHECK(fake_sysfs_build(root, 0, 2, 516) == 0);
	fake_sysfs_write(root, "sys/devices/system/cpu/cpufreq/policy0/scaling_cur_freq", "1\n");
	for (int i = 0; i < 8; i++) {
		write_midr(root, cpus[i], i < 4 ? "0x00000000410fd800\n" : "0x00000000410fd811\n");
		snprintf(rel, sizeof(rel), "sys/bus/coresight/devices/ete%d/cpu", i);
		fake_sysfs_write(root, rel, "0\n");
		snprintf(rel, sizeof(rel), "sys/bus/coresight/devices/trbe%d/align", i);
		fake_sysfs_write(root, rel, "0x40\n");
		snprintf(rel, sizeof(rel), "sys/bus/event_source/devices/cs_etm/sinks/trbe%d", i);
		fake_sysfs_write(root, rel, "0x1a2b3c\n");
	}
	fake_sysfs_write(root, "sys/bus/coresight/devices/funnel0/enable_sink", "0\n");
	fake_sysfs_write(root, "sys/bus/event_source/devices/cs_etm/type", "12\n");
	fake_sysfs_write(root, "sys/bus/event_source/devices/cs_etm/format/cycacc", "config:12\n");
	fake_sysfs_write(root, "sys/bus/event_source/devices/cs_etm/format/timestamp",
	                 "config:28\n");
	fake_sysfs_write(root, "sys/bus/event_source/devices/cs_etm/format/sinkid",
	                 "config2:0-31\n");
	fake_sysfs_write(root, "sys/bus/event_source/devices/armv9_cortex_a520/type", "10\n");
	fake_sysfs_write(root, "sys/bus/event_source/devices/armv9_cortex_a520/caps/branches",
	                 "32\n");
	fake_sysfs_write(root, "sys/bus/event_source/devices/armv9_cortex_a720/type", "11\n");
	fake_sysfs_write(root, "sys/bus/event_source/devices/armv9_cortex_a720/caps/branches",
	                 "64\n");
	char *out = arm_json(root);
	if (!out)
		return;
	CHECK_EQ_U64(json_num(out, "cpu.cpus"), 8);
	CHECK_STR(json_str(out, "cpu.name", buf, sizeof(buf)), "Arm Cortex-A520 r0p0");
	CHECK_STR(json_str(out, "cpu.other_kinds", buf, sizeof(buf)),
	          "0x410fd811 Arm Cortex-A720 r0p1 on 4 CPUs");
	CHECK_EQ_U64(json_bool(out, "pmus.cs_etm.present"), 1);
	CHECK_EQ_U64(json_num(out, "pmus.cs_etm.type"), 12);
	CHECK_STR(json_str(out, "pmus.cs_etm.format.sinkid", buf, sizeof(buf)), "config2:0-31");
	CHECK_STR(json_str(out, "pmus.cs_etm.sinks", buf, sizeof(buf)),
	          "trbe0 trbe1 trbe2 trbe3 trbe4 trbe5 trbe6 trbe7");
	CHECK_EQ_U64(json_num(out, "pmus.cpu_pmus.armv9_cortex_a520.branches"), 32);
	CHECK_EQ_U64(json_num(out, "pmus.cpu_pmus.armv9_cortex_a720.type"), 11);
	CHECK_EQ_U64(json_num(out, "trace_units.ete"), 8);
	CHECK_EQ_U64(json_num(out, "trace_units.etm"), 0);
	CHECK_EQ_U64(json_num(out, "trace_units.trbe"), 8);
	CHECK_EQ_U64(json_bool(out, "trace_units.brbe"), 1);
	CHECK(strstr(json_str(out, "verdict.rejected.coresight", buf, sizeof(buf)),
	             "this machine has cs_etm (8 ETE, 0 ETM trace units, 8 TRBE per-CPU sinks)")
	      != NULL);
	CHECK(strstr(json_str(out, "verdict.rejected.brbe", buf, sizeof(buf)),
	             "armv9_cortex_a720 keeps 64 branch records") != NULL);
	CHECK_STR(json_str(out, "verdict.backend", buf, sizeof(buf)), "instrumented");
	free(out);
	snprintf(args, sizeof(args), "--root '%s'", root);
	check_same_keys(args);
}

/* No midr_el1 files: the MIDR from /proc/cpuinfo (an AmpereOne, 0xc00fac30: implementer 0xc0,
 * part 0xac3); a block without its CPU part line counts no CPU. */
static void test_arm_cpuinfo(const char *root)
{
	static const char block[] = "processor\t: %d\nBogoMIPS\t: 2000.00\nFeatures\t: fp asimd "
		"evtstrm aes pmull sha1 sha2 crc32 atomics\nCPU implementer\t: 0xc0\nCPU "
		"architecture: 8\nCPU variant\t: 0x0\nCPU part\t: 0xac3\nCPU revision\t: 0\n\n";
	char args[4600], buf[1024], text[2048];
	size_t n = 0;

	for (int i = 0; i < 3; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, block, i);
	n += (size_t)snprintf(text + n, sizeof(text) - n, "processor\t: 3\nCPU implementer\t: "
	                      "0xc0\nCPU variant\t: 0x0\nCPU revision\t: 0\n");
	CHECK(n < sizeof(text));
	CHECK(fake_sysfs_write(root, "proc/cpuinfo", text) == 0);
	char *out = arm_json(root);
	if (!out)
		return;
	CHECK_STR(json_str(out, "cpu.source", buf, sizeof(buf)), "cpuinfo");
	CHECK_EQ_U64(json_num(out, "cpu.cpus"), 3);
	CHECK_STR(json_str(out, "cpu.midr", buf, sizeof(buf)), "0xc00fac30");
	CHECK_STR(json_str(out, "cpu.name", buf, sizeof(buf)), "Ampere AmpereOne r0p0");
	CHECK(strstr(json_str(out, "verdict.rejected.brbe", buf, sizeof(buf)),
	             "no arm CPU PMU") != NULL);
	free(out);
	snprintf(args, sizeof(args), "--root '%s'", root);
	check_same_keys(args);
}

/* The real machine: exit 0, a verdict, and the truth about PT here. */
static void test_this_machine(void)
{
	struct stat sb;
	int st;
	char *out = run_info("", &st);

	CHECK(out != NULL);
	if (!out)
		return;
	CHECK_EQ_U64(st, 0);
	const char *v = strstr(out, "\nverdict: auto chooses ");
	CHECK(v != NULL);
	if (v) {
		const char *line_end = strchr(v + 1, '\n');
		CHECK(line_end && line_end[1] == '\0');   /* the verdict is the final line */
		printf("%.*s\n", line_end ? (int)(line_end - v - 1) : 200, v + 1);
	}
#if defined(__aarch64__)
	/* an aarch64 build describes an aarch64 machine, whatever its sysfs (under qemu-user:
	 * the x86-64 host's, where no MIDR is found) */
	(void)sb;
	CHECK(strstr(out, "\nmachine                 aarch64\n") != NULL);
	CHECK(strstr(out, "intel_pt rejected: Intel PT is an x86-64 feature: this is an aarch64 "
	             "machine") != NULL);
	CHECK(strstr(out, "; coresight rejected: ") != NULL);
	CHECK(v && !strncmp(v, "\nverdict: auto chooses instrumented", 35));
#else
	CHECK(strstr(out, "\nmachine                 x86-64\n") != NULL);
	if (stat("/sys/bus/event_source/devices/intel_pt", &sb) != 0) {
		/* No PMU here: PT must be rejected with the sysfs fact, never chosen. */
		CHECK(strstr(out, "intel_pt rejected: no intel_pt PMU in sysfs") != NULL);
		CHECK(v && strncmp(v, "\nverdict: auto chooses intel_pt", 31) != 0);
	}
#endif
	free(out);

	out = run_info("--json", &st);
	CHECK(out && st == 0 && json_valid(out));
	free(out);
	check_same_keys("");
}

int main(void)
{
	char a[4096], b[4096], c[4096], d[4096], e[4096], f[4096], g[4096];
	struct rlimit saved;

	if (!getenv("PTREC_TOOL"))
		SKIP("PTREC_TOOL is not set (run through make check)");
	if (fake_sysfs_tmpdir(a, sizeof(a)) || fake_sysfs_tmpdir(b, sizeof(b)) ||
	    fake_sysfs_tmpdir(c, sizeof(c)) || fake_sysfs_tmpdir(d, sizeof(d)) ||
	    fake_sysfs_tmpdir(e, sizeof(e)) || fake_sysfs_tmpdir(f, sizeof(f)) ||
	    fake_sysfs_tmpdir(g, sizeof(g)))
		SKIP("cannot create a temporary directory: %s", strerror(errno));
	getrlimit(RLIMIT_MEMLOCK, &saved);
	test_pt_machine(a);
	test_paranoid_3(b);
	test_no_budget(c);
	setrlimit(RLIMIT_MEMLOCK, &saved);
	test_empty(d);
	test_arm_vm(e);
	test_arm_board(f);
	test_arm_cpuinfo(g);
	test_this_machine();
	fake_sysfs_remove(a);
	fake_sysfs_remove(b);
	fake_sysfs_remove(c);
	fake_sysfs_remove(d);
	fake_sysfs_remove(e);
	fake_sysfs_remove(f);
	fake_sysfs_remove(g);
	return check_done();
}
