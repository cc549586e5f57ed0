/* cmd_list.c — `ptrec list [--group] [DIR...]`: the crash and snapshot dumps found in DIRs
 * (default: the places a crash report of this environment may go, see report_place.c), newest
 * first, one line each: time (UTC), event or signal, program, pid, dump path, and whether a
 * report (DUMP.txt) lies next to it (dump_scan.c finds them).  With --group, one line per
 * program and crash signature (report/signature.h): count, first and last seen, and the
 * newest dump as an example; the signature comes from the report's header, or, without a
 * report, from the dump (its report is built). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/file_open.h"
#include "core/safe_str.h"
#include "ptrec.h"
#include "report/report.h"
#include "report/signature.h"
#include "tool/tool.h"

#define REPORT_HEAD (16u << 10) /* a report's signature line lies within its first bytes */
#define SIG_TEXT (4 * PTREC_SIGNATURE_MAX + 1) /* a signature as printed (escaped) */

/* The "signature:" line of the report at txt, in sig (SIG_TEXT bytes).  Returns 0, or -1 when
 * it is unreadable or has none (a report of an older ptrec). */
static int report_signature(const char *txt, char *sig)
{
	static char head[REPORT_HEAD + 1];
	struct stat st;
	int fd = ptrec_open_regular(txt, &st);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, head, REPORT_HEAD);
	close(fd);
	if (n <= 0)
		return -1;
	head[n] = '\0';
	const char *l = strstr(head, "\nsignature: ");
	if (!l)
		return -1;
	l += 12;
	size_t len = strcspn(l, "\n");
	if (!l[len] || len >= SIG_TEXT)
		return -1; /* cut short */
	memcpy(sig, l, len);
	sig[len] = '\0';
	return 0;
}

/* The signature of dump d as printed (malloc'd): from its report, else from the dump.  NULL
 * when out of memory. */
static char *find_signature(const struct tool_dump *d)
{
	char txt[8200], raw[PTREC_SIGNATURE_MAX], sig[SIG_TEXT];
	struct ptrec_sbuf b;

	snprintf(txt, sizeof(txt), "%s.txt", d->path);
	if (!d->has_report || report_signature(txt, sig) != 0) {
		int rc = ptrec_dump_signature(d->path, NULL, raw, sizeof(raw));
		if (rc) {
			tool_error(d->path, -1, "no signature: %s", ptrec_strerror(rc));
			snprintf(raw, sizeof(raw), "(unreadable dump)");
		}
		ptrec_sbuf_init(&b, sig, sizeof(sig));
		ptrec_sbuf_escaped(&b, raw); /* as the text report prints it */
	}
	return strdup(sig);
}

/* A dump with its signature, for --group. */
struct signed_dump {
	const struct tool_dump *d;
	char *sig;
};

/* 0 when x and y are crashes of one program with one signature. */
static int group_cmp(const struct signed_dump *x, const struct signed_dump *y)
{
	int c = strncmp(x->d->p.comm, y->d->p.comm, sizeof(x->d->p.comm));
	return c ? c : strcmp(x->sig, y->sig);
}

/* By program, then signature, then newest first. */
static int by_group(const void *a, const void *b)
{
	const struct signed_dump *x = a, *y = b;
	int c = group_cmp(x, y);
	if (c)
		return c;
	if (x->d->p.time_sec != y->d->p.time_sec)
		return x->d->p.time_sec > y->d->p.time_sec ? -1 : 1;
	return strcmp(x->d->path, y->d->path);
}

/* One group: v[first .. first + count - 1], newest first. */
struct group {
	size_t first, count;
	int64_t oldest, newest;
};

/* Most crashes first, then the most recent. */
static int most_first(const void *a, const void *b)
{
	const struct group *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if (x->newest != y->newest)
		return x->newest > y->newest ? -1 : 1;
	return x->first < y->first ? -1 : 1;
}

static void utc(int64_t t, char *out, size_t cap)
{
	time_t tt = (time_t)t;
	struct tm tm;
	if (!gmtime_r(&tt, &tm) || !strftime(out, cap, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(out, cap, "%" PRId64, t);
}

/* Prints one line per program and signature: count, first and last seen (UTC), program,
 * signature, and the newest dump.  Returns 0, or -1 when out of memory. */
static int print_groups(const struct tool_dumps *all)
{
	struct signed_dump *v = calloc(all->n ? all->n : 1, sizeof(*v));
	struct group *g = calloc(all->n ? all->n : 1, sizeof(*g));
	size_t ng = 0;
	int rc = -1;

	if (!v || !g)
		goto out;
	for (size_t i = 0; i < all->n; i++) {
		v[i].d = &all->v[i];
		if (!(v[i].sig = find_signature(&all->v[i])))
			goto out;
	}
	if (all->n)
		qsort(v, all->n, sizeof(*v), by_group);
	for (size_t i = 0; i < all->n; i++) {
		int64_t t = v[i].d->p.time_sec;
		if (!ng || group_cmp(&v[g[ng - 1].first], &v[i]) != 0)
			g[ng++] = (struct group){i, 0, t, t};
		struct group *c = &g[ng - 1];
		c->count++;
		if (t < c->oldest)
			c->oldest = t;
		if (t > c->newest)
			c->newest = t;
	}
	if (ng)
		qsort(g, ng, sizeof(*g), most_first);
	for (size_t k = 0; k < ng; k++) {
		const struct signed_dump *f = &v[g[k].first];
		static char path[4 * 8192 + 1];
		char first[32], last[32], comm[4 * sizeof(f->d->p.comm) + 1];
		struct ptrec_sbuf b;

		utc(g[k].oldest, first, sizeof(first));
		utc(g[k].newest, last, sizeof(last));
		ptrec_sbuf_init(&b, comm, sizeof(comm));
		ptrec_sbuf_escaped(&b, f->d->p.comm[0] ? f->d->p.comm : "?");
		ptrec_sbuf_init(&b, path, sizeof(path));
		ptrec_sbuf_escaped(&b, f->d->path);
		printf("%6zu  %s  %s  %-16s %s  (e.g. %s)\n", g[k].count, first, last, comm, f->sig,
		       path);
	}
	rc = 0;
out:
	for (size_t i = 0; v && i < all->n; i++)
		free(v[i].sig);
	free(v);
	free(g);
	return rc;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: ptrec list [--group] [DIR...]\n"
	        "  Lists ptrec dumps, newest first: time (UTC), event, program, pid, path, and\n"
	        "  whether the report DUMP.txt is there.  Without DIR: the places a crash report\n"
	        "  of this environment may go (PTREC_DIR, next to the core file, STATE_DIRECTORY,\n"
	        "  LOGS_DIRECTORY, the cwd, ~/.local/state/ptrec, /var/tmp, /tmp).\n"
	        "  --group  one line per program and crash signature, most frequent first: count,\n"
	        "           first and last seen (UTC), program, signature, the newest dump\n");
}

int cmd_list(int argc, char **argv)
{
	struct tool_dumps all = {0};
	enum { OPT_GROUP = 256 };
	static const struct option opts[] = {{"group", no_argument, NULL, OPT_GROUP},
	                                     TOOL_OPT_HELP, TOOL_OPT_LAST};
	struct tool_args a = TOOL_ARGS_INIT(argc, argv, opts, usage);
	int ndirs = 0, group = 0;

	for (int o; (o = tool_getopt(&a)) != TOOL_ARGS_END;) {
		if (o == TOOL_ARGS_STOP) {
			tool_dumps_free(&all);
			return a.status;
		}
		if (o == OPT_GROUP) {
			group = 1;
			continue;
		}
		ndirs++; /* TOOL_ARGS_OPERAND */
		if (tool_dumps_add_dir(&all, a.arg) != 0)
			tool_error(a.arg, -1, "cannot list: %s", strerror(errno));
	}
	if (!ndirs)
		tool_dumps_add_places(&all);
	tool_dumps_sort(&all);
	if (group && print_groups(&all) != 0) {
		tool_error(NULL, -1, "list: out of memory");
		tool_dumps_free(&all);
		return TOOL_EXIT_INPUT;
	}
	for (size_t i = 0; i < all.n && !group; i++) {
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
