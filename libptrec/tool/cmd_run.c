/* cmd_run.c — `ptrec run [OPTIONS] [--] CMD [ARGS...]`: runs an unmodified program with the
 * recorder, by preloading libptrec.so (LD_PRELOAD) with PTREC_PRELOAD set, which makes its
 * constructor call ptrec_init from the PTREC_* variables the options set (runtime/preload.c).
 * The programs CMD starts inherit it unless --no-follow.  Refuses, before running anything,
 * programs the loader would not preload it into or that have libptrec already
 * (run_target.c).  CMD replaces ptrec (exec): its exit status and signals are its own. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/settings.h"
#include "ptrec.h"
#include "runtime/recorder.h"
#include "tool/tool.h"

#ifndef PTREC_LIBDIR
#define PTREC_LIBDIR "/usr/local/lib"
#endif
#ifndef PTREC_SONAME
#define PTREC_SONAME "libptrec.so.0"
#endif

/* Exit statuses of a program that could not be started, as env(1) and the shells use them. */
#define RUN_EXIT_REFUSED 126 /* found, but not run: refused or exec failed */
#define RUN_EXIT_NOT_FOUND 127

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: ptrec run [OPTIONS] [--] CMD [ARGS...]\n"
	        "  Runs CMD with the recorder preloaded (no rebuild, no relink).\n"
	        "  --dir DIR            where dumps go first (PTREC_DIR)\n"
	        "  --backend NAME       auto, intel_pt, intel_bts, instrumented or none (PTREC_BACKEND)\n"
	        "  --ring-size SIZE     bytes per thread ring, 4K..128M, a power of two (PTREC_RING_SIZE)\n"
	        "  --memory SIZE        budget for all rings (PTREC_MEMORY)\n"
	        "  --branches N         branches in the report (PTREC_BRANCHES)\n"
	        "  --filter FILTER      PT address filter (PTREC_FILTER)\n"
	        "  --report-timeout MS  crash-time report limit, 0 = dump only (PTREC_REPORT_TIMEOUT_MS)\n"
	        "  --chain dying|first  when the dump is written if CMD has crash handlers (PTREC_CHAIN)\n"
	        "  --no-follow          record CMD only, not the programs it starts\n"
	        "  --lib PATH           the libptrec.so to preload (default $PTREC_PRELOAD_LIB, else\n"
	        "                       the one built beside this ptrec in its build tree, else\n"
	        "                       %s/%s)\n"
	        "  Exit status: CMD's; 126 when CMD is refused (static, set-user-ID, already links\n"
	        "  libptrec) or cannot be run, 127 when it is not found.  See ptrec(1).\n",
	        PTREC_LIBDIR, PTREC_SONAME);
}

/* This ptrec's own path (/proc/self/exe) into self; returns self, or NULL when unreadable. */
static const char *self_path(char *self, size_t cap)
{
	ssize_t n = readlink("/proc/self/exe", self, cap - 1);
	if (n <= 0 || (size_t)n >= cap - 1)
		return NULL;
	self[n] = '\0';
	return self;
}

/* The library to preload when neither --lib nor PTREC_PRELOAD_LIB names one: run from its
 * build tree (libptrec/tool/ptrec, path self or NULL), ptrec takes the library built with it
 * (libptrec/.libs), else the installed one.  buf holds the path when it is the build tree's. */
static const char *default_lib(const char *self, char *buf, size_t cap)
{
	const char *slash = self ? strrchr(self, '/') : NULL;
	if (slash) {
		int len = snprintf(buf, cap, "%.*s/../.libs/%s", (int)(slash - self), self,
		                   PTREC_SONAME);
		if (len > 0 && (size_t)len < cap && access(buf, R_OK) == 0)
			return buf;
	}
	return PTREC_LIBDIR "/" PTREC_SONAME;
}

/* Checks the value of the option just returned as the library will read it; returns 0 or
 * TOOL_EXIT_USAGE (tool_bad_value names the option and what it wants). */
static int check_value(const struct tool_args *a)
{
	const char *opt = a->name, *v = a->arg;
	size_t n;

	if (!strcmp(opt, "--backend"))
		return ptrec_backend_parse(v) >= 0 ? 0 :
		       tool_bad_value(a, "auto, intel_pt, intel_bts, instrumented or none");
	if (!strcmp(opt, "--ring-size"))
		return ptrec_parse_size(v, &n) == 0 && ptrec_ring_size_valid(n) ? 0 :
		       tool_bad_value(a, "a power of two from 4K to 128M");
	if (!strcmp(opt, "--memory"))
		return ptrec_parse_size(v, &n) == 0 && n >= PTREC_RING_MIN ? 0 :
		       tool_bad_value(a, "a size of at least 4K");
	if (!strcmp(opt, "--branches"))
		return ptrec_parse_size(v, &n) == 0 && n >= 1 && n <= 1000000 ? 0 :
		       tool_bad_value(a, "a number from 1 to 1000000");
	if (!strcmp(opt, "--report-timeout"))
		return ptrec_parse_size(v, &n) == 0 &&
		       (n == 0 || (n >= PTREC_REPORT_TIMEOUT_MIN && n <= PTREC_REPORT_TIMEOUT_MAX)) ?
		       0 : tool_bad_value(a, "0 or 100 to 3600000 (ms)");
	if (!strcmp(opt, "--chain"))
		return !strcmp(v, "dying") || !strcmp(v, "first") ? 0 :
		       tool_bad_value(a, "dying or first");
	if (!strcmp(opt, "--dir"))
		return *v && strlen(v) < PTREC_DIR_MAX ? 0 : tool_bad_value(a, "a directory");
	if (!strcmp(opt, "--filter"))
		return *v && strlen(v) < PTREC_FILTER_MAX ? 0 : tool_bad_value(a, "a filter");
	return 0;
}

/* LD_PRELOAD for CMD: the entries already there (a sanitizer runtime must stay first), without
 * any libptrec, then lib.  Returns 0 or -1. */
static int set_preload(const char *lib)
{
	const char *old = getenv("LD_PRELOAD");
	size_t cap = (old ? strlen(old) : 0) + strlen(lib) + 2;
	char *list = malloc(cap);
	int r;

	if (!list)
		return -1;
	list[0] = '\0';
	if (old && ptrec_preload_without_libptrec(old, list, cap) < 0) {
		free(list);
		return -1;
	}
	if (list[0])
		strcat(list, ":");
	strcat(list, lib);
	r = setenv("LD_PRELOAD", list, 1);
	free(list);
	return r;
}

int cmd_run(int argc, char **argv)
{
	/* the PTREC_* variable of each option OPT_VAR + i */
	static const char *const vars[] = {
		"PTREC_DIR", "PTREC_BACKEND", "PTREC_RING_SIZE", "PTREC_MEMORY", "PTREC_BRANCHES",
		"PTREC_FILTER", "PTREC_REPORT_TIMEOUT_MS", "PTREC_CHAIN",
	};
	enum { OPT_NO_FOLLOW = 256, OPT_LIB, OPT_VAR };
	static const struct option opts[] = {
		{"dir", required_argument, NULL, OPT_VAR + 0},
		{"backend", required_argument, NULL, OPT_VAR + 1},
		{"ring-size", required_argument, NULL, OPT_VAR + 2},
		{"memory", required_argument, NULL, OPT_VAR + 3},
		{"branches", required_argument, NULL, OPT_VAR + 4},
		{"filter", required_argument, NULL, OPT_VAR + 5},
		{"report-timeout", required_argument, NULL, OPT_VAR + 6},
		{"chain", required_argument, NULL, OPT_VAR + 7},
		{"no-follow", no_argument, NULL, OPT_NO_FOLLOW},
		{"lib", required_argument, NULL, OPT_LIB},
		TOOL_OPT_HELP, TOOL_OPT_LAST,
	};
	struct tool_args a = TOOL_ARGS_INIT(argc, argv, opts, usage);
	const char *lib = getenv("PTREC_PRELOAD_LIB");
	char libpath[PATH_MAX], prog[PATH_MAX], self[PATH_MAX], built[PATH_MAX];
	int follow = 1, cmd = -1, o;
	const char *me = self_path(self, sizeof(self));

	if (!lib || !*lib)
		lib = default_lib(me, built, sizeof(built));
	/* the options end at CMD, whose own options are its arguments */
	while (cmd < 0 && (o = tool_getopt(&a)) != TOOL_ARGS_END) {
		if (o == TOOL_ARGS_STOP) {
			return a.status;
		} else if (o == TOOL_ARGS_OPERAND) {
			cmd = optind - 1;
		} else if (o == OPT_NO_FOLLOW) {
			follow = 0;
		} else if (o == OPT_LIB) {
			lib = a.arg;
		} else if (o >= OPT_VAR && o < OPT_VAR + (int)(sizeof(vars) / sizeof(vars[0]))) {
			if (check_value(&a) != 0)
				return TOOL_EXIT_USAGE;
			if (setenv(vars[o - OPT_VAR], a.arg, 1) != 0) {
				tool_error(NULL, -1, "run: setenv: %s", strerror(errno));
				return TOOL_EXIT_USAGE;
			}
		}
	}
	if (cmd < 0)
		return tool_no_operand(&a, "command");

	if (run_target_find(argv[cmd], prog, sizeof(prog)) != 0) {
		tool_error(argv[cmd], -1, "command not found");
		return RUN_EXIT_NOT_FOUND;
	}
	if (run_target_check(prog, 0) != 0)
		return RUN_EXIT_REFUSED;
	run_target_history_note(prog);
	/* every program started later finds the library by this path, whatever its cwd (the
	 * soname's symlink is kept: a library upgrade replaces the file behind it) */
	char cwd[PATH_MAX];
	int len = lib[0] != '/' && getcwd(cwd, sizeof(cwd)) ?
	          snprintf(libpath, sizeof(libpath), "%s/%s", cwd, lib) :
	          snprintf(libpath, sizeof(libpath), "%s", lib);
	if (len < 0 || (size_t)len >= sizeof(libpath))
		errno = ENAMETOOLONG;
	else if (access(libpath, R_OK) == 0)
		errno = 0;
	if (errno) {
		tool_error(lib, -1, "the library ptrec run preloads: %s (install libptrec, or give "
		           "--lib or PTREC_PRELOAD_LIB)", strerror(errno));
		return RUN_EXIT_REFUSED;
	}
	if (set_preload(libpath) != 0 || setenv("PTREC_PRELOAD", follow ? "follow" : "once", 1)) {
		tool_error(NULL, -1, "run: cannot set the environment: %s", strerror(errno));
		return RUN_EXIT_REFUSED;
	}
	/* reports are made by this same ptrec, unless PTREC_TOOL says otherwise */
	if (!getenv("PTREC_TOOL") && me)
		setenv("PTREC_TOOL", me, 1);
	execv(prog, argv + cmd);
	tool_error(prog, -1, "cannot run it: %s", strerror(errno));
	return errno == ENOENT ? RUN_EXIT_NOT_FOUND : RUN_EXIT_REFUSED;
}
