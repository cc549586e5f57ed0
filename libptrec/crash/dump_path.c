/* dump_path.c — where crash files go: "next to the core file", else a fallback directory.
 *
 * ASYNC-SIGNAL-SAFE ISLAND: runs inside the crash handler.  It may not call malloc/free,
 * stdio, getenv, time/localtime, or take locks; only open/read/write/close/access/uname/
 * getrlimit/clock_gettime and raw syscalls, on static buffers.
 *
 * The kernel names a core file by expanding /proc/sys/kernel/core_pattern (%p %P %i %I %e %E
 * %t %h %u %g %s %c %%; unknown specifiers vanish; '/' in %e %E %h becomes '!'), appends
 * ".PID" when core_uses_pid is set and the pattern has no %p, and resolves a relative result
 * against the crashing process's cwd.  We write "<core path>.ptrec" and "<core path>.ptrec.txt"
 * there, even when RLIMIT_CORE is 0 (no core is written but the place is the same).  When the
 * pattern pipes to a program (systemd-coredump, apport), the directory is not writable, or the
 * file already exists, the dump goes to PTREC_DIR, else the cwd, else /tmp, as
 * "ptrec.COMM.PID.TIME.ptrec". */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "core/safe_str.h"
#include "crash/crash.h"

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

/* Static buffers: only the dump owner (one thread) or the snapshot lock holder uses them,
 * indexed by `which` (0 crash, 1 snapshot). */
static char pattern_buf[2][1024];
static char cwd_buf[2][PTREC_PATH_MAX];
static char exe_buf[2][PTREC_PATH_MAX];
static char comm_buf[2][32];
static char dir_buf[2][PTREC_PATH_MAX];
static struct utsname uts_buf[2];

/* Creates base + ".ptrec" (0600, O_EXCL|O_NOFOLLOW), trying ".N" suffixes when the name is
 * taken and `unique` is set.  Returns the fd with the path in dump, or -1. */
static int create_at(const char *base, int unique, char *dump, size_t dumplen)
{
	for (int n = 0; n < (unique ? 100 : 1); n++) {
		struct ptrec_sbuf b;
		ptrec_sbuf_init(&b, dump, dumplen);
		ptrec_sbuf_str(&b, base);
		if (n) {
			ptrec_sbuf_char(&b, '.');
			ptrec_sbuf_dec(&b, n);
		}
		ptrec_sbuf_str(&b, ".ptrec");
		if (b.overflow || b.len + 5 >= dumplen) /* room for ".txt" */
			return -1;
		int fd = open(dump, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST)
			return -1;
	}
	return -1;
}

/* Returns 1 if the directory part of path is writable. */
static int dir_writable(const char *path, char *dir, size_t dirlen)
{
	size_t n = ptrec_strlcpy(dir, path, dirlen);
	while (n && dir[n - 1] != '/')
		n--;
	if (!n)
		return access(".", W_OK | X_OK) == 0;
	dir[n == 1 ? 1 : n - 1] = '\0';
	return access(dir, W_OK | X_OK) == 0;
}

int ptrec_dump_open(int signo, pid_t tid, const char *tag, char *dump, size_t dumplen)
{
	int w = tag ? 1 : 0;
	char *pattern = pattern_buf[w], *cwd = cwd_buf[w], *exe = exe_buf[w], *comm = comm_buf[w];
	char base[PTREC_PATH_MAX];
	struct timespec now;
	struct rlimit rl;
	int fd;

	clock_gettime(CLOCK_REALTIME, &now);
	if (syscall(SYS_getcwd, cwd, PTREC_PATH_MAX) <= 0)
		cwd[0] = '\0';
	ptrec_read_small_file("/proc/self/comm", comm, sizeof(comm_buf[0]));

	if (!tag) {
		struct ptrec_core_info in;
		ssize_t n = readlink("/proc/self/exe", exe, PTREC_PATH_MAX - 1);
		exe[n > 0 ? n : 0] = '\0';
		char uses[16];
		ptrec_read_small_file("/proc/sys/kernel/core_pattern", pattern, sizeof(pattern_buf[0]));
		ptrec_read_small_file("/proc/sys/kernel/core_uses_pid", uses, sizeof(uses));
		if (uname(&uts_buf[w]) != 0)
			uts_buf[w].nodename[0] = '\0';
		if (getrlimit(RLIMIT_CORE, &rl) != 0)
			rl.rlim_cur = 0;
		memset(&in, 0, sizeof(in));
		in.pattern = pattern[0] ? pattern : "core";
		in.uses_pid = uses[0] == '1';
		in.cwd = cwd;
		in.pid = getpid();
		in.tid = tid;
		in.comm = comm;
		in.exe = exe;
		in.time = now.tv_sec;
		in.hostname = uts_buf[w].nodename;
		in.uid = (long)getuid();
		in.gid = (long)getgid();
		in.signo = signo;
		in.core_limit = (unsigned long long)rl.rlim_cur;
		if (ptrec_core_expand(&in, base, sizeof(base)) == 0 &&
		    dir_writable(base, dir_buf[w], PTREC_PATH_MAX)) {
			fd = create_at(base, 0, dump, dumplen);
			if (fd >= 0)
				return fd;
		}
	}

	const char *dirs[3];
	int nd = 0;
	if (ptrec_crash.dump_dir[0])
		dirs[nd++] = ptrec_crash.dump_dir;
	if (cwd[0])
		dirs[nd++] = cwd;
	dirs[nd++] = "/tmp";
	for (int i = 0; i < nd; i++) {
		if (ptrec_fallback_base(dirs[i], comm, (long)getpid(), (long long)now.tv_sec, base,
		                        sizeof(base)) != 0)
			continue;
		if (tag) {
			struct ptrec_sbuf b;
			ptrec_sbuf_init(&b, base + strlen(base), sizeof(base) - strlen(base));
			ptrec_sbuf_char(&b, '.');
			ptrec_sbuf_str(&b, tag);
			if (b.overflow)
				continue;
		}
		fd = create_at(base, 1, dump, dumplen);
		if (fd >= 0)
			return fd;
	}
	dump[0] = '\0';
	return -PTREC_EIO;
}
