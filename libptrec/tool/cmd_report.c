/* cmd_report.c — `ptrec report DUMP [--format text|json|trace] [--branches N]
 * [--threads all|crashed] [--debug-dir DIR]`: reads a dump (never modifies it) and writes its
 * report to stdout. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dump/dump_read.h"
#include "ptrec.h"
#include "report/report.h"
#include "tool/tool.h"

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: ptrec report DUMP [--format text|json|trace] [--branches N]\n"
	        "                         [--threads all|crashed] [--debug-dir DIR]...\n"
	        "Writes the report of a ptrec dump to stdout.\n"
	        "  --format      text (default), json (one object), trace (Chrome trace-event /\n"
	        "                Perfetto JSON timeline of calls per thread)\n"
	        "  --branches N  last branches shown for the crashing thread (default 64; other\n"
	        "                threads show min(N, 16))\n"
	        "  --threads     all (default) or crashed\n"
	        "  --debug-dir   extra directory searched for separate debug files (repeatable)\n");
}

static int parse_uint(const char *s, unsigned *v)
{
	char *end;
	unsigned long x;
	errno = 0;
	x = strtoul(s, &end, 10);
	if (errno || !*s || *end || x > 1000000 || s[0] == '-')
		return -1;
	*v = (unsigned)x;
	return 0;
}

int cmd_report(int argc, char **argv)
{
	struct ptrec_report_options opt;
	enum ptrec_report_format fmt = PTREC_REPORT_TEXT;
	const char *path = NULL;
	const char *dirs[33];
	size_t ndirs = 0;
	struct ptrec_dump_file f;
	struct ptrec_dump dump;
	struct ptrec_dump_error err;
	struct ptrec_report rep;
	int rc, status = TOOL_EXIT_OK;

	ptrec_report_options_init(&opt);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *val = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return TOOL_EXIT_OK;
		} else if (!strcmp(a, "--format")) {
			if (!val)
				goto missing;
			if (!strcmp(val, "text"))
				fmt = PTREC_REPORT_TEXT;
			else if (!strcmp(val, "json"))
				fmt = PTREC_REPORT_JSON;
			else if (!strcmp(val, "trace"))
				fmt = PTREC_REPORT_TRACE;
			else {
				tool_error(NULL, -1, "report: unknown format '%s' (text, json, trace)", val);
				return TOOL_EXIT_USAGE;
			}
			i++;
		} else if (!strcmp(a, "--branches")) {
			if (!val)
				goto missing;
			if (parse_uint(val, &opt.branches)) {
				tool_error(NULL, -1, "report: --branches wants a number 0..1000000, got '%s'",
				           val);
				return TOOL_EXIT_USAGE;
			}
			opt.other_branches = opt.branches < 16 ? opt.branches : 16;
			i++;
		} else if (!strcmp(a, "--threads")) {
			if (!val)
				goto missing;
			if (!strcmp(val, "all"))
				opt.crashed_only = 0;
			else if (!strcmp(val, "crashed"))
				opt.crashed_only = 1;
			else {
				tool_error(NULL, -1, "report: --threads wants all or crashed, got '%s'", val);
				return TOOL_EXIT_USAGE;
			}
			i++;
		} else if (!strcmp(a, "--debug-dir")) {
			if (!val)
				goto missing;
			if (ndirs == 32) {
				tool_error(NULL, -1, "report: at most 32 --debug-dir options");
				return TOOL_EXIT_USAGE;
			}
			dirs[ndirs++] = val;
			i++;
		} else if (a[0] == '-' && a[1]) {
			tool_error(NULL, -1, "report: unknown option '%s'", a);
			usage(stderr);
			return TOOL_EXIT_USAGE;
		} else if (!path) {
			path = a;
		} else {
			tool_error(NULL, -1, "report: one dump at a time ('%s' and '%s')", path, a);
			return TOOL_EXIT_USAGE;
		}
		continue;
missing:
		tool_error(NULL, -1, "report: %s needs a value", a);
		return TOOL_EXIT_USAGE;
	}
	if (!path) {
		usage(stderr);
		return TOOL_EXIT_USAGE;
	}
	dirs[ndirs] = NULL;
	opt.debug_dirs = dirs;
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
