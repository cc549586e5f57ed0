/* cmd_report.c — `ptrec report DUMP [--format text|json|trace] [--branches N]
 * [--threads all|crashed] [--debug-dir DIR]... [--binary FILE]...`: reads a dump (never
 * modifies it) and writes its report to stdout.  With DEBUGINFOD_URLS set, the debug files and
 * executables the report lacks are fetched by build-id first (tool/debuginfod.h) and the report
 * is built again with them. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "dump/dump_read.h"
#include "ptrec.h"
#include "report/report.h"
#include "tool/debuginfod.h"
#include "tool/tool.h"

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: ptrec report DUMP [--format text|json|trace] [--branches N]\n"
	        "                         [--threads all|crashed] [--debug-dir DIR]...\n"
	        "                         [--binary FILE]...\n"
	        "Writes the report of a ptrec dump to stdout.\n"
	        "  --format      text (default), json (one object), trace (Chrome trace-event /\n"
	        "                Perfetto JSON timeline of calls per thread)\n"
	        "  --branches N  last branches shown for the crashing thread (default 64; other\n"
	        "                threads show min(N, 16))\n"
	        "  --threads     all (default) or crashed\n"
	        "  --debug-dir   extra directory searched for separate debug files (repeatable)\n"
	        "  --binary      the file of a module whose file is gone or was replaced since the\n"
	        "                crash, used when its build-id is the dump's (repeatable)\n"
	        "With DEBUGINFOD_URLS set, missing debug files and executables are fetched by\n"
	        "build-id (debuginfod-find, else curl) into the debuginfod client cache.\n");
}

/* Says on stderr which --binary files have the build-id of no module of the dump (they are not
 * used). */
static void check_binaries(const char *const *bins, const struct ptrec_dump *d)
{
	for (size_t i = 0; bins[i]; i++) {
		struct ptrec_warnings w = {0};
		struct ptrec_elf e;
		int used = 0;
		if (ptrec_elf_open_file(bins[i], &e, &w) != 0) {
			tool_error(bins[i], -1, "--binary: not a readable x86-64 ELF; not used");
			ptrec_warnings_free(&w);
			continue;
		}
		for (size_t k = 0; k < d->nbuildids && !used; k++)
			used = d->buildids[k].id_len == e.build_id_len &&
			       !memcmp(d->buildids[k].id, e.build_id, e.build_id_len);
		if (!used)
			tool_error(bins[i], -1, "--binary: its build-id is not the one of any module "
			           "of the dump; not used");
		ptrec_elf_close(&e);
		ptrec_warnings_free(&w);
	}
}

int cmd_report(int argc, char **argv)
{
	struct ptrec_report_options opt;
	enum ptrec_report_format fmt = PTREC_REPORT_TEXT;
	const char *path = NULL;
	const char *dirs[33], *bins[33];
	size_t ndirs = 0, nbins = 0;
	char cache[4096];
	struct ptrec_dump_file f;
	struct ptrec_dump dump;
	struct ptrec_dump_error err;
	struct ptrec_report rep;
	int rc, status = TOOL_EXIT_OK;

	enum { OPT_FORMAT = 256, OPT_BRANCHES, OPT_THREADS, OPT_DEBUG_DIR, OPT_BINARY };
	static const struct option opts[] = {
		{"format", required_argument, NULL, OPT_FORMAT},
		{"branches", required_argument, NULL, OPT_BRANCHES},
		{"threads", required_argument, NULL, OPT_THREADS},
		{"debug-dir", required_argument, NULL, OPT_DEBUG_DIR},
		{"binary", required_argument, NULL, OPT_BINARY},
		TOOL_OPT_HELP, TOOL_OPT_LAST,
	};
	struct tool_args a = TOOL_ARGS_INIT(argc, argv, opts, usage);
	unsigned long n;

	ptrec_report_options_init(&opt);
	for (int o; (o = tool_getopt(&a)) != TOOL_ARGS_END;) {
		switch (o) {
		case TOOL_ARGS_STOP:
			return a.status;
		case OPT_FORMAT:
			if (!strcmp(a.arg, "text"))
				fmt = PTREC_REPORT_TEXT;
			else if (!strcmp(a.arg, "json"))
				fmt = PTREC_REPORT_JSON;
			else if (!strcmp(a.arg, "trace"))
				fmt = PTREC_REPORT_TRACE;
			else
				return tool_bad_value(&a, "text, json or trace");
			break;
		case OPT_BRANCHES:
			if (tool_opt_number(&a, 0, 1000000, &n))
				return TOOL_EXIT_USAGE;
			opt.branches = (unsigned)n;
			opt.other_branches = opt.branches < 16 ? opt.branches : 16;
			break;
		case OPT_THREADS:
			if (!strcmp(a.arg, "all"))
				opt.crashed_only = 0;
			else if (!strcmp(a.arg, "crashed"))
				opt.crashed_only = 1;
			else
				return tool_bad_value(&a, "all or crashed");
			break;
		case OPT_DEBUG_DIR:
			if (ndirs == 32)
				return tool_usage_error(&a, "at most 32 --debug-dir options");
			dirs[ndirs++] = a.arg;
			break;
		case OPT_BINARY:
			if (nbins == 32)
				return tool_usage_error(&a, "at most 32 --binary options");
			bins[nbins++] = a.arg;
			break;
		case TOOL_ARGS_OPERAND:
			if (path)
				return tool_usage_error(&a, "one dump at a time ('%s' and '%s')", path,
				                        a.arg);
			path = a.arg;
			break;
		}
	}
	if (!path)
		return tool_no_operand(&a, "DUMP");
	dirs[ndirs] = NULL;
	bins[nbins] = NULL;
	opt.debug_dirs = dirs;
	opt.binaries = bins;
	opt.debuginfod_cache = tool_debuginfod_cache(cache, sizeof(cache));
	opt.dump_path = path;

	rc = ptrec_dump_load(path, &f, &err);
	if (!rc)
		rc = ptrec_dump_parse(f.data, f.size, &dump, &err);
	if (rc == -PTREC_EIO) {
		tool_error(path, -1, "%s", err.cause);
		return TOOL_EXIT_INPUT;
	}
	if (rc) {
		tool_error(path, (long long)err.offset, "%s (%s)", err.cause, ptrec_strerror(rc));
		ptrec_dump_file_free(&f);
		return TOOL_EXIT_INPUT;
	}
	rc = ptrec_report_build(&rep, &dump, &opt);
	if (!rc && opt.debuginfod_cache) {
		struct ptrec_warnings notes = {0};
		if (tool_debuginfod_fetch(&rep, opt.debuginfod_cache, &notes)) {
			ptrec_report_free(&rep);
			rc = ptrec_report_build(&rep, &dump, &opt);
		}
		/* what was fetched and what no server had: in the report's warnings */
		for (size_t i = 0; !rc && i < notes.count; i++)
			ptrec_warn(&rep.warnings, "%s", notes.items[i]);
		ptrec_warnings_free(&notes);
	}
	if (!rc)
		check_binaries(bins, &dump);
	if (rc) {
		tool_error(path, -1, "cannot build the report: %s", ptrec_strerror(rc));
		status = TOOL_EXIT_INPUT;
	} else {
		switch (fmt) {
		case PTREC_REPORT_JSON: rc = ptrec_report_json(&rep, stdout); break;
		case PTREC_REPORT_TRACE: rc = ptrec_report_trace(&rep, stdout); break;
		default: rc = ptrec_report_text(&rep, stdout); break;
		}
		if (fflush(stdout) || rc) {
			tool_error(NULL, -1, "report: writing the report failed: %s", strerror(errno));
			status = TOOL_EXIT_INPUT;
		} else if (!dump.complete) {
			status = TOOL_EXIT_GAPS; /* the report is written but the dump was cut short */
		}
	}
	ptrec_report_free(&rep);
	ptrec_dump_free(&dump);
	ptrec_dump_file_free(&f);
	return status;
}
