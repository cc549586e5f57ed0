/* cmd_list.c — `ptrec list [DIR...]`: the crash and snapshot dumps found in DIRs (default: the
 * places a crash report of this environment may go, see report_place.c), newest first, one
 * line each: time (UTC), event or signal, program, pid, dump path, and whether a report
 * (DUMP.txt) lies next to it (dump_scan.c finds them). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/safe_str.h"
#include "report/report.h"
#include "tool/tool.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: ptrec list [DIR...]\n"
	        "  Lists ptrec dumps, newest first: time (UTC), event, program, pid, path, and\n"
	        "  whether the report DUMP.txt is there.  Without DIR: the places a crash report\n"
	        "  of this environment may go (PTREC_DIR, next to the core file, STATE_DIRECTORY,\n"
	        "  LOGS_DIRECTORY, the cwd, ~/.local/state/ptrec, /var/tmp, /tmp).\n");
}

int cmd_list(int argc, char **argv)
{
	struct tool_dumps all = {0};
	static const struct option opts[] = {TOOL_OPT_HELP, TOOL_OPT_LAST};
	struct tool_args a = TOOL_ARGS_INIT(argc, argv, opts, usage);
	int ndirs = 0;

	for (int o; (o = tool_getopt(&a)) != TOOL_ARGS_END;) {
		if (o == TOOL_ARGS_STOP) {
			tool_dumps_free(&all);
			return a.status;
		}
		ndirs++; /* TOOL_ARGS_OPERAND */
		if (tool_dumps_add_dir(&all, a.arg) != 0)
			tool_error(a.arg, -1, "cannot list: %s", strerror(errno));
	}
	if (!ndirs)
		tool_dumps_add_places(&all);
	tool_dumps_sort(&all);
	for (size_t i = 0; i < all.n; i++) {
		const struct ptrec_dump_process *p = &all.v[i].p;
		static char path[4 * 8192 + 1];
		char when[32], comm[4 * sizeof(p->comm) + 1];
		struct ptrec_sbuf b;
		time_t t = (time_t)p->time_sec;
		struct tm tm;

		if (!gmtime_r(&t, &tm) || !strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm))
			snprintf(when, sizeof(when), "%" PRId64, p->time_sec);
		ptrec_sbuf_init(&b, comm, sizeof(comm));
		ptrec_sbuf_escaped(&b, p->comm[0] ? p->comm : "?");
		ptrec_sbuf_init(&b, path, sizeof(path));
		ptrec_sbuf_escaped(&b, all.v[i].path);
		printf("%s  %-8s %-16s %-8" PRIu32 " %s%s\n", when,
		       p->signo ? ptrec_report_signal_name(p->signo)
		                : ptrec_report_event_name(p->event),
		       comm, p->pid, path, all.v[i].has_report ? "  (report .txt)" : "");
	}
	if (!all.n)
		fprintf(stderr, "ptrec: list: no dumps found\n");
	tool_dumps_free(&all);
	return TOOL_EXIT_OK;
}
