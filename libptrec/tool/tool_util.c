/* tool_util.c — helpers shared by the ptrec subcommands: command lines, error messages and file
 * input. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
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

/* The long option whose val is val, or NULL. */
static const struct option *opt_by_val(const struct option *opts, int val)
{
	for (; opts->name; opts++)
		if (opts->val == val)
			return opts;
	return NULL;
}

/* Prints a usage error and the usage on stderr; the command will exit TOOL_EXIT_USAGE. */
static int args_stop(struct tool_args *a, const char *what, const char *text)
{
	tool_error(NULL, -1, "%s: %s %s", a->argv[0], what, text);
	a->usage(stderr);
	a->status = TOOL_EXIT_USAGE;
	return TOOL_ARGS_STOP;
}

int tool_getopt(struct tool_args *a)
{
	/* "-": operands come back in order, as 1; ":": a missing value returns ':'. */
	static const char shorts[] = "-:h";
	const struct option *o;
	char text[48];
	int idx = -1, c;

	if (!a->started) {
		a->started = 1;
		optind = 0; /* glibc: start afresh */
		opterr = 0; /* the messages are ours */
	}
	a->arg = NULL;
	a->name[0] = '\0';
	if (a->rest) { /* after "--" */
		if (optind >= a->argc)
			return TOOL_ARGS_END;
		a->arg = a->argv[optind++];
		return TOOL_ARGS_OPERAND;
	}
	c = getopt_long(a->argc, a->argv, shorts, a->opts, &idx);
	if (c == -1) {
		a->rest = 1;
		return tool_getopt(a);
	}
	if (c == TOOL_ARGS_OPERAND) {
		a->arg = optarg;
		return c;
	}
	if (c == 'h') {
		a->usage(stdout);
		a->status = TOOL_EXIT_OK;
		return TOOL_ARGS_STOP;
	}
	if (c == ':') {
		o = opt_by_val(a->opts, optopt);
		snprintf(text, sizeof(text), "--%s", o ? o->name : "?");
		return args_stop(a, text, "needs a value");
	}
	if (c == '?') {
		const char *given = a->argv[optind - 1];

		o = optopt ? opt_by_val(a->opts, optopt) : NULL;
		if (o && !strncmp(given, "--", 2)) {
			snprintf(text, sizeof(text), "--%s", o->name);
			return args_stop(a, text, "takes no value");
		}
		if (optopt)
			snprintf(text, sizeof(text), "'-%c'", optopt);
		else
			snprintf(text, sizeof(text), "'%.40s'", given);
		return args_stop(a, "unknown option", text);
	}
	a->arg = optarg;
	if (idx >= 0)
		snprintf(a->name, sizeof(a->name), "--%s", a->opts[idx].name);
	return c;
}

int tool_usage_error(const struct tool_args *a, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "ptrec: %s: ", a->argv[0]);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return TOOL_EXIT_USAGE;
}

int tool_no_operand(const struct tool_args *a, const char *what)
{
	tool_usage_error(a, "no %s given", what);
	a->usage(stderr);
	return TOOL_EXIT_USAGE;
}

int tool_extra_operand(const struct tool_args *a)
{
	tool_usage_error(a, "unexpected argument '%s'", a->arg);
	a->usage(stderr);
	return TOOL_EXIT_USAGE;
}

int tool_bad_value(const struct tool_args *a, const char *want)
{
	return tool_usage_error(a, "%s '%s': expected %s", a->name, a->arg, want);
}

int tool_parse_number(const char *s, unsigned long min, unsigned long max, unsigned long *out)
{
	int hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
	unsigned long v;
	char *end;

	if (hex)
		s += 2;
	if (!(hex ? isxdigit((unsigned char)*s) : *s >= '0' && *s <= '9'))
		return -1;
	errno = 0;
	v = strtoul(s, &end, hex ? 16 : 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int tool_opt_number(const struct tool_args *a, unsigned long min, unsigned long max,
                    unsigned long *out)
{
	char want[64];

	if (!tool_parse_number(a->arg, min, max, out))
		return 0;
	snprintf(want, sizeof(want), "a number %lu..%lu", min, max);
	return tool_bad_value(a, want);
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

/* The file being read through a mapping: named if it shrinks under us (SIGBUS). */
static const char *volatile mapped_path;

static void mapped_bus(int sig)
{
	static const char a[] = "ptrec: ", b[] = ": the file shrank while being read\n";
	const char *p = mapped_path;
	(void)sig;
	if (write(2, a, sizeof(a) - 1) > 0 && p && write(2, p, strlen(p)) > 0)
		(void)!write(2, b, sizeof(b) - 1);
	_exit(3);
}

/* Maps a regular file, read-only: no copy of the bytes and no zeroed pages (a 16 MB trace: the
 * read() copy and page faults were a third of `decode --stat`).  Mapped writable, MAP_POPULATE
 * would copy every page up front (private copy-on-write: `decode --stat` of that trace took
 * 92 ms instead of 54 on the development VM).  A file truncated while mapped raises SIGBUS: the
 * tool then says so and exits 3.  Returns 0, or -1 (the caller reads instead). */
static int file_map(int fd, size_t size, struct tool_file *f)
{
	void *p = mmap(NULL, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	if (p == MAP_FAILED)
		return -1;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = mapped_bus;
	sigemptyset(&sa.sa_mask);
	mapped_path = f->path;
	sigaction(SIGBUS, &sa, NULL);
	f->data = p;
	f->size = size;
	f->mapped = 1;
	return 0;
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
	if (st.st_size > 0 && !file_map(fd, (size_t)st.st_size, f)) {
		close(fd);
		return 0;
	}
	unsigned char *data = NULL;
	if (st.st_size > 0) {
		f->data = data = malloc((size_t)st.st_size);
		if (!data) {
			tool_error(path, -1, "out of memory reading %lld bytes", (long long)st.st_size);
			close(fd);
			return -1;
		}
	}
	while (f->size < (size_t)st.st_size) {
		ssize_t n = read(fd, data + f->size, (size_t)st.st_size - f->size);
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
	if (f->mapped)
		munmap((void *)f->data, f->size);
	else
		free((void *)f->data);
	f->data = NULL;
	f->size = 0;
	f->mapped = 0;
}
