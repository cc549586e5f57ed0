/* debuginfod.c — fetching debug files and executables by build-id from debuginfod servers
 * (tool/debuginfod.h).  The protocol is one GET of URL/buildid/HEX/debuginfo (or /executable)
 * per server; the cache is elfutils' (CACHE/HEX/debuginfo, CACHE/HEX/executable), so gdb and
 * ptrec share what either fetched.  debuginfod-find does it all itself (its cache rules, its
 * negative cache, DEBUGINFOD_TIMEOUT/MAXTIME/MAXSIZE); with curl the same variables become curl
 * options and the file is written under a temporary name, renamed into place when complete. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/warnings.h"
#include "report/report.h"
#include "tool/debuginfod.h"

extern char **environ;

const char *tool_debuginfod_cache(char *buf, size_t cap)
{
	const char *v = getenv("DEBUGINFOD_CACHE_PATH");
	int n;

	if (v && v[0])
		n = snprintf(buf, cap, "%s", v);
	else if ((v = getenv("XDG_CACHE_HOME")) && v[0])
		n = snprintf(buf, cap, "%s/debuginfod_client", v);
	else if ((v = getenv("HOME")) && v[0])
		n = snprintf(buf, cap, "%s/.cache/debuginfod_client", v);
	else
		return NULL;
	return n > 0 && (size_t)n < cap ? buf : NULL;
}

/* The path of an executable named name on PATH, in buf; NULL if there is none. */
static const char *on_path(const char *name, char *buf, size_t cap)
{
	const char *p = getenv("PATH");

	if (!p || !*p)
		p = "/usr/bin:/bin";
	while (*p) {
		size_t n = strcspn(p, ":");
		if (n && snprintf(buf, cap, "%.*s/%s", (int)n, p, name) < (int)cap &&
		    access(buf, X_OK) == 0)
			return buf;
		p += n + (p[n] == ':');
	}
	return NULL;
}

/* Runs argv (argv[0] a path) with stdin from /dev/null, stdout to out_fd (-1: /dev/null),
 * stderr to /dev/null.  Returns its wait status, or -1 if it could not start. */
static int run(char *const argv[], int out_fd)
{
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int status = -1;

	if (posix_spawn_file_actions_init(&fa))
		return -1;
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (out_fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
	else
		posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc)
		return -1;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return status;
}

/* A non-negative whole number of seconds from the environment variable name, or def. */
static long env_seconds(const char *name, long def)
{
	const char *v = getenv(name);
	char *end;
	long n;

	if (!v || !*v)
		return def;
	errno = 0;
	n = strtol(v, &end, 10);
	return errno || *end ? def : n;
}

/* mkdir -p of dir, mode 0700 for what it creates.  Returns 0 or -1. */
static int make_dirs(const char *dir)
{
	char p[4096];
	int n = snprintf(p, sizeof(p), "%s", dir);

	if (n <= 0 || (size_t)n >= sizeof(p))
		return -1;
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0700) != 0 && errno != EEXIST)
			return -1;
		*s = '/';
	}
	return mkdir(p, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

/* curl: each server of DEBUGINFOD_URLS in turn, into CACHE/HEX/KIND.  Returns 0 if one had it. */
static int fetch_curl(const char *curl, const char *cache, const char *hex, const char *kind)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	char dir[4096], dest[4200], tmp[4300], url[4096], speed[32], timeout[32], maxtime[32],
		maxsize[32];
	long t = env_seconds("DEBUGINFOD_TIMEOUT", 90);
	long maxt = env_seconds("DEBUGINFOD_MAXTIME", 0);
	long maxs = env_seconds("DEBUGINFOD_MAXSIZE", 0);

	if (snprintf(dir, sizeof(dir), "%s/%s", cache, hex) >= (int)sizeof(dir) ||
	    make_dirs(dir) != 0)
		return -1;
	snprintf(dest, sizeof(dest), "%s/%s", dir, kind);
	/* elfutils' timeout: a server that has not sent 100 KiB within t seconds is skipped */
	snprintf(timeout, sizeof(timeout), "%ld", t > 0 ? t : 0);
	snprintf(speed, sizeof(speed), "%ld", t > 0 ? 102400 / t + 1 : 1);
	snprintf(maxtime, sizeof(maxtime), "%ld", maxt);
	snprintf(maxsize, sizeof(maxsize), "%ld", maxs);
	for (const char *p = urls; p && *p;) {
		p += strspn(p, " \t");
		size_t n = strcspn(p, " \t");
		if (!n)
			break;
		const char *u = p;
		p += n;
		if (n > 4 && !strncmp(u, "ima:", 4))
			continue; /* a signature policy tag, not a server */
		while (n && u[n - 1] == '/')
			n--;
		if (snprintf(url, sizeof(url), "%.*s/buildid/%s/%s", (int)n, u, hex, kind) >=
		    (int)sizeof(url))
			continue;
		snprintf(tmp, sizeof(tmp), "%s/.%s.ptrec.%ld", dir, kind, (long)getpid());
		char *argv[24];
		int a = 0;
		argv[a++] = (char *)curl;
		argv[a++] = (char *)"-fsSL";
		argv[a++] = (char *)"--proto";
		argv[a++] = (char *)"=http,https";
		if (t > 0) {
			argv[a++] = (char *)"--connect-timeout";
			argv[a++] = timeout;
			argv[a++] = (char *)"--speed-time";
			argv[a++] = timeout;
			argv[a++] = (char *)"--speed-limit";
			argv[a++] = speed;
		}
		if (maxt > 0) {
			argv[a++] = (char *)"--max-time";
			argv[a++] = maxtime;
		}
		if (maxs > 0) {
			argv[a++] = (char *)"--max-filesize";
			argv[a++] = maxsize;
		}
		argv[a++] = (char *)"-o";
		argv[a++] = tmp;
		argv[a++] = url;
		argv[a] = NULL;
		int st = run(argv, -1);
		struct stat sb;
		if (st == 0 && stat(tmp, &sb) == 0 && sb.st_size > 0 && rename(tmp, dest) == 0)
			return 0;
		unlink(tmp);
	}
	return -1;
}

/* debuginfod-find KIND HEX with DEBUGINFOD_CACHE_PATH set to cache.  Returns 0 if it found
 * the file (it printed its path: in the cache). */
static int fetch_find(const char *find, const char *cache, const char *hex, const char *kind)
{
	char *argv[] = {(char *)find, (char *)kind, (char *)hex, NULL};
	char *old = getenv("DEBUGINFOD_CACHE_PATH");
	char *saved = old ? strdup(old) : NULL;
	int fds[2], st;
	char out[4096];
	ssize_t n = 0, r;

	if (pipe2(fds, O_CLOEXEC) != 0) {
		free(saved);
		return -1;
	}
	setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
	st = run(argv, fds[1]);
	if (saved)
		setenv("DEBUGINFOD_CACHE_PATH", saved, 1);
	else
		unsetenv("DEBUGINFOD_CACHE_PATH");
	free(saved);
	close(fds[1]);
	while ((size_t)n < sizeof(out) - 1 &&
	       ((r = read(fds[0], out + n, sizeof(out) - 1 - (size_t)n)) > 0 ||
	        (r < 0 && errno == EINTR)))
		n += r > 0 ? r : 0;
	close(fds[0]);
	return st == 0 && n > 1 ? 0 : -1;
}

/* Fetches KIND of build-id HEX for module path, saying in notes what became of it.  Returns 1
 * if it is in the cache now. */
static int fetch_one(const char *cache, const char *hex, const char *kind, const char *path,
                     struct ptrec_warnings *notes)
{
	char find[4096], curl[4096], dest[4200];
	struct stat sb;
	int rc;

	snprintf(dest, sizeof(dest), "%s/%s/%s", cache, hex, kind);
	if (stat(dest, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0)
		return 0; /* there already, and was not usable: fetching again would not help */
	if (make_dirs(cache) != 0) { /* debuginfod-find makes only the last one */
		ptrec_warn(notes, "debuginfod: cannot make the cache %s: %s", cache, strerror(errno));
		return 0;
	}
	if (on_path("debuginfod-find", find, sizeof(find)))
		rc = fetch_find(find, cache, hex, kind);
	else if (on_path("curl", curl, sizeof(curl)))
		rc = fetch_curl(curl, cache, hex, kind);
	else {
		ptrec_warn(notes, "debuginfod: neither debuginfod-find (elfutils) nor curl is "
		           "installed: cannot fetch the %s of %s", kind, path);
		return 0;
	}
	if (rc) {
		ptrec_warn(notes, "debuginfod: no server of DEBUGINFOD_URLS has the %s of %s "
		           "(build-id %s)", kind, path, hex);
		return 0;
	}
	ptrec_warn(notes, "debuginfod: fetched the %s of %s (build-id %s) into %s", kind, path, hex,
	           cache);
	return 1;
}

size_t tool_debuginfod_fetch(struct ptrec_report *r, const char *cache,
                             struct ptrec_warnings *notes)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	size_t got = 0;

	if (!urls || !urls[strspn(urls, " \t")] || !cache)
		return 0;
	for (size_t i = 0; i < r->sym.nmods; i++) {
		const struct ptrec_module *m = &r->sym.mods[i];
		char hex[2 * 64 + 1];
		if (m->state == 0 || !m->lacks || !m->dump_id || m->dump_id_len < 2 ||
		    m->dump_id_len > 64)
			continue;
		for (size_t k = 0; k < m->dump_id_len; k++)
			snprintf(hex + 2 * k, 3, "%02x", m->dump_id[k]);
		if (m->lacks & PTREC_MODULE_NO_FILE)
			got += fetch_one(cache, hex, "executable", m->path, notes);
		got += fetch_one(cache, hex, "debuginfo", m->path, notes);
	}
	return got;
}
