/* cmd_packets.c — `ptrec packets`.  Placeholder until its issue lands: says so and fails. */
#include "config.h"

#include <stdio.h>

#include "tool.h"

int cmd_packets(int argc, char **argv)
{
	(void)argc;
	fprintf(stderr, "ptrec: %s: not implemented in this build\n", argv[0]);
	return TOOL_EXIT_USAGE;
}
