/* cmd_list.c — `ptrec list [DIR...]`: the crash and snapshot dumps found in DIRs (default: the
 * places a crash report of this environment may go, see report_place.c), newest first, one
 * line each: time (UTC), event or signal, program, pid, dump path, and whether a report
 * (DUMP.txt) lies next to it.  Only each file's first bytes are read (header and PROCESS). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/file_open.h"
#include "core/safe_str.h"
#include "dump/dump_read.h"
#include "report/report.h"
#include "tool/tool.h"

#define HEAD_BYTES 4096 /* header + PROCESS record, with room */

/* One dump found. */
struct found {
	char *path;                   /* the dump (malloc'd) */
	int64_t time;                 /* PROCESS time_sec */
	struct ptrec_dump_process p;  /* its PROCESS record */
	int has_report;               /* DUMP.txt exists */
};

/* Reads the PROCESS record of the dump at path.  Returns 0 or -1 (not a readable dump). */
static int read_head(const char *path, struct ptrec_dump_process *p)
{
	static uint8_t head[HEAD_BYTES];
	struct ptrec_dump d;
	struct ptrec_dump_error err;
	struct stat st;
	ssize_t n;
	int fd = ptrec_open_regular(path, &st);

	if (fd < 0)
		return -1;
	n = read(fd, head, sizeof(head));
	close(fd);
	if (n <= 0 || ptrec_dump_parse(head, (size_t)n, &d, &err) != 0)
		return -1;
	*p = d.process;
	ptrec_dump_free(&d);
	return 0;
}

static int add_dir(const char *dir, struct found **all, size_t *n, size_t *cap)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return -1;
	while ((e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);
		char path[8192], txt[8200];
		struct ptrec_dump_process p;
		struct stat st;

		if (len < 7 || strcmp(e->d_name + len - 6, ".ptrec") != 0)
			continue;
		snprintf(path, sizeof(path), "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/",
		         e->d_name);
		if (read_head(path, &p) != 0)
			continue;
		for (size_t i = 0; i < *n; i++)
			if (!strcmp((*all)[i].path, path))
				goto next; /* the same directory listed twice */
		if (*n == *cap) {
			size_t nc = *cap ? *cap * 2 : 32;
			struct found *g = realloc(*all, nc * sizeof(**all));
			if (!g)
				break;
			*all = g;
			*cap = nc;
		}
		struct found *f = &(*all)[*n];
		f->path = strdup(path);
		if (!f->path)
			break;
		f->p = p;
		f->time = (int64_t)p.time_sec;
		snprintf(txt, sizeof(txt), "%s.txt", path);
		f->has_report = lstat(txt, &st) == 0 && S_ISREG(st.st_mode);
		(*n)++;
next:;
	}
	closedir(d);
	return 0;
}

static int newest_first(const void *a, const void *b)
{
	const struct found *x = a, *y = b;
	if (x->time != y->time)
		return x->time > y->time ? -1 : 1;
	return strcmp(x->path, y->path);
}

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
	struct found *all = NULL;
	size_t n = 0, cap = 0;

	static const struct option opts[] = {TOOL_OPT_HELP, TOOL_OPT_LAST};
	struct tool_args a = TOOL_ARGS_INIT(argc, argv, opts, usage);
	const char **dirs = calloc((size_t)argc, sizeof(*dirs)); /* the DIRs given */
	int ndirs = 0;

	if (!dirs) {
		tool_error(NULL, -1, "list: out of memory");
		return TOOL_EXIT_INPUT;
	}
	for (int o; (o = tool_getopt(&a)) != TOOL_ARGS_END;) {
		if (o == TOOL_ARGS_STOP) {
			free(dirs);
			return a.status;
		}
		dirs[ndirs++] = a.arg; /* TOOL_ARGS_OPERAND */
	}
	for (int i = 0; i < ndirs; i++)
		if (add_dir(dirs[i], &all, &n, &cap) != 0)
			tool_error(dirs[i], -1, "cannot list: %s", strerror(errno));
	free(dirs);
	if (!ndirs) {
		struct tool_place t[PTREC_PLACE_COUNT_];
		char pattern[1024];
		long r = ptrec_read_small_file("/proc/sys/kernel/core_pattern", pattern,
		                               sizeof(pattern));
		unsigned np = tool_places(r > 0 ? pattern : NULL, t);
		for (unsigned i = 0; i < np; i++) {
			char dir[4096];
			if (t[i].p.kind == PTREC_PLACE_CORE) {
				const char *slash = strrchr(t[i].p.path, '/');
				const char *pct = strchr(t[i].p.path, '%');
				if (!slash || (pct && pct < slash))
					continue; /* the directory itself depends on the crash */
				snprintf(dir, sizeof(dir), "%.*s", (int)(slash - t[i].p.path + 1),
				         t[i].p.path);
			} else {
				snprintf(dir, sizeof(dir), "%s", t[i].p.path);
			}
			add_dir(dir, &all, &n, &cap);
		}
	}
	if (n)
		qsort(all, n, sizeof(*all), newest_first); /* all is NULL when nothing was found */
	for (size_t i = 0; i < n; i++) {
		const struct ptrec_dump_process *p = &all[i].p;
		static char path[4 * 8192 + 1];
		char when[32], comm[4 * sizeof(p->comm) + 1];
		struct ptrec_sbuf b;
		time_t t = (time_t)all[i].time;
		struct tm tm;

		if (!gmtime_r(&t, &tm) || !strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm))
			snprintf(when, sizeof(when), "%" PRId64, all[i].time);
		ptrec_sbuf_init(&b, comm, sizeof(comm));
		ptrec_sbuf_escaped(&b, p->comm[0] ? p->comm : "?");
		ptrec_sbuf_init(&b, path, sizeof(path));
		ptrec_sbuf_escaped(&b, all[i].path);
		printf("%s  %-8s %-16s %-8" PRIu32 " %s%s\n", when,
		       p->signo ? ptrec_report_signal_name(p->signo)
		                : ptrec_report_event_name(p->event),
		       comm, p->pid, path, all[i].has_report ? "  (report .txt)" : "");
		free(all[i].path);
	}
	if (!n)
		fprintf(stderr, "ptrec: list: no dumps found\n");
	free(all);
	return TOOL_EXIT_OK;
}
