/* cmd_minidump.c — `ptrec minidump DUMP [-o FILE] [--branches N] [--debug-dir DIR]`: writes
 * the Breakpad minidump of a ptrec dump (report/minidump.h, doc/minidump.md) to a new file,
 * DUMP.dmp unless -o names another ("-o -": stdout).  Never modifies the dump and never
 * replaces an existing file. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptrec.h"
#include "report/minidump.h"
#include "tool/tool.h"

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: ptrec minidump DUMP [-o FILE] [--branches N] [--debug-dir DIR]...\n"
	        "Writes the Breakpad minidump of a ptrec dump (for minidump_stackwalk, lldb and\n"
	        "crash servers) to a new file, created 0600; an existing file is never replaced.\n"
	        "  -o, --output FILE  where (default DUMP.dmp; '-': stdout)\n"
	        "  --branches N       last branches of the crashing thread kept in the minidump's\n"
	        "                     branch stream (default 64; other threads min(N, 16))\n"
	        "  --debug-dir DIR    extra directory searched for separate debug files\n"
	        "                     (repeatable)\n");
}

int cmd_minidump(int argc, char **argv)
{
	struct ptrec_report_options opt;
	const char *path = NULL, *output = NULL;
	const char *dirs[33];
	size_t ndirs = 0;
	struct ptrec_minidump md;
	struct ptrec_dump_error err;
	char *defname = NULL;
	int complete = 1, rc;

	enum { OPT_OUTPUT = 256, OPT_BRANCHES, OPT_DEBUG_DIR };
	static const struct option opts[] = {
		{"output", required_argument, NULL, OPT_OUTPUT},
		{"branches", required_argument, NULL, OPT_BRANCHES},
		{"debug-dir", required_argument, NULL, OPT_DEBUG_DIR},
		TOOL_OPT_HELP, TOOL_OPT_LAST,
	};
	/* -o is --output: the shared option reader knows long options and -h only. */
	char **args = calloc((size_t)argc + 1, sizeof(*args));
	if (!args) {
		tool_error(NULL, -1, "minidump: out of memory");
		return TOOL_EXIT_INPUT;
	}
	for (int i = 0, rest = 0; i < argc; i++) {
		rest |= !strcmp(argv[i], "--");
		args[i] = !rest && !strcmp(argv[i], "-o") ? (char *)"--output" : argv[i];
	}
	struct tool_args a = TOOL_ARGS_INIT(argc, args, opts, usage);
	unsigned long n;

	ptrec_report_options_init(&opt);
	for (int o; (o = tool_getopt(&a)) != TOOL_ARGS_END;) {
		switch (o) {
		case TOOL_ARGS_STOP:
			free(args);
			return a.status;
		case OPT_OUTPUT:
			output = a.arg;
			break;
		case OPT_BRANCHES:
			if (tool_opt_number(&a, 0, 1000000, &n)) {
				free(args);
				return TOOL_EXIT_USAGE;
			}
			opt.branches = (unsigned)n;
			opt.other_branches = opt.branches < 16 ? opt.branches : 16;
			break;
		case OPT_DEBUG_DIR:
			if (ndirs == 32) {
				free(args);
				return tool_usage_error(&a, "at most 32 --debug-dir options");
			}
			dirs[ndirs++] = a.arg;
			break;
		case TOOL_ARGS_OPERAND:
			if (path) {
				free(args);
				return tool_usage_error(&a, "one dump at a time ('%s' and '%s')", path,
				                        a.arg);
			}
			path = a.arg;
			break;
		}
	}
	if (!path) {
		rc = tool_no_operand(&a, "DUMP");
		free(args);
		return rc;
	}
	free(args);
	dirs[ndirs] = NULL;
	opt.debug_dirs = dirs;
	if (!output) {
		size_t len = strlen(path);
		defname = malloc(len + 5);
		if (!defname) {
			tool_error(NULL, -1, "minidump: out of memory");
			return TOOL_EXIT_INPUT;
		}
		memcpy(defname, path, len);
		memcpy(defname + len, ".dmp", 5);
		output = defname;
	}

	rc = ptrec_minidump_from_dump(path, &opt, &md, &err, &complete);
	if (rc) {
		if (rc != -PTREC_EFORMAT && rc != -PTREC_ETRUNC)
			tool_error(path, -1, "%s", err.cause);
		else
			tool_error(path, (long long)err.offset, "%s (%s)", err.cause,
			           ptrec_strerror(rc));
		free(defname);
		return TOOL_EXIT_INPUT;
	}
	if (!strcmp(output, "-")) {
		rc = ptrec_minidump_write_fd(&md, 1);
	} else {
		rc = ptrec_minidump_save(&md, output);
	}
	if (rc) {
		tool_error(strcmp(output, "-") ? output : "stdout", -1, "cannot write the minidump: %s%s",
		           strerror(errno),
		           errno == EEXIST ? " (an existing file is never replaced)" : "");
		ptrec_minidump_free(&md);
		free(defname);
		return TOOL_EXIT_INPUT;
	}
	if (!complete)
		tool_error(path, -1, "the dump was cut short (no END record): the minidump holds "
		           "what it had");
	ptrec_minidump_free(&md);
	free(defname);
	return complete ? TOOL_EXIT_OK : TOOL_EXIT_GAPS;
}
