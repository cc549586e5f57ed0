/* cmd_selftest.c — `ptrec selftest [--json]`: proves on this machine that recording and
 * decoding agree.  For each backend (intel_pt, intel_bts, instrumented) a child process starts
 * the recorder with that backend alone, runs the built-in workload (selftest_workload.h),
 * takes a snapshot and exits; the parent decodes the dump the way `ptrec report` does and
 * compares the workload's function entries and returns, in order, with the sequence written
 * out below.  One verdict per backend: PASS, FAIL with the first difference, or SKIP with the
 * reason the backend cannot start here.  Exit status 1 if any backend FAILs.
 *
 * The comparison is at the level every backend records: calls into and returns out of the
 * workload's functions (the conditional shows as which function was called, the indirect call
 * as the table entry reached, the loop as the number of calls). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/branch.h"
#include "dump/dump_read.h"
#include "ptrec.h"
#include "report/json_str.h"
#include "report/report.h"
#include "tool/selftest_workload.h"
#include "tool/tool.h"

#define TRIPS 4  /* loop trip count: wl_even, wl_odd, wl_even, wl_odd */
#define INDEX 2  /* table entry: wl_ind_c */
#define DEPTH 3  /* wl_recurse(3) -> (2) -> (1) -> (0) */

/* What the workload must show, written out by hand from its source. */
static const char *const expected[] = {
	"enter workload",
	"enter wl_even", "exit wl_even",     /* i = 0: the odd test not taken */
	"enter wl_odd", "exit wl_odd",       /* i = 1: taken */
	"enter wl_even", "exit wl_even",     /* i = 2 */
	"enter wl_odd", "exit wl_odd",       /* i = 3; the loop ends after 4 trips */
	"enter wl_ind_c", "exit wl_ind_c",   /* wl_table[2](acc): indirect */
	"enter wl_recurse", "enter wl_recurse", "enter wl_recurse", "enter wl_recurse",
	"exit wl_recurse", "exit wl_recurse", "exit wl_recurse", "exit wl_recurse",
	"exit workload",
};
#define NEXPECTED (sizeof(expected) / sizeof(expected[0]))

enum verdict { V_PASS, V_FAIL, V_SKIP };
static const char *const verdict_name[] = {"PASS", "FAIL", "SKIP"};

struct result {
	enum ptrec_backend backend;
	enum verdict verdict;
	char detail[5120];
};

/* ---- the child: record ------------------------------------------------------------------- */

/* Runs in a fresh child: records the workload with backend b and writes one line to fd:
 * "D<dump path>", or "S<why the backend cannot start>", or "E<what failed>". */
static void record(enum ptrec_backend b, const char *dir, int trips, int fd)
{
	struct ptrec_config cfg;
	struct ptrec_status st;
	char msg[PTREC_REASON_MAX + 4200];

	ptrec_config_init(&cfg);
	cfg.backend = b;
	cfg.dump_dir = dir;
	cfg.ring_size = 64u << 10;
	cfg.flags |= PTREC_F_NO_SIGNALS | PTREC_F_NO_REPORT | PTREC_F_NO_THREADS;
	int rc = ptrec_init(&cfg);
	if (rc) {
		memset(&st, 0, sizeof(st));
		st.struct_size = sizeof(st);
		ptrec_status(&st);
		snprintf(msg, sizeof(msg), "S%s", st.reason[b][0] ? st.reason[b] : ptrec_strerror(rc));
	} else {
		volatile int r = ptrec_selftest_workload(trips, INDEX, DEPTH);
		char path[4096];
		(void)r;
		rc = ptrec_snapshot_path("ptrec selftest", path, sizeof(path));
		if (rc)
			snprintf(msg, sizeof(msg), "Esnapshot failed: %s", ptrec_strerror(rc));
		else
			snprintf(msg, sizeof(msg), "D%s", path);
		ptrec_shutdown();
	}
	if (write(fd, msg, strlen(msg)) < 0)
		_exit(1);
}

/* ---- the parent: decode and compare ------------------------------------------------------- */

/* The workload function containing addr (entry <= addr < next entry or the section end), or
 * NULL.  exact: addr must be an entry. */
static const char *function_at(uint64_t addr, int exact)
{
	size_t n;
	const struct ptrec_selftest_fn *f = ptrec_selftest_functions(&n);
	uintptr_t end = ptrec_selftest_text_end();
	const char *best = NULL;
	uintptr_t best_addr = 0;

	if (addr >= end)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (f[i].addr == addr)
			return f[i].name;
		if (!exact && f[i].addr < addr && f[i].addr >= best_addr) {
			best = f[i].name;
			best_addr = f[i].addr;
		}
	}
	return exact ? NULL : best;
}

/* The workload events among decoded branches, oldest first: "enter F" for a call whose target
 * is F's entry, "exit F" for a return from inside F.  Returns how many (at most max). */
static size_t workload_events(const struct ptrec_branch *br, size_t n, char (*ev)[64],
                              size_t max)
{
	size_t k = 0;

	for (size_t i = 0; i < n && k < max; i++) {
		const char *f = NULL;
		const char *what = NULL;
		if (br[i].kind == PTREC_BR_CALL || br[i].kind == PTREC_BR_IND_CALL) {
			f = function_at(br[i].to, 1);
			what = "enter";
		} else if (br[i].kind == PTREC_BR_RET) {
			f = function_at(br[i].from, 0);
			what = "exit";
		}
		if (f)
			snprintf(ev[k++], sizeof(ev[0]), "%s %s", what, f);
	}
	return k;
}

/* Compares the dump at path with the expected sequence. */
static void judge(const char *path, struct result *res)
{
	struct tool_file file;
	struct ptrec_dump d;
	struct ptrec_dump_error err;
	struct ptrec_report r;
	struct ptrec_report_options opt;
	static char events[4 * NEXPECTED + 64][64];

	res->verdict = V_FAIL;
	if (tool_file_read(path, &file)) {
		snprintf(res->detail, sizeof(res->detail), "%s: unreadable dump", path);
		return;
	}
	if (ptrec_dump_parse(file.data, file.size, &d, &err)) {
		snprintf(res->detail, sizeof(res->detail), "%s: offset 0x%" PRIx64 ": %s", path,
		         err.offset, err.cause);
		tool_file_free(&file);
		return;
	}
	ptrec_report_options_init(&opt);
	opt.crashed_only = 1;
	if (ptrec_report_build(&r, &d, &opt)) {
		snprintf(res->detail, sizeof(res->detail), "%s: cannot build the report", path);
	} else if (r.nthreads == 0) {
		snprintf(res->detail, sizeof(res->detail), "%s: no ring for the recording thread",
		         path);
	} else {
		const struct ptrec_report_thread *t = &r.threads[0];
		size_t n = workload_events(t->branches, t->nbranches, events,
		                           sizeof(events) / sizeof(events[0]));
		size_t i = 0;
		while (i < n && i < NEXPECTED && !strcmp(events[i], expected[i]))
			i++;
		if (i == NEXPECTED && n == NEXPECTED) {
			res->verdict = V_PASS;
			snprintf(res->detail, sizeof(res->detail), "%zu workload calls and returns as "
			         "expected (loop of %d, conditional both ways, indirect call, recursion "
			         "%d deep) among %zu decoded branches", n, TRIPS, DEPTH, t->nbranches);
		} else if (i < n && i < NEXPECTED) {
			snprintf(res->detail, sizeof(res->detail), "event %zu: expected \"%s\", decoded "
			         "\"%s\" (%zu branches decoded%s%s)", i, expected[i], events[i],
			         t->nbranches, t->status ? ": " : "", t->status ? t->status : "");
		} else if (n < NEXPECTED) {
			snprintf(res->detail, sizeof(res->detail), "the decoded sequence ends after %zu "
			         "of %zu events; next expected \"%s\" (%zu branches decoded%s%s)", n,
			         NEXPECTED, expected[n], t->nbranches, t->status ? ": " : "",
			         t->status ? t->status : "");
		} else {
			snprintf(res->detail, sizeof(res->detail), "event %zu: expected the end, decoded "
			         "\"%s\"", i, events[i]);
		}
		if (res->verdict == V_FAIL)
			snprintf(res->detail + strlen(res->detail),
			         sizeof(res->detail) - strlen(res->detail), "; dump kept: %s", path);
	}
	ptrec_report_free(&r);
	ptrec_dump_free(&d);
	tool_file_free(&file);
}

/* Records and judges backend b; the dump lives in dir and is removed after a PASS. */
static void run_backend(enum ptrec_backend b, const char *dir, int trips, struct result *res)
{
	char msg[PTREC_REASON_MAX + 4200];
	int p[2];

	res->backend = b;
	res->verdict = V_FAIL;
	if (pipe(p)) {
		snprintf(res->detail, sizeof(res->detail), "pipe: %s", strerror(errno));
		return;
	}
	fflush(NULL);
	pid_t child = fork();
	if (child < 0) {
		snprintf(res->detail, sizeof(res->detail), "fork: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		return;
	}
	if (child == 0) {
		close(p[0]);
		record(b, dir, trips, p[1]);
		_exit(0);
	}
	close(p[1]);
	size_t n = 0;
	ssize_t k;
	while (n < sizeof(msg) - 1 && (k = read(p[0], msg + n, sizeof(msg) - 1 - n)) > 0)
		n += (size_t)k;
	msg[n] = '\0';
	close(p[0]);
	int st = 0;
	waitpid(child, &st, 0);
	if (n == 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		snprintf(res->detail, sizeof(res->detail), "the recording child %s %d",
		         WIFSIGNALED(st) ? "died of signal" : "exited with", WIFSIGNALED(st)
		         ? WTERMSIG(st) : WEXITSTATUS(st));
		return;
	}
	if (msg[0] == 'S') {
		res->verdict = V_SKIP;
		snprintf(res->detail, sizeof(res->detail), "%s", msg + 1);
	} else if (msg[0] == 'E') {
		snprintf(res->detail, sizeof(res->detail), "%s", msg + 1);
	} else {
		judge(msg + 1, res);
		if (res->verdict == V_PASS)
			unlink(msg + 1);
	}
}

static void usage(FILE *f)
{
	fprintf(f, "usage: ptrec selftest [--json] [--trips N]\n"
	        "  Records a built-in workload with known control flow with each backend\n"
	        "  (intel_pt, intel_bts, instrumented), decodes it and compares its calls and\n"
	        "  returns with the known sequence.  One line per backend: PASS, FAIL with the\n"
	        "  first difference, or SKIP with the reason.  Exit status 1 if any FAILs.\n"
	        "  --json     the same as one JSON object\n"
	        "  --trips N  run the workload's loop N times instead of %d while still expecting\n"
	        "             %d: shows what a FAIL looks like\n", TRIPS, TRIPS);
}

int cmd_selftest(int argc, char **argv)
{
	static const enum ptrec_backend backends[] = {
		PTREC_BACKEND_INTEL_PT, PTREC_BACKEND_INTEL_BTS, PTREC_BACKEND_INSTRUMENTED,
	};
	struct result res[3];
	int json = 0, failed = 0, trips = TRIPS;

	enum { OPT_JSON = 256, OPT_TRIPS };
	static const struct option opts[] = {
		{"json", no_argument, NULL, OPT_JSON},
		{"trips", required_argument, NULL, OPT_TRIPS},
		TOOL_OPT_HELP, TOOL_OPT_LAST,
	};
	struct tool_args a = TOOL_ARGS_INIT(argc, argv, opts, usage);
	unsigned long n;

	for (int o; (o = tool_getopt(&a)) != TOOL_ARGS_END;) {
		switch (o) {
		case TOOL_ARGS_STOP:
			return a.status;
		case OPT_JSON:
			json = 1;
			break;
		case OPT_TRIPS:
			if (tool_opt_number(&a, 0, 1000, &n))
				return TOOL_EXIT_USAGE;
			trips = (int)n;
			break;
		case TOOL_ARGS_OPERAND:
			return tool_extra_operand(&a);
		}
	}
	const char *tmp = getenv("TMPDIR");
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s/ptrec-selftest.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		tool_error(dir, -1, "selftest: cannot create a scratch directory: %s",
		           strerror(errno));
		return TOOL_EXIT_INPUT;
	}
	for (size_t i = 0; i < 3; i++) {
		run_backend(backends[i], dir, trips, &res[i]);
		failed |= res[i].verdict == V_FAIL;
	}
	rmdir(dir); /* fails, and keeps the dumps, when a FAIL left one */

	if (json) {
		printf("{\"ptrec_version\":");
		ptrec_json_str(stdout, ptrec_version());
		printf(",\"results\":[");
		for (size_t i = 0; i < 3; i++) {
			printf("%s{\"backend\":\"%s\",\"verdict\":\"%s\",\"detail\":", i ? "," : "",
			       ptrec_backend_name(res[i].backend), verdict_name[res[i].verdict]);
			ptrec_json_str(stdout, res[i].detail);
			printf("}");
		}
		printf("],\"ok\":%s}\n", failed ? "false" : "true");
	} else {
		for (size_t i = 0; i < 3; i++)
			printf("%-13s %s  %s\n", ptrec_backend_name(res[i].backend),
			       verdict_name[res[i].verdict], res[i].detail);
	}
	return failed ? 1 : TOOL_EXIT_OK;
}
