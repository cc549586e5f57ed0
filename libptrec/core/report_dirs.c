/* report_dirs.c — where crash files go: core file names, fallback names, the ordered places.
 *
 * ASYNC-SIGNAL-SAFE ISLAND: runs inside the crash handler.  Pure string work on the caller's
 * buffers: no malloc, stdio, getenv, locks or system calls.
 *
 * The kernel names a core file by expanding /proc/sys/kernel/core_pattern (%p %P %i %I %e %E
 * %t %h %u %g %s %c %%; unknown specifiers vanish; '/' in %e %E %h becomes '!'), appends
 * ".PID" when core_uses_pid is set and the pattern has no %p, and resolves a relative result
 * against the crashing process's cwd. */
#include "config.h"

#include <string.h>

#include "ptrec.h"
#include "core/report_dirs.h"
#include "core/safe_str.h"

/* Appends s with '/' replaced by '!' (the kernel's escaping of %e %E %h). */
static void put_escaped(struct ptrec_sbuf *b, const char *s)
{
	for (; s && *s; s++)
		ptrec_sbuf_char(b, *s == '/' ? '!' : *s);
}

int ptrec_core_expand(const struct ptrec_core_info *in, char *out, size_t outlen)
{
	struct ptrec_sbuf b;
	const char *p = in->pattern;
	int saw_pid = 0;

	if (!p || !*p || *p == '\n')
		return -PTREC_EINVAL;
	if (*p == '|')
		return -PTREC_ENOSUPP;
	ptrec_sbuf_init(&b, out, outlen);
	if (*p != '/' && in->cwd && in->cwd[0]) {
		ptrec_sbuf_str(&b, in->cwd);
		if (in->cwd[strlen(in->cwd) - 1] != '/')
			ptrec_sbuf_char(&b, '/');
	}
	for (; *p && *p != '\n'; p++) {
		if (*p != '%') {
			ptrec_sbuf_char(&b, *p);
			continue;
		}
		p++;
		switch (*p) {
		case '%': ptrec_sbuf_char(&b, '%'); break;
		case 'p': saw_pid = 1; ptrec_sbuf_dec(&b, in->pid); break;
		case 'P': ptrec_sbuf_dec(&b, in->pid); break;
		case 'i': case 'I': ptrec_sbuf_dec(&b, in->tid); break;
		case 'u': ptrec_sbuf_dec(&b, in->uid); break;
		case 'g': ptrec_sbuf_dec(&b, in->gid); break;
		case 's': ptrec_sbuf_dec(&b, in->signo); break;
		case 't': ptrec_sbuf_dec(&b, in->time); break;
		case 'c': ptrec_sbuf_udec(&b, in->core_limit); break;
		case 'h': put_escaped(&b, in->hostname); break;
		case 'e': put_escaped(&b, in->comm); break;
		case 'E': put_escaped(&b, in->exe); break;
		case '\0': p--; break; /* a lone '%' at the end vanishes */
		default: break;        /* unknown specifiers vanish, as in the kernel */
		}
	}
	if (in->uses_pid && !saw_pid) {
		ptrec_sbuf_char(&b, '.');
		ptrec_sbuf_dec(&b, in->pid);
	}
	return b.overflow ? -PTREC_EOVERFLOW : 0;
}

/* Keeps a file-name-safe version of comm: [A-Za-z0-9._-], anything else becomes '_'. */
static void put_safe_name(struct ptrec_sbuf *b, const char *s)
{
	if (!s || !*s)
		s = "unknown";
	for (; *s; s++) {
		char c = *s;
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		         c == '.' || c == '_' || c == '-';
		ptrec_sbuf_char(b, ok ? c : '_');
	}
}

int ptrec_fallback_base(const char *dir, const char *comm, long pid, long long time, char *out,
                        size_t outlen)
{
	struct ptrec_sbuf b;

	ptrec_sbuf_init(&b, out, outlen);
	ptrec_sbuf_str(&b, dir);
	if (!dir[0] || dir[strlen(dir) - 1] != '/')
		ptrec_sbuf_char(&b, '/');
	ptrec_sbuf_str(&b, "ptrec.");
	put_safe_name(&b, comm);
	ptrec_sbuf_char(&b, '.');
	ptrec_sbuf_dec(&b, pid);
	ptrec_sbuf_char(&b, '.');
	ptrec_sbuf_dec(&b, time);
	return b.overflow ? -PTREC_EOVERFLOW : 0;
}

/* Appends place kind k with the path made of a, the first ':'-separated entry of a when list is
 * set, then b.  Returns the new count. */
static unsigned add(struct ptrec_place *out, unsigned n, enum ptrec_place_kind k, const char *a,
                    int list, const char *b)
{
	struct ptrec_sbuf s;
	size_t len;

	if (!a || !*a)
		return n;
	len = list && strchr(a, ':') ? (size_t)(strchr(a, ':') - a) : strlen(a);
	if (!len)
		return n;
	ptrec_sbuf_init(&s, out[n].path, sizeof(out[n].path));
	ptrec_sbuf_mem(&s, a, len);
	ptrec_sbuf_str(&s, b);
	if (s.overflow)
		return n;
	out[n].kind = k;
	out[n].shared = k == PTREC_PLACE_VAR_TMP || k == PTREC_PLACE_TMP;
	return n + 1;
}

unsigned ptrec_places(const struct ptrec_place_env *env, struct ptrec_place out[PTREC_PLACE_COUNT_])
{
	unsigned n = 0;

	n = add(out, n, PTREC_PLACE_DIR, env->dump_dir, 0, "");
	n = add(out, n, PTREC_PLACE_CORE, env->core_path, 0, "");
	n = add(out, n, PTREC_PLACE_STATE, env->state_dir, 1, "");
	n = add(out, n, PTREC_PLACE_LOGS, env->logs_dir, 1, "");
	n = add(out, n, PTREC_PLACE_CWD, env->cwd, 0, "");
	if (env->xdg_state_home && env->xdg_state_home[0] == '/')
		n = add(out, n, PTREC_PLACE_HOME, env->xdg_state_home, 0, "/ptrec");
	else if (env->home && env->home[0] == '/' && env->home[1])
		n = add(out, n, PTREC_PLACE_HOME, env->home, 0, "/.local/state/ptrec");
	n = add(out, n, PTREC_PLACE_VAR_TMP, "/var/tmp", 0, "");
	n = add(out, n, PTREC_PLACE_TMP, "/tmp", 0, "");
	return n;
}

/* Sets *f and *flen to field number i (0-based, space-separated) of line; 0 if there is none. */
static int field(const char *line, size_t len, unsigned i, const char **f, size_t *flen)
{
	size_t p = 0;

	for (;;) {
		size_t start = p;
		while (p < len && line[p] != ' ' && line[p] != '\n')
			p++;
		if (p == start)
			return 0;
		if (i-- == 0) {
			*f = line + start;
			*flen = p - start;
			return 1;
		}
		if (p >= len || line[p] != ' ')
			return 0;
		p++;
	}
}

int ptrec_mountinfo_private(const char *line, size_t len, const char *mount_point)
{
	static const char mark[] = "/systemd-private-";
	const char *root, *mp;
	size_t rlen, mlen;

	if (!field(line, len, 3, &root, &rlen) || !field(line, len, 4, &mp, &mlen))
		return -1;
	if (mlen != strlen(mount_point) || memcmp(mp, mount_point, mlen) != 0)
		return -1;
	for (size_t i = 0; i + sizeof(mark) - 1 <= rlen; i++)
		if (memcmp(root + i, mark, sizeof(mark) - 1) == 0)
			return 1;
	return 0;
}

const char *ptrec_place_name(enum ptrec_place_kind kind)
{
	switch (kind) {
	case PTREC_PLACE_DIR: return "PTREC_DIR";
	case PTREC_PLACE_CORE: return "next to the core file";
	case PTREC_PLACE_STATE: return "STATE_DIRECTORY";
	case PTREC_PLACE_LOGS: return "LOGS_DIRECTORY";
	case PTREC_PLACE_CWD: return "current directory";
	case PTREC_PLACE_HOME: return "user state directory";
	case PTREC_PLACE_VAR_TMP: return "/var/tmp";
	case PTREC_PLACE_TMP: return "/tmp";
	default: return "unknown";
	}
}
