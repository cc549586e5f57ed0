/* dump_path.c — where a crash's dump goes, and writing it there: dumpability, the places in
 * order (core/report_dirs.h), names that cannot be planted, a descriptor kept in reserve, and
 * falling back to the next place when the disk is full.
 *
 * ASYNC-SIGNAL-SAFE ISLAND: ptrec_dump_save runs inside the crash handler.  It may not call
 * malloc/free, stdio, getenv, time/localtime, or take locks; only open/read/write/close/
 * unlink/mkdir/access/fstatat/prctl/uname/getrlimit/clock_gettime and raw syscalls, on static
 * buffers.  ptrec_crash_prepare fills those buffers at ptrec_init.
 *
 * Rules (README "Where reports go", libptrec(3)):
 * - Dumpability, read with prctl(PR_GET_DUMPABLE) at the moment of the crash, as the kernel
 *   decides about core files: 0 (PR_SET_DUMPABLE 0, or credentials changed while
 *   fs.suid_dumpable is 0) writes nothing; 2 (credentials changed, fs.suid_dumpable 2) writes
 *   only next to the core file and only when core_pattern is an absolute path; 1 writes.
 * - A directory is used only if the real user may write it (access(2) checks the real uid and
 *   gid), so a setuid program never creates files where the user who ran it could not.
 * - Places in order: PTREC_DIR, next to the core file (crashes, plain core_pattern),
 *   $STATE_DIRECTORY, $LOGS_DIRECTORY, the cwd, $XDG_STATE_HOME/ptrec or
 *   ~/.local/state/ptrec (created 0700), /var/tmp, /tmp.
 * - Names: "<core>.ptrec" next to the core, else "ptrec.COMM.PID.TIME[.TAG][.N].ptrec"; in a
 *   world-writable directory the name carries 8 random hex digits instead of .N, so nobody can
 *   plant it in advance.  The report's name DUMP.txt is created (O_EXCL) together with the
 *   dump: when it is taken, the dump moves to the next name.
 * - ENOSPC, EDQUOT or EFBIG while writing: both files are removed and the next place tried.
 * - EMFILE/ENFILE: the descriptor reserved at init is closed and the open retried; EMFILE
 *   again (a snapshot in a process whose soft RLIMIT_NOFILE leaves no number free): a child
 *   sharing the descriptor table, with a limit of its own raised, opens it. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/fd_id.h"
#include "core/safe_str.h"
#include "crash/crash.h"

#ifndef __WCLONE
#define __WCLONE 0x80000000
#endif

/* Prepared at init: the environment of the places, and the reserved descriptor. */
static char env_state[PTREC_PATH_MAX], env_logs[PTREC_PATH_MAX];
static char env_xdg[PTREC_PATH_MAX], env_home[PTREC_PATH_MAX];
static int reserve_fd = -1;
static struct ptrec_fd_id reserve_id;
static int private_tmp, private_var_tmp; /* a systemd unit's PrivateTmp= mounts */

/* Static buffers: only the dump owner (one thread) or the snapshot lock holder uses them,
 * indexed by slot (0 crash, 1 snapshot). */
struct path_work {
	char pattern[1024];
	char cwd[PTREC_PATH_MAX];
	char exe[PTREC_PATH_MAX];
	char comm[32];
	char core[PTREC_PATH_MAX];
	char base[PTREC_PATH_MAX];
	struct utsname uts;
	struct ptrec_place places[PTREC_PLACE_COUNT_];
	char why[256];            /* why no dump was written */
};
static struct path_work work[2];

static void env_copy(const char *s, char *buf, size_t cap)
{
	buf[0] = '\0';
	if (s && strlen(s) < cap)
		ptrec_strlcpy(buf, s, cap);
}

/* 1 if fd is still our reserve: an O_PATH descriptor of the same /dev/null (the application
 * may have closed ours and opened /dev/null itself under the same number). */
static int reserve_is_ours(int fd)
{
	int fl = fd >= 0 ? fcntl(fd, F_GETFL) : -1;
	return fl >= 0 && (fl & O_PATH) && ptrec_fd_id_same(fd, &reserve_id);
}

/* Opens the reserved descriptor unless ours is still in place. */
static void reserve_take(void)
{
	if (reserve_is_ours(reserve_fd))
		return;
	reserve_fd = open("/dev/null", O_PATH | O_CLOEXEC);
	ptrec_fd_id_take(reserve_fd, &reserve_id);
}

/* Closes the reserved descriptor if it is still ours (never one the application reused).
 * Returns 1 if a descriptor was freed. */
static int reserve_release(void)
{
	int fd = reserve_fd;
	reserve_fd = -1;
	return reserve_is_ours(fd) && close(fd) == 0;
}

/* Notes whether a mountinfo line mounts a private /tmp or /var/tmp (the last line wins). */
static void note_mount(const char *line, size_t len)
{
	int r = ptrec_mountinfo_private(line, len, "/tmp");
	if (r >= 0)
		private_tmp = r;
	r = ptrec_mountinfo_private(line, len, "/var/tmp");
	if (r >= 0)
		private_var_tmp = r;
}

/* Reads /proc/self/mountinfo once (at ptrec_init) for private_tmp and private_var_tmp.  Lines
 * longer than the line buffer keep their start, which holds the fields looked at. */
static void find_private_tmps(void)
{
	char buf[4096], line[1024];
	size_t ll = 0;
	int e = errno;
	int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);

	private_tmp = private_var_tmp = 0;
	while (fd >= 0) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] == '\n') {
				note_mount(line, ll);
				ll = 0;
			} else if (ll < sizeof(line)) {
				line[ll++] = buf[i];
			}
		}
	}
	if (ll)
		note_mount(line, ll);
	if (fd >= 0)
		close(fd);
	errno = e;
}

/* Only a dump right in the private directory (the /var/tmp and /tmp places, or a core file's
 * there) is noted: one in a folder under it was put there on purpose (PTREC_DIR, the cwd). */
const char *ptrec_dump_private_dir(const char *dump)
{
	if (private_var_tmp && strncmp(dump, "/var/tmp/", 9) == 0 && !strchr(dump + 9, '/'))
		return "/var/tmp";
	if (private_tmp && strncmp(dump, "/tmp/", 5) == 0 && !strchr(dump + 5, '/'))
		return "/tmp";
	return NULL;
}

void ptrec_crash_prepare(const char *state_dir, const char *logs_dir, const char *xdg_state_home,
                         const char *home)
{
	env_copy(state_dir, env_state, sizeof(env_state));
	env_copy(logs_dir, env_logs, sizeof(env_logs));
	env_copy(xdg_state_home, env_xdg, sizeof(env_xdg));
	env_copy(home, env_home, sizeof(env_home));
	reserve_take();
	find_private_tmps();
	ptrec_root_prepare();
	ptrec_dump_prepare_auxv();
}

void ptrec_crash_prepare_after_fork(void)
{
	reserve_take();
}

int ptrec_crash_reserved_fd(void)
{
	return reserve_fd;
}

/* What the opener child (below) opens, and its result. */
struct opener {
	const char *path;
	int flags;
	mode_t mode;
	long fd;   /* the descriptor, or -1 */
	int err;   /* errno of a failed open */
};

/* The opener's stacks, one per slot (0 crash, 1 snapshot). */
static uint8_t opener_stack[2][16384] __attribute__((aligned(16)));

/* A process of its own (no CLONE_THREAD: its own copy of the limits) sharing the caller's
 * memory and descriptor table: it raises its own soft RLIMIT_NOFILE to the hard one, never the
 * application's, and opens.  It writes only its stack, *o and the caller's errno (they share
 * the thread pointer; the caller is suspended by CLONE_VFORK meanwhile).  Raw system calls
 * only: open is a cancellation point that would look at the caller's thread. */
static int opener_main(void *arg)
{
	struct opener *o = arg;
	struct rlimit r;
	if (syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &r) == 0 && r.rlim_cur < r.rlim_max) {
		r.rlim_cur = r.rlim_max;
		syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, &r, NULL);
	}
	o->fd = syscall(SYS_openat, AT_FDCWD, o->path, o->flags, o->mode);
	o->err = o->fd < 0 ? errno : 0;
	syscall(SYS_exit, 0);
	return 0;
}

/* Opens path in an opener child (above).  Returns the descriptor, or -1 with errno. */
static int open_in_child(const char *path, int flags, mode_t mode)
{
	static char named[2][PTREC_PATH_MAX];
	int slot = ptrec_crash_owner == (int)ptrec_gettid() ? 0 : 1;
	struct opener o = {.path = path, .flags = flags, .mode = mode, .fd = -1, .err = EMFILE};
	uint8_t *top = opener_stack[slot] + sizeof(opener_stack[0]);
	int status;

	/* /proc/self and /proc/thread-self would name the child, gone once it has opened. */
	if (strncmp(path, "/proc/self/", 11) == 0 || strncmp(path, "/proc/thread-self/", 18) == 0) {
		struct ptrec_sbuf b;
		ptrec_sbuf_init(&b, named[slot], sizeof(named[slot]));
		ptrec_sbuf_str(&b, "/proc/");
		ptrec_sbuf_dec(&b, getpid());
		if (path[6] == 't') {
			ptrec_sbuf_str(&b, "/task/");
			ptrec_sbuf_dec(&b, ptrec_gettid());
		}
		ptrec_sbuf_str(&b, strchr(path + 6, '/'));
		if (b.overflow) {
			errno = ENAMETOOLONG;
			return -1;
		}
		o.path = named[slot];
	}
	/* Its exit signal is 0: no SIGCHLD, and waitpid(-1) without __WCLONE never returns it. */
	pid_t pid = clone(opener_main, top, CLONE_VM | CLONE_FILES | CLONE_VFORK, &o);
	if (pid < 0) {
		errno = EMFILE;
		return -1;
	}
	while (syscall(SYS_wait4, pid, &status, __WCLONE, NULL) < 0 && errno == EINTR)
		;
	errno = o.err;
	return (int)o.fd;
}

int ptrec_crash_open(const char *path, int flags, mode_t mode)
{
	int fd = open(path, flags, mode);
	if (fd >= 0 || errno != EMFILE)
		return fd;
	/* Every number below the soft limit is taken (a snapshot of a process that lowered it;
	 * the crash path raises the process's limit itself): a descriptor above it.  The reserve
	 * comes last: what a process that cannot raise its limit has. */
	fd = open_in_child(path, flags, mode);
	if (fd < 0 && errno == EMFILE && reserve_release())
		fd = open(path, flags, mode);
	return fd;
}

int ptrec_crash_open_read(const char *path)
{
	return ptrec_crash_open(path, O_RDONLY | O_CLOEXEC, 0);
}

/* Opens path for a new dump, using the reserve when no descriptor is free. */
static int create_file(const char *path)
{
	return ptrec_crash_open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
}

/* 8 hex digits nobody can predict: getrandom, else the clock's nanoseconds mixed with the
 * pid and an address (ASLR). */
static void put_random(struct ptrec_sbuf *b)
{
	static const char hex[] = "0123456789abcdef";
	uint32_t v = 0;
	if (syscall(SYS_getrandom, &v, sizeof(v), 1 /* GRND_NONBLOCK */) != (long)sizeof(v)) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		v = (uint32_t)ts.tv_nsec * 2654435761u ^ (uint32_t)getpid() ^
		    (uint32_t)(uintptr_t)&ts;
	}
	for (int i = 0; i < 8; i++, v >>= 4)
		ptrec_sbuf_char(b, hex[v & 15]);
}

/* Makes the directory of a user-state place (and its parents below $HOME) with mode 0700. */
static void make_state_dir(const char *dir)
{
	char tmp[PTREC_PATH_MAX];
	size_t n = ptrec_strlcpy(tmp, dir, sizeof(tmp));
	if (n >= sizeof(tmp))
		return;
	for (size_t i = 1; i <= n; i++) {
		if (tmp[i] != '/' && tmp[i] != '\0')
			continue;
		char c = tmp[i];
		tmp[i] = '\0';
		if (access(tmp, F_OK) != 0)
			mkdir(tmp, 0700);
		tmp[i] = c;
	}
}

/* Returns 1 if the real user may create files in the directory of path (the whole path for
 * directories, is_file = 0), else 0 with errno set. */
static int real_user_may_write(const char *path, int is_file)
{
	char dir[PTREC_PATH_MAX];
	size_t n = ptrec_strlcpy(dir, path, sizeof(dir));
	if (n >= sizeof(dir)) {
		errno = ENAMETOOLONG;
		return 0;
	}
	if (is_file) {
		while (n && dir[n - 1] != '/')
			n--;
		if (!n)
			return access(".", W_OK | X_OK) == 0;
		dir[n == 1 ? 1 : n - 1] = '\0';
	}
	return access(dir, W_OK | X_OK) == 0;
}

/* The outcome of one attempt at one name. */
enum attempt { ATT_DONE, ATT_TAKEN, ATT_NEXT_PLACE };

/* Creates dump (and reserves DUMP.txt when a report will run), writes the dump.  On ENOSPC and
 * the like removes both and says ATT_NEXT_PLACE; a taken name says ATT_TAKEN. */
static enum attempt try_name(struct ptrec_dump_request *req, int slot, const char *dump,
                             int want_report, int *err, int *rc)
{
	int fd = create_file(dump);
	if (fd < 0) {
		*err = errno;
		return errno == EEXIST ? ATT_TAKEN : ATT_NEXT_PLACE;
	}
	if (want_report) {
		int r = ptrec_report_reserve(dump);
		if (r == -EEXIST) {
			close(fd);
			unlink(dump);
			*err = EEXIST;
			return ATT_TAKEN;
		}
	}
	req->fd = fd;
	*rc = ptrec_dump_write(req, slot);
	int e = errno;
	close(fd);
	if (*rc != 0 && (e == ENOSPC || e == EDQUOT || e == EFBIG)) {
		unlink(dump);
		ptrec_report_unreserve(dump);
		*err = e;
		return ATT_NEXT_PLACE;
	}
	return ATT_DONE;
}

/* Fills w->places for this process. */
static unsigned list_places(struct path_work *w, int signo, pid_t tid, const char *tag,
                            long long now)
{
	struct ptrec_place_env env;
	struct ptrec_core_info in;
	struct rlimit rl;
	char uses[16];

	memset(&env, 0, sizeof(env));
	w->core[0] = '\0';
	if (!tag) {
		ptrec_self_exe(w->exe, PTREC_PATH_MAX);
		ptrec_read_small_file("/proc/sys/kernel/core_pattern", w->pattern, sizeof(w->pattern));
		ptrec_read_small_file("/proc/sys/kernel/core_uses_pid", uses, sizeof(uses));
		if (uname(&w->uts) != 0)
			w->uts.nodename[0] = '\0';
		if (getrlimit(RLIMIT_CORE, &rl) != 0)
			rl.rlim_cur = 0;
		memset(&in, 0, sizeof(in));
		in.pattern = w->pattern[0] ? w->pattern : "core";
		in.uses_pid = uses[0] == '1';
		in.cwd = w->cwd;
		in.pid = getpid();
		in.tid = tid;
		in.comm = w->comm;
		in.exe = w->exe;
		in.time = now;
		in.hostname = w->uts.nodename;
		in.uid = (long)getuid();
		in.gid = (long)getgid();
		in.signo = signo;
		in.core_limit = (unsigned long long)rl.rlim_cur;
		if (ptrec_core_expand(&in, w->core, sizeof(w->core)) != 0)
			w->core[0] = '\0';
		env.core_path = w->core;
	}
	/* Paths from ptrec_init's environment are the host's: under a new root (chroot) they are
	 * found inside it. */
	env.dump_dir = ptrec_root_inside(ptrec_crash.dump_dir);
	env.state_dir = ptrec_root_inside(env_state);
	env.logs_dir = ptrec_root_inside(env_logs);
	env.cwd = w->cwd;
	env.xdg_state_home = ptrec_root_inside(env_xdg);
	env.home = ptrec_root_inside(env_home);
	return ptrec_places(&env, w->places);
}

/* The symbolic name of the errors a place can fail with (strerror is not signal-safe). */
static const char *errno_name(int e)
{
	switch (e) {
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case EROFS: return "EROFS";
	case ENOENT: return "ENOENT";
	case ENOTDIR: return "ENOTDIR";
	case ELOOP: return "ELOOP";
	case ENAMETOOLONG: return "ENAMETOOLONG";
	case EMFILE: return "EMFILE";
	case ENFILE: return "ENFILE";
	case ENOSPC: return "ENOSPC";
	case EDQUOT: return "EDQUOT";
	case EFBIG: return "EFBIG";
	case EIO: return "EIO";
	default: return "error";
	}
}

static void set_why(struct path_work *w, const char *a, const char *b)
{
	struct ptrec_sbuf s;
	ptrec_sbuf_init(&s, w->why, sizeof(w->why));
	ptrec_sbuf_str(&s, a);
	ptrec_sbuf_str(&s, b);
}

int ptrec_dump_save(struct ptrec_dump_request *req, int slot, const char *tag, char *dump,
                    size_t dumplen)
{
	struct path_work *w = &work[slot ? 1 : 0];
	struct timespec now;
	int err = ENOENT, rc = 0;
	int dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
	int want_report = !(ptrec_crash.cfg.flags & PTREC_F_NO_REPORT) &&
	                  ptrec_crash.cfg.report_timeout_ms != 0;

	dump[0] = '\0';
	w->why[0] = '\0';
	reserve_take(); /* again, if an earlier snapshot used it */
	if (dumpable == 0) {
		set_why(w, "the process is not dumpable (PR_SET_DUMPABLE 0, or it changed "
		        "credentials and fs.suid_dumpable is 0; a server that drops privileges "
		        "allows dumps again with prctl(PR_SET_DUMPABLE, 1), Apache with "
		        "CoreDumpDirectory)", "");
		return -PTREC_EPERM;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	if (syscall(SYS_getcwd, w->cwd, PTREC_PATH_MAX) <= 0)
		w->cwd[0] = '\0';
	if (ptrec_read_small_file("/proc/self/comm", w->comm, sizeof(w->comm)) < 0)
		prctl(PR_GET_NAME, w->comm, 0, 0, 0); /* no descriptor free: this thread's name */
	unsigned n = list_places(w, req->signo, req->tid, tag, (long long)now.tv_sec);
	ptrec_dump_prepare(slot, req->tid, req->ucontext);

	for (unsigned i = 0; i < n; i++) {
		const struct ptrec_place *p = &w->places[i];
		struct ptrec_sbuf b;
		struct stat st;
		enum attempt a = ATT_TAKEN;

		/* suid_dumpable 2: only a root-only core place named by an absolute pattern. */
		if (dumpable == 2 && (p->kind != PTREC_PLACE_CORE || w->pattern[0] != '/'))
			continue;
		if (p->kind == PTREC_PLACE_CORE) {
			if (!real_user_may_write(p->path, 1)) {
				err = errno;
				continue;
			}
			ptrec_sbuf_init(&b, dump, dumplen);
			ptrec_sbuf_str(&b, p->path);
			ptrec_sbuf_str(&b, ".ptrec");
			if (b.overflow || b.len + 5 >= dumplen)
				continue;
			a = try_name(req, slot, dump, want_report, &err, &rc);
			if (a == ATT_DONE)
				goto done;
			continue;
		}
		if (p->kind == PTREC_PLACE_HOME)
			make_state_dir(p->path);
		if (!real_user_may_write(p->path, 0)) {
			err = errno;
			continue;
		}
		int shared = p->shared || (fstatat(AT_FDCWD, p->path, &st, 0) == 0 &&
		                           (st.st_mode & S_IWOTH));
		if (ptrec_fallback_base(p->path, w->comm, (long)getpid(), (long long)now.tv_sec,
		                        w->base, sizeof(w->base)) != 0)
			continue;
		for (int k = 0; k < (shared ? 16 : 100) && a == ATT_TAKEN; k++) {
			ptrec_sbuf_init(&b, dump, dumplen);
			ptrec_sbuf_str(&b, w->base);
			if (tag) {
				ptrec_sbuf_char(&b, '.');
				ptrec_sbuf_str(&b, tag);
			}
			if (shared) {
				ptrec_sbuf_char(&b, '.');
				put_random(&b);
			} else if (k) {
				ptrec_sbuf_char(&b, '.');
				ptrec_sbuf_dec(&b, k);
			}
			ptrec_sbuf_str(&b, ".ptrec");
			if (b.overflow || b.len + 5 >= dumplen)
				break;
			a = try_name(req, slot, dump, want_report, &err, &rc);
		}
		if (a == ATT_DONE)
			goto done;
	}
	dump[0] = '\0';
	if (dumpable == 2 && w->pattern[0] != '/')
		set_why(w, "the process changed credentials and fs.suid_dumpable is 2: files go "
		        "only next to a core file named by an absolute core_pattern", "");
	else if (err == EMFILE || err == ENFILE)
		set_why(w, "no free file descriptor, and the one reserved at ptrec_init was gone: ",
		        errno_name(err));
	else if (err == ENOSPC || err == EDQUOT || err == EFBIG)
		set_why(w, "no space left in any directory tried: ", errno_name(err));
	else if (err == EEXIST)
		set_why(w, "every file name was taken", "");
	else
		set_why(w, "no directory the user may write: ", errno_name(err));
	return -PTREC_EIO;
done:
	return rc;
}

const char *ptrec_dump_failure(int slot)
{
	return work[slot ? 1 : 0].why;
}
