/* cmd_info.c — `ptrec info`.  Placeholder until its issue lands: says so and fails. */
#include "config.h"

#include <stdio.h>

#include "tool.h"

int cmd_info(int argc, char **argv)
{
	(void)argc;
	fprintf(stderr, "ptrec: %s: not implemented in this build\n", argv[0]);
	return TOOL_EXIT_USAGE;
}
