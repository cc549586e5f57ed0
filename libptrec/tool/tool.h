/* tool.h — the ptrec command-line tool: one function per subcommand, plus shared helpers.
 * Each cmd_* takes the arguments after the subcommand name (argv[0] is the subcommand) and
 * returns the process exit status. */
#ifndef PTREC_TOOL_H
#define PTREC_TOOL_H

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/report_dirs.h"
#include "dump/dump_format.h"

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
int cmd_check(int argc, char **argv);   /* cmd_check.c: does a build record? */
int cmd_run(int argc, char **argv);     /* cmd_run.c: a program run with libptrec preloaded */
int cmd_minidump(int argc, char **argv); /* cmd_minidump.c: a dump as a Breakpad minidump */
int cmd_upload(int argc, char **argv);  /* cmd_upload.c: dumps sent to a crash server */

/* run_target.c: finds cmd as execvp would (PATH unless it has a '/') and stores its path in
 * out.  Returns 0 or -1 (not found, or longer than cap). */
int run_target_find(const char *cmd, char *out, size_t cap);
/* run_target.c: 0 if `ptrec run` can preload libptrec into the program at path (depth: "#!"
 * interpreters followed so far, 0 at first), else prints why not and returns -1. */
int run_target_check(const char *path, int depth);
/* run_target.c: before `ptrec run` starts the program at path with PTREC_BACKEND unset or
 * auto: one "ptrec: no branch history will be recorded ..." line on stderr when this machine
 * has no PT or BTS and the program calls no libptrec hook (the preloaded library stays quiet
 * about it). */
void run_target_history_note(const char *path);

/* Exit statuses shared by all subcommands. */
#define TOOL_EXIT_OK 0     /* success */
#define TOOL_EXIT_GAPS 1   /* decoded, but with gaps/errors recorded in the output */
#define TOOL_EXIT_USAGE 2  /* bad command line */
#define TOOL_EXIT_INPUT 3  /* input file unreadable or malformed */

/* ---- command lines (tool_util.c) ----------------------------------------------------------
 * Every subcommand reads its arguments with tool_getopt, so all follow one convention:
 *  - long options, "--opt=value" and "--opt value" alike (-h is --help's short form);
 *  - options and operands are read in the order given and may be mixed;
 *  - "--" ends the options: every later argument is an operand, even one starting with '-';
 *  - --help prints the usage on stdout, and the command exits TOOL_EXIT_OK;
 *  - an unknown option, a missing value, or a value given to an option that takes none prints
 *    "ptrec: CMD: ..." naming the option and then the usage on stderr: TOOL_EXIT_USAGE. */
#define TOOL_OPT_HELP {"help", no_argument, NULL, 'h'}
#define TOOL_OPT_LAST {NULL, 0, NULL, 0}

/* tool_getopt's answers besides an option's val (each command's vals are >= 256). */
enum {
	TOOL_ARGS_END = -1,    /* no more arguments */
	TOOL_ARGS_STOP = -2,   /* --help or a usage error, already printed: return status */
	TOOL_ARGS_OPERAND = 1, /* an operand, in arg */
};

struct tool_args {
	int argc;
	char **argv;                /* argv[0] is the subcommand's name, used in messages */
	const struct option *opts;  /* the long options, TOOL_OPT_HELP among them, TOOL_OPT_LAST */
	void (*usage)(FILE *out);   /* prints the command's usage */
	/* set by tool_getopt: */
	const char *arg;            /* the value of the option returned, or the operand */
	char name[40];              /* the option returned, as "--name", for messages */
	int status;                 /* after TOOL_ARGS_STOP: the exit status */
	int rest;                   /* 1 after "--"; a command may set it (ptrec run PROGRAM
	                               ARGS...): every later argument is then an operand */
	int started;                /* internal */
};

#define TOOL_ARGS_INIT(argc_, argv_, opts_, usage_) \
	{.argc = (argc_), .argv = (argv_), .opts = (opts_), .usage = (usage_)}

/* The next option (its val, with arg and name set), operand, or the end; see above. */
int tool_getopt(struct tool_args *a);

/* Prints "ptrec: CMD: MESSAGE" for a usage error; returns TOOL_EXIT_USAGE. */
int tool_usage_error(const struct tool_args *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* For a missing operand: prints "ptrec: CMD: no WHAT given" and the usage on stderr; returns
 * TOOL_EXIT_USAGE. */
int tool_no_operand(const struct tool_args *a, const char *what);

/* For an operand given to a command that takes none: prints "ptrec: CMD: unexpected argument
 * 'ARG'" and the usage on stderr; returns TOOL_EXIT_USAGE. */
int tool_extra_operand(const struct tool_args *a);

/* For a bad value of the option just returned: prints "ptrec: CMD: --NAME 'VALUE': expected
 * WANT" and returns TOOL_EXIT_USAGE. */
int tool_bad_value(const struct tool_args *a, const char *want);

/* Parses s as a number in min..max, decimal or 0x hex (nothing else: no sign, no space).
 * Returns 0 or -1. */
int tool_parse_number(const char *s, unsigned long min, unsigned long max, unsigned long *out);

/* tool_parse_number over the value of the option just returned; on failure tool_bad_value
 * names the option and the range.  Returns 0 or TOOL_EXIT_USAGE. */
int tool_opt_number(const struct tool_args *a, unsigned long min, unsigned long max,
                    unsigned long *out);

/* Prints "ptrec: FILE: offset 0xOFF: MESSAGE\n" to stderr (offset omitted when < 0, file when
 * NULL). */
void tool_error(const char *file, long long offset, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A whole input file, in memory. */
struct tool_file {
	const char *path;     /* as given */
	const unsigned char *data; /* contents (mapped read-only or malloc'd; NULL if empty) */
	size_t size;          /* bytes */
	int mapped;           /* data is a private file mapping (else malloc'd) */
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

/* ---- dumps found (dump_scan.c): the "*.ptrec" files of some directories whose header and
 * PROCESS record read, for `ptrec list` and `ptrec upload --pending`. */
struct tool_dump {
	char *path;                   /* the dump (malloc'd) */
	struct ptrec_dump_process p;  /* its PROCESS record */
	int has_report;               /* DUMP.txt exists */
};
struct tool_dumps {
	struct tool_dump *v;
	size_t n, cap;
};
/* Adds the dump at path unless it is there already.  Returns 0, or -1 when it is not a
 * readable dump (or memory ran out). */
int tool_dumps_add_file(struct tool_dumps *all, const char *path);
/* Adds the dumps in dir not found yet.  Returns 0, or -1 with errno when dir cannot be read. */
int tool_dumps_add_dir(struct tool_dumps *all, const char *dir);
/* Adds the dumps in the places a crash report of this environment may go (tool_places; next
 * to the core file only when core_pattern's directory is fixed). */
void tool_dumps_add_places(struct tool_dumps *all);
/* Sorts newest first (PROCESS time), then by path. */
void tool_dumps_sort(struct tool_dumps *all);
void tool_dumps_free(struct tool_dumps *all);

/* Reads path fully (maps it when it can: a file that shrinks while mapped ends the tool with
 * a message naming it and exit status 3).  On failure prints a tool_error naming the file and the cause and returns
 * -1; else 0.  Release with tool_file_free. */
int tool_file_read(const char *path, struct tool_file *f);
void tool_file_free(struct tool_file *f);

#endif
