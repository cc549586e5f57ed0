/* report_dirs.h — where crash files go: the kernel's core file name, the fallback name, and the
 * ordered list of places a dump and its report may be written (README, "Where reports go").
 *
 * Pure and ASYNC-SIGNAL-SAFE (no malloc, stdio, getenv or locks): the crash path calls these
 * with values it prepared at ptrec_init, and `ptrec info` calls them to say where a report of
 * this environment would go and why. */
#ifndef PTREC_REPORT_DIRS_H
#define PTREC_REPORT_DIRS_H

#include <stddef.h>

/* What the kernel knows when it names a core file. */
struct ptrec_core_info {
	const char *pattern;         /* /proc/sys/kernel/core_pattern text (trailing \n ignored) */
	int uses_pid;                /* /proc/sys/kernel/core_uses_pid */
	const char *cwd;             /* the process's cwd, for relative results */
	long pid;                    /* %p and %P */
	long tid;                    /* %i and %I */
	const char *comm;            /* %e */
	const char *exe;             /* %E: executable path ('/' becomes '!') */
	long long time;              /* %t: seconds since the epoch */
	const char *hostname;        /* %h */
	long uid;                    /* %u */
	long gid;                    /* %g */
	int signo;                   /* %s */
	unsigned long long core_limit; /* %c: RLIMIT_CORE soft limit (RLIM_INFINITY as is) */
};

/* Expands info->pattern as the kernel does for this process into out (absolute when cwd is
 * given).  Returns 0, -PTREC_ENOSUPP when the pattern pipes to a program ("|..."),
 * -PTREC_EINVAL for an empty pattern, or -PTREC_EOVERFLOW when the result does not fit. */
int ptrec_core_expand(const struct ptrec_core_info *info, char *out, size_t outlen);

/* Formats the fallback base name "DIR/ptrec.COMM.PID.TIME" into out (COMM reduced to
 * [A-Za-z0-9._-]).  Returns 0 or -PTREC_EOVERFLOW. */
int ptrec_fallback_base(const char *dir, const char *comm, long pid, long long time,
                        char *out, size_t outlen);

/* The places, in the order they are tried. */
enum ptrec_place_kind {
	PTREC_PLACE_DIR = 0,    /* PTREC_DIR (the configuration's dump_dir) */
	PTREC_PLACE_CORE,       /* "<core file>.ptrec": core_pattern is a plain path (crashes only) */
	PTREC_PLACE_STATE,      /* $STATE_DIRECTORY (systemd StateDirectory=), first entry */
	PTREC_PLACE_LOGS,       /* $LOGS_DIRECTORY (systemd LogsDirectory=), first entry */
	PTREC_PLACE_CWD,        /* the current directory */
	PTREC_PLACE_HOME,       /* $XDG_STATE_HOME/ptrec, else $HOME/.local/state/ptrec */
	PTREC_PLACE_VAR_TMP,    /* /var/tmp: survives reboots and a unit's PrivateTmp= cleanup */
	PTREC_PLACE_TMP,        /* /tmp */
	PTREC_PLACE_COUNT_      /* number of kinds; not a place */
};

/* What decides the places; NULL or "" means unset. */
struct ptrec_place_env {
	const char *dump_dir;       /* PTREC_DIR */
	const char *core_path;      /* the expanded core file path, NULL when the pattern pipes */
	const char *state_dir;      /* $STATE_DIRECTORY (a ':'-separated list) */
	const char *logs_dir;       /* $LOGS_DIRECTORY (a ':'-separated list) */
	const char *cwd;            /* the current directory */
	const char *xdg_state_home; /* $XDG_STATE_HOME (used when absolute) */
	const char *home;           /* $HOME (used when absolute) */
};

/* One place. */
struct ptrec_place {
	enum ptrec_place_kind kind; /* which rule chose it */
	char path[4096];            /* the directory, or for PTREC_PLACE_CORE the core file path */
	int shared;                 /* 1 for /tmp and /var/tmp: names get an unpredictable suffix
	                               (the crash path also treats any world-writable directory so) */
};

/* Fills out[] with the places that apply, in order, and returns how many.  Places whose
 * variable is unset, or whose path does not fit, are left out. */
unsigned ptrec_places(const struct ptrec_place_env *env, struct ptrec_place out[PTREC_PLACE_COUNT_]);

/* Reads one line of /proc/self/mountinfo (proc(5): "ID PARENT MAJ:MIN ROOT MOUNT_POINT ...",
 * len bytes, no newline needed) and says whether it mounts something at mount_point (compared
 * with the escaped field as is: "/tmp", "/var/tmp" need no escapes) and whether that is a
 * systemd PrivateTmp= directory: its ROOT contains "/systemd-private-" (systemd bind-mounts
 * /tmp/systemd-private-ID-UNIT-RAND/tmp there, and removes it when the unit stops).  Returns
 * 1 private, 0 another mount at mount_point, -1 a line about another mount point or malformed.
 * A later line at the same mount point hides an earlier one (a mount on top). */
int ptrec_mountinfo_private(const char *line, size_t len, const char *mount_point);

/* Returns a short name of a place kind ("PTREC_DIR", "next to the core file", ...). */
const char *ptrec_place_name(enum ptrec_place_kind kind);

#endif
