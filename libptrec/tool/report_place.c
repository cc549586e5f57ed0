/* report_place.c — where a crash report of this environment would go and why (`ptrec info`),
 * and the directories `ptrec list` searches: the places of core/report_dirs.h, each with the
 * verdict the crash path would reach (the real user's access(2)). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tool/tool.h"

static char cwd_buf[4096];

/* The directory part of a core file path pattern ("." for a bare name). */
static void dir_of(const char *path, char *out, size_t cap)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		snprintf(out, cap, ".");
	else if (slash == path)
		snprintf(out, cap, "/");
	else
		snprintf(out, cap, "%.*s", (int)(slash - path), path);
}

/* Fills the verdict of one place. */
static void judge(struct tool_place *t)
{
	char dir[4096];
	struct stat st;

	if (t->p.kind == PTREC_PLACE_CORE)
		dir_of(t->p.path, dir, sizeof(dir));
	else
		snprintf(dir, sizeof(dir), "%s", t->p.path);
	if (access(dir, W_OK | X_OK) == 0) {
		t->usable = 1;
		if (t->p.kind == PTREC_PLACE_CORE)
			snprintf(t->why, sizeof(t->why), "writable (crashes only; the name is taken as is)");
		else if (t->p.shared || (stat(dir, &st) == 0 && (st.st_mode & S_IWOTH)))
			snprintf(t->why, sizeof(t->why), "writable; shared, so names get a random suffix");
		else
			snprintf(t->why, sizeof(t->why), "writable");
		return;
	}
	if (t->p.kind == PTREC_PLACE_HOME && errno == ENOENT) {
		/* Made on demand: usable when the nearest existing parent is writable. */
		char up[4096];
		snprintf(up, sizeof(up), "%s", dir);
		while (strrchr(up, '/') && strrchr(up, '/') != up) {
			*strrchr(up, '/') = '\0';
			if (access(up, F_OK) == 0) {
				t->usable = access(up, W_OK | X_OK) == 0;
				snprintf(t->why, sizeof(t->why), t->usable ? "made (0700) when needed"
				         : "missing, and %s is not writable", up);
				return;
			}
		}
	}
	snprintf(t->why, sizeof(t->why), "not usable: %s", strerror(errno));
}

unsigned tool_places(const char *core_pattern, struct tool_place out[PTREC_PLACE_COUNT_])
{
	struct ptrec_place_env env;
	struct ptrec_place places[PTREC_PLACE_COUNT_];
	char core[4096];

	memset(&env, 0, sizeof(env));
	if (!getcwd(cwd_buf, sizeof(cwd_buf)))
		cwd_buf[0] = '\0';
	if (core_pattern && core_pattern[0] && core_pattern[0] != '|') {
		if (core_pattern[0] == '/')
			snprintf(core, sizeof(core), "%s", core_pattern);
		else
			snprintf(core, sizeof(core), "%s/%s", cwd_buf, core_pattern);
		core[strcspn(core, "\n")] = '\0';
		env.core_path = core;
	}
	env.dump_dir = getenv("PTREC_DIR");
	env.state_dir = getenv("STATE_DIRECTORY");
	env.logs_dir = getenv("LOGS_DIRECTORY");
	env.cwd = cwd_buf;
	env.xdg_state_home = getenv("XDG_STATE_HOME");
	env.home = getenv("HOME");
	unsigned n = ptrec_places(&env, places);
	for (unsigned i = 0; i < n; i++) {
		memset(&out[i], 0, sizeof(out[i]));
		out[i].p = places[i];
		judge(&out[i]);
	}
	return n;
}
