/* cmd_cflags.c — `ptrec cflags`: prints the compiler flags that build a program for the
 * instrumented backend at the lowest cost, for the compiler named by $CC (default cc), found
 * out by asking it which compiler it is (its predefined macros).  doc/instrumented.md says
 * why these flags. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool/tool.h"

/* Which compiler family $CC is. */
enum family { FAM_UNKNOWN, FAM_GCC, FAM_CLANG };

/* Runs `CC -dM -E -x c /dev/null` and looks for the compilers' own macros; *a64 = 1 when it
 * compiles for aarch64. */
static enum family probe(const char *cc, int *a64)
{
	char cmd[4200], line[512];
	enum family f = FAM_UNKNOWN;
	int gnuc = 0;

	*a64 = 0;
	if (snprintf(cmd, sizeof(cmd), "%s -dM -E -x c /dev/null 2>/dev/null", cc) >= (int)sizeof(cmd))
		return FAM_UNKNOWN;
	FILE *p = popen(cmd, "r");
	if (!p)
		return FAM_UNKNOWN;
	while (fgets(line, sizeof(line), p)) {
		if (!strncmp(line, "#define __clang__ ", 18))
			f = FAM_CLANG;
		else if (!strncmp(line, "#define __GNUC__ ", 17))
			gnuc = 1;
		else if (!strncmp(line, "#define __aarch64__ ", 20))
			*a64 = 1;
	}
	if (pclose(p) != 0)
		return FAM_UNKNOWN;
	if (f == FAM_UNKNOWN && gnuc)
		f = FAM_GCC;
	return f;
}

static void usage(FILE *out)
{
	fprintf(out, "usage: ptrec cflags\n\n"
	        "Prints the flags that compile a program for the instrumented backend at the\n"
	        "lowest cost with the compiler named by $CC (default cc): GCC and Clang get\n"
	        "patchable function entries (-fpatchable-function-entry=5; for aarch64, =2),\n"
	        "which ptrec_init turns into calls of the entry hook.  They survive LTO (-flto,\n"
	        "-flto=auto, -flto=thin, -ffat-lto-objects) and are safe on the link line too\n"
	        "(CFLAGS there, as Autotools and CMake do).  Link with\n"
	        "`pkg-config --libs libptrec`.  See doc/instrumented.md.\n");
}

int cmd_cflags(int argc, char **argv)
{
	static const struct option opts[] = {TOOL_OPT_HELP, TOOL_OPT_LAST};
	struct tool_args a = TOOL_ARGS_INIT(argc, argv, opts, usage);
	const char *cc = getenv("CC");

	for (int o; (o = tool_getopt(&a)) != TOOL_ARGS_END;) {
		if (o == TOOL_ARGS_STOP)
			return a.status;
		return tool_extra_operand(&a); /* the compiler comes from $CC */
	}
	if (!cc || !*cc)
		cc = "cc";
	int a64;
	switch (probe(cc, &a64)) {
	/* Patchable entries for both compilers (one hook call per call, returns inferred: half
	 * of what entry and exit hooks cost): five bytes on x86-64 for a call, two NOPs on
	 * aarch64 for `mov x9, x30; bl` (doc/instrumented.md). */
	case FAM_CLANG:
	case FAM_GCC:
		printf(a64 ? "-fpatchable-function-entry=2\n" : "-fpatchable-function-entry=5\n");
		return TOOL_EXIT_OK;
	default:
		tool_error(NULL, -1, "cannot tell which compiler '%s' is (it does not run, or is "
		           "neither GCC nor Clang); set CC to gcc or clang", cc);
		return TOOL_EXIT_INPUT;
	}
}
