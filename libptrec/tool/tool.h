/* tool.h — the ptrec command-line tool: one function per subcommand, plus shared helpers.
 * Each cmd_* takes the arguments after the subcommand name (argv[0] is the subcommand) and
 * returns the process exit status. */
#ifndef PTREC_TOOL_H
#define PTREC_TOOL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/report_dirs.h"

int cmd_info(int argc, char **argv);    /* cmd_info.c: capability report */
int cmd_packets(int argc, char **argv); /* cmd_packets.c: PT packet dump */
int cmd_decode(int argc, char **argv);  /* cmd_decode.c: PT instruction/branch decode */

struct ptrec_pt_flow;
/* decode_stat.c: decodes the rest of the trace with f (over buf[0..len)) and prints the totals
 * of `ptrec decode --stat` to out.  Returns 0 or a negative error from the decoder. */
int decode_stat(FILE *out, struct ptrec_pt_flow *f, const uint8_t *buf, size_t len);
int cmd_report(int argc, char **argv);  /* cmd_report.c: report from a dump */
int cmd_selftest(int argc, char **argv); /* cmd_selftest.c: record+decode self check */
int cmd_list(int argc, char **argv);    /* cmd_list.c: recent reports, newest first */
int cmd_cflags(int argc, char **argv);  /* cmd_cflags.c: instrumentation flags for $CC */

/* Exit statuses shared by all subcommands. */
#define TOOL_EXIT_OK 0     /* success */
#define TOOL_EXIT_GAPS 1   /* decoded, but with gaps/errors recorded in the output */
#define TOOL_EXIT_USAGE 2  /* bad command line */
#define TOOL_EXIT_INPUT 3  /* input file unreadable or malformed */

/* Prints "ptrec: FILE: offset 0xOFF: MESSAGE\n" to stderr (offset omitted when < 0, file when
 * NULL). */
void tool_error(const char *file, long long offset, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A whole input file, read into memory. */
struct tool_file {
	const char *path;     /* as given */
	unsigned char *data;  /* contents (malloc'd; NULL for an empty file) */
	size_t size;          /* bytes */
};

/* Opens an input file (core/file_open.h: never blocks, regular files only).  On failure prints
 * a tool_error naming the file and the cause and returns -1; else the descriptor. */
struct stat;
int tool_open_input(const char *path, struct stat *st);

/* One place a crash report may go, with the crash path's verdict for this user. */
struct tool_place {
	struct ptrec_place p;        /* the place (core/report_dirs.h) */
	int usable;                  /* 1 if the real user may create files there */
	char why[160];               /* "writable", "not usable: Permission denied", ... */
};

/* The places of this process's environment in the crash path's order (PTREC_DIR, next to the
 * core file named by core_pattern, $STATE_DIRECTORY, ...), each judged.  core_pattern may be
 * NULL (unknown).  Returns how many (report_place.c). */
unsigned tool_places(const char *core_pattern, struct tool_place out[PTREC_PLACE_COUNT_]);

/* Reads path fully.  On failure prints a tool_error naming the file and the cause and returns
 * -1; else 0.  Release with tool_file_free. */
int tool_file_read(const char *path, struct tool_file *f);
void tool_file_free(struct tool_file *f);

#endif
