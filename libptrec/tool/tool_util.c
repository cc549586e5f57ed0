/* tool_util.c — helpers shared by the ptrec subcommands: error messages and file input. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/file_open.h"
#include "tool/tool.h"

void tool_error(const char *file, long long offset, const char *fmt, ...)
{
	va_list ap;

	fputs("ptrec: ", stderr);
	if (file)
		fprintf(stderr, "%s: ", file);
	if (offset >= 0)
		fprintf(stderr, "offset 0x%llx: ", offset);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int tool_open_input(const char *path, struct stat *st)
{
	int fd = ptrec_open_regular(path, st);
	if (fd >= 0)
		return fd;
	if (errno == EINVAL)
		tool_error(path, -1, "not a regular file (a %s); give a file", ptrec_file_type(st->st_mode));
	else
		tool_error(path, -1, "cannot open: %s", strerror(errno));
	return -1;
}

int tool_file_read(const char *path, struct tool_file *f)
{
	struct stat st;
	int fd;

	memset(f, 0, sizeof(*f));
	f->path = path;
	fd = tool_open_input(path, &st);
	if (fd < 0)
		return -1;
	if (st.st_size > 0) {
		f->data = malloc((size_t)st.st_size);
		if (!f->data) {
			tool_error(path, -1, "out of memory reading %lld bytes", (long long)st.st_size);
			close(fd);
			return -1;
		}
	}
	while (f->size < (size_t)st.st_size) {
		ssize_t n = read(fd, f->data + f->size, (size_t)st.st_size - f->size);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			tool_error(path, (long long)f->size, "read failed: %s",
			           n < 0 ? strerror(errno) : "file shrank while reading");
			close(fd);
			tool_file_free(f);
			return -1;
		}
		f->size += (size_t)n;
	}
	close(fd);
	return 0;
}

void tool_file_free(struct tool_file *f)
{
	free(f->data);
	f->data = NULL;
	f->size = 0;
}
