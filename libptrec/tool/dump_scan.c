/* dump_scan.c — the dumps in a set of directories, as `ptrec list` shows them and
 * `ptrec upload --pending` sends them (tool.h, "dumps found"): every "*.ptrec" file whose header
 * and PROCESS record read (only each file's first bytes are read), once each. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/file_open.h"
#include "core/safe_str.h"
#include "dump/dump_read.h"
#include "tool/tool.h"

#define HEAD_BYTES 4096 /* header + PROCESS record, with room */

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

int tool_dumps_add_file(struct tool_dumps *all, const char *path)
{
	char txt[8200];
	struct ptrec_dump_process p;
	struct stat st;
	struct tool_dump *f;

	if (read_head(path, &p) != 0)
		return -1;
	for (size_t i = 0; i < all->n; i++)
		if (!strcmp(all->v[i].path, path))
			return 0; /* the same directory listed twice */
	if (all->n == all->cap) {
		size_t nc = all->cap ? all->cap * 2 : 32;
		struct tool_dump *g = realloc(all->v, nc * sizeof(*g));
		if (!g)
			return -1;
		all->v = g;
		all->cap = nc;
	}
	f = &all->v[all->n];
	f->path = strdup(path);
	if (!f->path)
		return -1;
	f->p = p;
	snprintf(txt, sizeof(txt), "%s.txt", path);
	f->has_report = lstat(txt, &st) == 0 && S_ISREG(st.st_mode);
	all->n++;
	return 0;
}

int tool_dumps_add_dir(struct tool_dumps *all, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return -1;
	while ((e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);
		char path[8192];

		if (len < 7 || strcmp(e->d_name + len - 6, ".ptrec") != 0)
			continue;
		snprintf(path, sizeof(path), "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/",
		         e->d_name);
		tool_dumps_add_file(all, path);
	}
	closedir(d);
	return 0;
}

void tool_dumps_add_places(struct tool_dumps *all)
{
	struct tool_place t[PTREC_PLACE_COUNT_];
	char pattern[1024];
	long r = ptrec_read_small_file("/proc/sys/kernel/core_pattern", pattern, sizeof(pattern));
	unsigned np = tool_places(r > 0 ? pattern : NULL, t);

	for (unsigned i = 0; i < np; i++) {
		char dir[4096];
		if (t[i].p.kind == PTREC_PLACE_CORE) {
			const char *slash = strrchr(t[i].p.path, '/');
			const char *pct = strchr(t[i].p.path, '%');
			if (!slash || (pct && pct < slash))
				continue; /* the directory itself depends on the crash */
			snprintf(dir, sizeof(dir), "%.*s", (int)(slash - t[i].p.path + 1), t[i].p.path);
		} else {
			snprintf(dir, sizeof(dir), "%s", t[i].p.path);
		}
		tool_dumps_add_dir(all, dir);
	}
}

static int newest_first(const void *a, const void *b)
{
	const struct tool_dump *x = a, *y = b;
	if (x->p.time_sec != y->p.time_sec)
		return x->p.time_sec > y->p.time_sec ? -1 : 1;
	return strcmp(x->path, y->path);
}

void tool_dumps_sort(struct tool_dumps *all)
{
	if (all->n)
		qsort(all->v, all->n, sizeof(*all->v), newest_first);
}

void tool_dumps_free(struct tool_dumps *all)
{
	for (size_t i = 0; i < all->n; i++)
		free(all->v[i].path);
	free(all->v);
	memset(all, 0, sizeof(*all));
}
