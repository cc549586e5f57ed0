/* ptrec.c — the ptrec command-line tool: subcommand dispatch. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "ptrec.h"
#include "tool/tool.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{"info", cmd_info, "report whether and how the recorder works on this machine"},
	{"packets", cmd_packets, "print the Intel PT packets of a trace, one per line"},
	{"decode", cmd_decode, "decode an Intel PT trace into branches or instructions"},
	{"report", cmd_report, "write the report of a ptrec dump"},
	{"selftest", cmd_selftest, "record and decode a known workload with each backend"},
	{"list", cmd_list, "list recent dumps, newest first"},
	{"cflags", cmd_cflags, "print the cheapest instrumentation flags for $CC"},
	{"check", cmd_check, "say whether a program or library records for the instrumented backend"},
	{"run", cmd_run, "run a program with the recorder preloaded (no rebuild)"},
	{"minidump", cmd_minidump, "write a ptrec dump as a Breakpad minidump"},
	{"upload", cmd_upload, "send dumps to a crash server (Sentry, Breakpad/Crashpad)"},
};

static void usage(FILE *out)
{
	fprintf(out, "usage: ptrec COMMAND [ARGS...]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n`ptrec COMMAND --help` describes a command; see ptrec(1).\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return TOOL_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return TOOL_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("ptrec %s\n", ptrec_version());
		return TOOL_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "ptrec: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return TOOL_EXIT_USAGE;
}
