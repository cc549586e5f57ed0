/* report_child.c — turns a dump into its text report without trusting the crashed process,
 * and says where everything went: one stderr line and one syslog line per crash.
 * ASYNC-SIGNAL-SAFE ISLAND (the rules are at the end of this comment).
 *
 * The application never sees the processes this starts (servers reap every child with
 * waitpid(-1) and log the ones they did not start): a runner made by a raw clone with no exit
 * signal sends no SIGCHLD when it ends and is invisible to waitpid without __WCLONE; only the
 * caller waits for it.  The runner blocks its signals and starts the tool, which resets every
 * signal to its default and empties its mask, closes every descriptor but 0/1/2 (the
 * application's own, opened without O_CLOEXEC, never reach it) and execs the installed
 * `ptrec report DUMP` by absolute path (never a PATH lookup), stdout and stderr into DUMP.txt;
 * the runner kills it after report_timeout_ms and passes the outcome back in its exit status.
 * A report that did not complete is removed when empty and otherwise ends with a line saying it
 * is partial.  report_timeout_ms 0 runs no tool.  The crash's line ends with the report's crash
 * signature, which only the tool can compute: read back from the report's header (its
 * "signature:" line) through the descriptor the caller holds.
 * With PTREC_F_MINIDUMP, after a crash's report (slot 0; snapshots have none) the runner starts
 * the tool again the same way as `ptrec minidump DUMP -o -`, its stdout into DUMP.dmp (created
 * here 0600 with O_EXCL|O_NOFOLLOW, like DUMP.txt) and its stderr after the report, within what
 * is left of report_timeout_ms; a DUMP.dmp the tool did not complete is removed.
 * The tool's environment is the one of ptrec_init, copied then into static room, without
 * libptrec's LD_PRELOAD entry or PTREC_PRELOAD (the tool never records itself; the heap and
 * environ of the crashed process are not trusted), without DEBUGINFOD_URLS unless
 * PTREC_REPORT_DEBUGINFOD=1 (the report at crash time never goes to the network by itself),
 * and without the dynamic loader's debugging variables (LD_SHOW_AUXV, LD_DEBUG, ...), whose
 * output would land in the report and the minidump.
 *
 * Neither the runner nor the tool copies the application's address space: the runner shares it
 * (CLONE_VM) on a stack of its own mapped at ptrec_init, and the tool is started like vfork
 * (CLONE_VM|CLONE_VFORK, on a second stack) until its execve.  A fork would mark every page of
 * the application copy-on-write, and each page it then writes would fault once: a snapshot's
 * copies cost milliseconds instead of microseconds after each report, and a server with a
 * large heap pays for copying its page tables at every crash and snapshot.  The two children
 * write only their stacks, the slot and the caller's errno (they share its thread pointer; the
 * caller waits with a raw syscall and restores errno itself); their waits, sleeps and opens are
 * raw system calls, never the libc cancellation points that look at the caller's thread.
 *
 * Before the tools run, the runner appends the host's files to the dump (SYSFILE records:
 * /proc/cpuinfo, /etc/lsb-release, /etc/os-release, uname; ptrec_dump_append_host): what describes
 * the machine is read outside the crashed process, which only waits meanwhile.
 *
 * The island's rules: this runs inside the crash handler.  It may not call malloc/free,
 * stdio, fork() (glibc's runs atfork handlers and takes malloc locks), system/popen,
 * syslog(3), or take locks (clone runs no atfork handlers).  The children only call
 * clone/waitpid/kill/nanosleep/fstat/read/write/ftruncate/unlink/dup2/open/close_range/close/
 * rt_sigprocmask/rt_sigaction/execve/exit; the syslog line is one sendto on a socket made at
 * ptrec_init; the signature is read back with pread into a static buffer. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/arch.h"
#include "core/fd_id.h"
#include "core/safe_str.h"
#include "crash/crash.h"

#ifndef __WCLONE
#define __WCLONE 0x80000000
#endif

/* The report child's environment, prepared at ptrec_init (ptrec_report_env_prepare). */
#define REPORT_ENV_MAX 1024
#define REPORT_ENV_BYTES (64u << 10)
static char *report_env[REPORT_ENV_MAX + 1];
static char report_env_buf[REPORT_ENV_BYTES];

/* The signature in the crash line: the report's "signature:" line, within its first
 * SIGNATURE_SCAN bytes, at most SIGNATURE_MAX - 1 bytes of it. */
#define SIGNATURE_MAX 512
#define SIGNATURE_SCAN (16u << 10)
static char scan_buf[SIGNATURE_SCAN + 1];

/* What became of the last report of a slot (0 crash, 1 snapshot). */
enum report_state {
	REPORT_NONE = 0,     /* not attempted */
	REPORT_OK,           /* written completely */
	REPORT_NOT_RUN,      /* report_timeout_ms 0, or no tool */
	REPORT_TIMEOUT,      /* the tool was killed after the timeout */
	REPORT_FAILED,       /* the tool failed (exit status or signal in report_status) */
};

struct report_slot {
	char txt[PTREC_PATH_MAX + 8];  /* DUMP.txt */
	int fd;                        /* DUMP.txt reserved by ptrec_report_reserve, or -1 */
	enum report_state state;       /* outcome */
	int status;                    /* wait status of a failed tool */
	int kept;                      /* 1 if a partial DUMP.txt was kept (marked) */
	int no_tool;                   /* 1 if the tool was not there to run (REPORT_NOT_RUN) */
	char signature[SIGNATURE_MAX]; /* the crash report's signature (slot 0), or "" */
	char dmp[PTREC_PATH_MAX + 8];  /* DUMP.dmp (PTREC_F_MINIDUMP) */
	int dmp_ok;                    /* 1 if DUMP.dmp was written completely */
};

/* In the runner's exit status, beside state << 1 | kept: the minidump was written. */
#define RUNNER_MINIDUMP_OK 0x10

static struct report_slot slots[2] = {{.fd = -1}, {.fd = -1}};

/* The stacks of a slot's runner and tool (ptrec_report_prepare), each above a guard page. */
#define CHILD_STACK (64u << 10)
#define CHILD_STACKS 4 /* a runner's and a tool's for each of the two slots */
static uint8_t *child_stacks; /* 2 slots x 2 stacks, or NULL */
static char line_buf[2 * PTREC_PATH_MAX + 512 + SIGNATURE_MAX];
static char note_buf[PTREC_PATH_MAX + 256];
static char syslog_buf[2 * PTREC_PATH_MAX + 600 + SIGNATURE_MAX];
static int syslog_fd = -1;
static struct ptrec_fd_id syslog_id; /* a daemon may close it and reuse the number */
static struct sockaddr_un syslog_addr;

static struct report_slot *my_slot(void)
{
	return &slots[ptrec_crash_owner == (int)ptrec_gettid() ? 0 : 1];
}

/* out = dump + suffix; -1 when it does not fit. */
static int side_name(char *out, size_t cap, const char *dump, const char *suffix)
{
	struct ptrec_sbuf b;
	ptrec_sbuf_init(&b, out, cap);
	ptrec_sbuf_str(&b, dump);
	ptrec_sbuf_str(&b, suffix);
	return b.overflow ? -1 : 0;
}

static int txt_name(struct report_slot *s, const char *dump)
{
	return side_name(s->txt, sizeof(s->txt), dump, ".txt");
}

int ptrec_report_reserve(const char *dump)
{
	struct report_slot *s = my_slot();
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	if (txt_name(s, dump) != 0)
		return -ENAMETOOLONG;
	s->fd = ptrec_crash_open(s->txt, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	return s->fd >= 0 ? 0 : -errno;
}

void ptrec_report_unreserve(const char *dump)
{
	struct report_slot *s = my_slot();
	if (s->fd < 0 || txt_name(s, dump) != 0)
		return;
	close(s->fd);
	s->fd = -1;
	unlink(s->txt);
}

/* In the child: closes every descriptor above 2. */
static void close_from_3(void)
{
	struct rlimit rl;
	if (syscall(SYS_close_range, 3u, ~0u, 0u) == 0)
		return;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur > (1u << 20))
		rl.rlim_cur = 1u << 20;
	for (unsigned long fd = 3; fd < rl.rlim_cur; fd++)
		close((int)fd);
}

/* Ends a report that did not complete: an empty one is removed, another gets a last line
 * saying what happened (or is removed when even that cannot be written). */
static void finish_partial(struct report_slot *s, int out, const char *dump, unsigned timeout_ms)
{
	struct stat st;
	struct ptrec_sbuf b;

	s->kept = 0;
	if (fstat(out, &st) != 0 || st.st_size == 0) {
		unlink(s->txt);
		return;
	}
	ptrec_sbuf_init(&b, note_buf, sizeof(note_buf));
	ptrec_sbuf_str(&b, "\n[ptrec: THIS REPORT IS INCOMPLETE: ");
	if (s->state == REPORT_TIMEOUT) {
		ptrec_sbuf_str(&b, "the report tool was killed after ");
		ptrec_sbuf_udec(&b, timeout_ms);
		ptrec_sbuf_str(&b, " ms (PTREC_REPORT_TIMEOUT_MS)");
	} else if (WIFSIGNALED(s->status)) {
		ptrec_sbuf_str(&b, "the report tool died of signal ");
		ptrec_sbuf_dec(&b, WTERMSIG(s->status));
	} else {
		ptrec_sbuf_str(&b, "the report tool failed with exit status ");
		ptrec_sbuf_dec(&b, WEXITSTATUS(s->status));
	}
	ptrec_sbuf_str(&b, "; decode again with: ptrec report ");
	ptrec_sbuf_str(&b, dump);
	ptrec_sbuf_str(&b, "]\n");
	if (ptrec_write_all(out, note_buf, b.len) != 0) {
		unlink(s->txt);
		return;
	}
	s->kept = 1;
}

/* What the runner and the tool need; on the caller's stack, which they share. */
struct child_args {
	struct report_slot *s;
	int out;             /* DUMP.txt */
	int dmp;             /* DUMP.dmp, or -1: no minidump wanted */
	int minidump;        /* the tool to start: 0 `ptrec report`, 1 `ptrec minidump` */
	const char *dump;
	unsigned timeout_ms;
};

/* The top of slot s's stack for its runner (which 0) or its tool (which 1). */
static uint8_t *stack_top(const struct report_slot *s, int which)
{
	size_t slot = (size_t)(s - slots);
	return child_stacks + (slot * 2 + (size_t)which + 1) * (CHILD_STACK + 4096);
}

/* fd, moved above 2 when it is 0, 1 or 2 (dup2 onto itself would keep O_CLOEXEC, and another
 * dup2 would replace it). */
static int above_2(int fd)
{
	if (fd < 0 || fd > 2)
		return fd;
	int moved = (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, 3);
	return moved >= 0 ? moved : fd;
}

/* The tool, until its execve: every signal back to its default (the copied handlers of the
 * application must never run here), then an empty mask, stdin from /dev/null, stdout and
 * stderr to the report (stdout to the minidump for `ptrec minidump`), nothing else open. */
static int tool_main(void *arg)
{
	const struct child_args *a = arg;
	char *argv[6] = {ptrec_crash.tool_path, (char *)"report", (char *)a->dump, NULL, NULL, NULL};
	if (a->minidump) {
		argv[1] = (char *)"minidump";
		argv[3] = (char *)"-o";
		argv[4] = (char *)"-";
	}
	unsigned long dfl[4] = {0, 0, 0, 0}; /* kernel sigaction: SIG_DFL, no flags, empty mask */
	sigset_t none;

	for (int sig = 1; sig < 65; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			syscall(SYS_rt_sigaction, sig, dfl, NULL, sizeof(long));
	sigemptyset(&none);
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, NULL, sizeof(long));
	/* The application may have closed 0, 1 or 2, so the report, the minidump or /dev/null
	 * may sit there: all are moved above 2 first. */
	int err = above_2(a->out);
	int out = a->minidump ? above_2(a->dmp) : err;
	int in = above_2((int)syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDONLY | O_CLOEXEC));
	if (in >= 0 && in != out && in != err)
		dup2(in, 0);
	dup2(out, 1);
	dup2(err, 2);
	for (int fd = 0; fd <= 2; fd++)
		syscall(SYS_fcntl, fd, F_SETFD, 0);
	close_from_3();
	execve(ptrec_crash.tool_path, argv, report_env);
	syscall(SYS_exit_group, 127);
	return 127;
}

/* wait4 that never touches errno (the runner shares this thread's errno).  Returns the pid
 * or -errno. */
static long raw_wait4(long pid, int *status, long options)
{
	return ptrec_raw_syscall4(SYS_wait4, pid, (long)(uintptr_t)status, options, 0);
}

/* In the runner: starts the tool a->minidump names and waits for it, killing it once *waited
 * reaches a->timeout_ms (*waited grows by the time spent).  Returns 0 when it ended (*status),
 * 1 when it was killed, -1 when it could not be started, 2 when it was reaped elsewhere. */
static int run_tool(struct child_args *a, unsigned *waited, int *status)
{
	pid_t pid = clone(tool_main, stack_top(a->s, 1), CLONE_VM | CLONE_VFORK | SIGCHLD, (void *)a);
	struct timespec step = {0, 2 * 1000000};

	if (pid < 0)
		return -1;
	for (;;) {
		long r = raw_wait4(pid, status, WNOHANG);
		if (r == pid)
			return 0;
		if (r < 0 && r != -EINTR)
			return 2;
		if (*waited >= a->timeout_ms) {
			kill(pid, SIGKILL);
			while (raw_wait4(pid, status, 0) == -EINTR)
				;
			return 1;
		}
		syscall(SYS_nanosleep, &step, NULL);
		*waited += 2;
	}
}

/* 1 if a tool's wait status says it completed: 0, or 1 (written, with gaps noted in it). */
static int tool_ok(int status)
{
	return WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 1);
}

/* The runner: starts the report tool, waits for it, killing it after timeout_ms, and ends a
 * report that did not complete; then the minidump tool when a->dmp is open, within the time
 * left.  Its exit status is s->state << 1 | s->kept, plus RUNNER_MINIDUMP_OK. */
static int runner_main(void *arg)
{
	struct child_args *a = arg;
	struct report_slot *s = a->s;
	unsigned long dfl[4] = {0, 0, 0, 0};
	sigset_t all;
	int status = 0, code;
	unsigned waited = 0;

	/* The runner's own signals: all blocked (the tool's SIGCHLD only wakes waitpid), and
	 * SIGCHLD not ignored, or the kernel would reap the tool before we see its status. */
	sigfillset(&all);
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, NULL, sizeof(long));
	syscall(SYS_rt_sigaction, SIGCHLD, dfl, NULL, sizeof(long));
	/* Its own limits (no CLONE_THREAD): a soft RLIMIT_NOFILE the application lowered below
	 * the descriptors it holds would leave the tool no number for stdin; raised here, never
	 * in the application. */
	struct rlimit rl;
	if (syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, &rl, NULL);
	}
	/* The host's files (cpuinfo, lsb-release, os-release, uname) go into the dump here, outside the
	 * crashed process, before the tools read it. */
	ptrec_dump_append_host(s == &slots[0] ? 0 : 1, a->dump);
	a->minidump = 0;
	int r = run_tool(a, &waited, &status);
	if (r < 0) {
		unlink(s->txt);
		syscall(SYS_exit_group, REPORT_NOT_RUN << 1);
	}
	if (r == 2 || (r == 0 && tool_ok(status))) { /* reaped elsewhere: assume it finished */
		code = REPORT_OK << 1;
	} else {
		s->state = r == 1 ? REPORT_TIMEOUT : REPORT_FAILED;
		s->status = status;
		finish_partial(s, a->out, a->dump, a->timeout_ms);
		code = s->state << 1 | s->kept;
	}
	if (a->dmp >= 0 && waited < a->timeout_ms) {
		a->minidump = 1;
		if (run_tool(a, &waited, &status) == 0 && tool_ok(status))
			code |= RUNNER_MINIDUMP_OK;
	}
	syscall(SYS_exit_group, code);
	return 0;
}

void ptrec_report_prepare(void)
{
	size_t len = CHILD_STACKS * ((size_t)CHILD_STACK + 4096);
	if (child_stacks)
		return;
	void *p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return;
	for (int i = 0; i < CHILD_STACKS; i++)
		if (mprotect((uint8_t *)p + (size_t)i * (CHILD_STACK + 4096) + 4096, CHILD_STACK,
		             PROT_READ | PROT_WRITE) != 0) {
			munmap(p, len);
			return;
		}
	child_stacks = p;
}

/* Copies the "signature:" line of the report open at fd (the tool has ended) into
 * s->signature, bytes outside printable ASCII as '?'; "" when there is none. */
static void read_signature(struct report_slot *s, int fd)
{
	static const char key[] = "\nsignature: ";
	int saved_errno = errno;
	long n = syscall(SYS_pread64, fd, scan_buf, (size_t)SIGNATURE_SCAN, 0L);
	size_t len = 0;

	errno = saved_errno;
	s->signature[0] = '\0';
	if (n <= 0)
		return;
	scan_buf[n] = '\0';
	for (long i = 0; i + (long)sizeof(key) - 1 <= n; i++) {
		if (memcmp(scan_buf + i, key, sizeof(key) - 1))
			continue;
		const char *v = scan_buf + i + sizeof(key) - 1;
		for (; v[len] && v[len] != '\n' && len + 1 < sizeof(s->signature); len++)
			s->signature[len] = v[len] >= 0x20 && v[len] < 0x7f ? v[len] : '?';
		if (!v[len]) /* the line is cut short (the scan's end): no signature */
			len = 0;
		break;
	}
	s->signature[len] = '\0';
}

int ptrec_report_run(const char *dump, unsigned timeout_ms)
{
	struct report_slot *s = my_slot();
	int out = s->fd, status = 0;

	s->fd = -1;
	s->state = REPORT_NOT_RUN;
	s->kept = 0;
	s->signature[0] = '\0';
	s->no_tool = timeout_ms != 0 && access(ptrec_crash.tool_path, X_OK) != 0;
	if (txt_name(s, dump) != 0 || timeout_ms == 0 || !child_stacks || s->no_tool) {
		if (out >= 0) {
			close(out);
			unlink(s->txt);
		}
		return -PTREC_EIO;
	}
	if (out < 0)
		out = ptrec_crash_open(s->txt, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0)
		return -PTREC_EIO;
	/* The minidump after a crash's report: its file is created now, like the report's. */
	int dmp = -1;
	s->dmp_ok = 0;
	if (s == &slots[0] && (ptrec_crash.cfg.flags & PTREC_F_MINIDUMP) &&
	    side_name(s->dmp, sizeof(s->dmp), dump, ".dmp") == 0)
		dmp = ptrec_crash_open(s->dmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		                       0600);

	/* No exit signal: its end sends no SIGCHLD and waitpid(-1) without __WCLONE never
	 * returns it.  It must not exec (execve would make its exit signal SIGCHLD again on
	 * older kernels), so it runs the tool as its own child. */
	struct child_args args = {.s = s, .out = out, .dmp = dmp, .dump = dump,
	                          .timeout_ms = timeout_ms};
	int saved_errno = errno;
	int wait_flags = __WCLONE;
	pid_t pid = clone(runner_main, stack_top(s, 0), CLONE_VM, &args);
	if (pid < 0 && errno == EINVAL) {
		/* qemu-user emulates CLONE_VM only for threads and other clones only as fork with
		 * SIGCHLD: there (and only there) the runner is a copy the application could see
		 * (its outcome comes back in its exit status all the same). */
		pid = clone(runner_main, stack_top(s, 0), SIGCHLD, &args);
		wait_flags = 0;
	}
	if (pid < 0) {
		close(out);
		unlink(s->txt);
		if (dmp >= 0) {
			close(dmp);
			unlink(s->dmp);
		}
		errno = saved_errno;
		return -PTREC_EIO;
	}
	long r;
	while ((r = raw_wait4(pid, &status, wait_flags)) == -EINTR)
		;
	int code = WEXITSTATUS(status) & ~RUNNER_MINIDUMP_OK;
	if (r == pid && WIFEXITED(status) && (code >> 1) >= REPORT_OK && (code >> 1) <= REPORT_FAILED) {
		s->state = (enum report_state)(code >> 1);
		s->kept = code & 1;
		s->dmp_ok = dmp >= 0 && (WEXITSTATUS(status) & RUNNER_MINIDUMP_OK);
	} else { /* the runner itself died (or was reaped elsewhere) */
		s->state = REPORT_FAILED;
		s->status = r == pid ? status : 0;
		finish_partial(s, out, dump, timeout_ms);
	}
	if (s->state == REPORT_OK && s == &slots[0])
		read_signature(s, out);
	close(out);
	if (dmp >= 0) {
		close(dmp);
		if (!s->dmp_ok) /* ours (O_EXCL): not completed, or never started */
			unlink(s->dmp);
	}
	errno = saved_errno;
	return s->state == REPORT_OK ? 0 : -PTREC_EIO;
}

/* Appends the entry "name" "value" (value may be NULL) to the report environment.  Returns 0,
 * or -1 when it does not fit (nothing added). */
static int report_env_add(unsigned *n, size_t *used, const char *name, const char *value)
{
	size_t ln = strlen(name), lv = value ? strlen(value) : 0;

	if (*n >= REPORT_ENV_MAX || ln + lv + 1 > sizeof(report_env_buf) - *used)
		return -1;
	report_env[*n] = report_env_buf + *used;
	memcpy(report_env_buf + *used, name, ln);
	if (value)
		memcpy(report_env_buf + *used + ln, value, lv);
	report_env_buf[*used + ln + lv] = '\0';
	*used += ln + lv + 1;
	report_env[++*n] = NULL;
	return 0;
}

/* 1 if env entry e sets a dynamic loader's debugging output: glibc's ld.so then writes into
 * the tool's stdout, which is DUMP.txt or DUMP.dmp (LD_SHOW_AUXV put the auxiliary vector in
 * front of the minidump), or lists libraries instead of running it (LD_TRACE_LOADED_OBJECTS). */
static int loader_debug(const char *e)
{
	static const char *const names[] = {"LD_SHOW_AUXV=", "LD_DEBUG=", "LD_DEBUG_OUTPUT=",
	                                    "LD_TRACE_LOADED_OBJECTS=", "LD_VERBOSE="};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strncmp(e, names[i], strlen(names[i])))
			return 1;
	return 0;
}

void ptrec_report_env_prepare(char *const *env, const char *ld_preload)
{
	unsigned n = 0;
	size_t used = 0;

	int network = 0;

	report_env[0] = NULL;
	for (size_t i = 0; env && env[i]; i++)
		if (!strcmp(env[i], "PTREC_REPORT_DEBUGINFOD=1"))
			network = 1;
	for (size_t i = 0; env && env[i]; i++)
		if (strncmp(env[i], "LD_PRELOAD=", 11) && strncmp(env[i], "PTREC_PRELOAD=", 14) &&
		    (network || strncmp(env[i], "DEBUGINFOD_URLS=", 16)) && !loader_debug(env[i]))
			report_env_add(&n, &used, env[i], NULL);
	if (ld_preload && *ld_preload)
		report_env_add(&n, &used, "LD_PRELOAD=", ld_preload);
}

void ptrec_syslog_prepare(const char *path)
{
	if (!path || !*path)
		path = "/dev/log";
	ptrec_fd_id_close(syslog_fd, &syslog_id);
	syslog_fd = -1;
	memset(&syslog_addr, 0, sizeof(syslog_addr));
	if (!strcmp(path, "none") || strlen(path) >= sizeof(syslog_addr.sun_path))
		return;
	syslog_addr.sun_family = AF_UNIX;
	ptrec_strlcpy(syslog_addr.sun_path, path, sizeof(syslog_addr.sun_path));
	syslog_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ptrec_fd_id_take(syslog_fd, &syslog_id);
}

/* Sends text (one line, no newline) to the system log as "<PRI>ptrec[PID]: text" (pri: 10 is
 * facility user, severity critical; 12 user, warning); `journalctl -t ptrec` finds it. */
static void syslog_line(int pri, const char *text, size_t len)
{
	struct ptrec_sbuf b;
	if (syslog_addr.sun_family != AF_UNIX)
		return; /* PTREC_SYSLOG=none */
	if (!ptrec_fd_id_same(syslog_fd, &syslog_id)) {
		/* The application closed our socket (and may have reused the number: it is its
		 * file now, never written to): a new one. */
		syslog_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (ptrec_fd_id_take(syslog_fd, &syslog_id) != 0)
			return;
	}
	ptrec_sbuf_init(&b, syslog_buf, sizeof(syslog_buf));
	ptrec_sbuf_char(&b, '<');
	ptrec_sbuf_dec(&b, pri);
	ptrec_sbuf_str(&b, ">ptrec[");
	ptrec_sbuf_dec(&b, getpid());
	ptrec_sbuf_str(&b, "]: ");
	ptrec_sbuf_mem(&b, text, len);
	sendto(syslog_fd, syslog_buf, b.len, MSG_DONTWAIT | MSG_NOSIGNAL,
	       (const struct sockaddr *)&syslog_addr, sizeof(syslog_addr));
}

void ptrec_syslog_warning(const char *text)
{
	syslog_line(12, text, strlen(text));
}

/* Appends path as the host sees it: under the new root when the process called chroot after
 * ptrec_init (crash/new_root.c). */
static void host_path(struct ptrec_sbuf *b, const char *path)
{
	if (path[0] == '/' && ptrec_root_host()[0])
		ptrec_sbuf_escaped(b, ptrec_root_host());
	ptrec_sbuf_escaped(b, path);
}

/* Says why the tool did not run when it is not where ptrec_init found it. */
static void no_tool_reason(struct ptrec_sbuf *b)
{
	ptrec_sbuf_str(b, "the report tool ");
	ptrec_sbuf_escaped(b, ptrec_crash.tool_path);
	if (!ptrec_root_changed()) {
		ptrec_sbuf_str(b, " is missing; decode later: ");
		return;
	}
	ptrec_sbuf_str(b, " is not inside the process's new root");
	if (ptrec_root_host()[0]) {
		ptrec_sbuf_char(b, ' ');
		ptrec_sbuf_escaped(b, ptrec_root_host());
		ptrec_sbuf_str(b, " (chroot after ptrec_init); decode on the host: ");
		return;
	}
	ptrec_sbuf_str(b, " (its root directory changed after ptrec_init: the paths here are "
	               "inside it); decode on the host: ");
}

void ptrec_report_line(const char *what, pid_t tid, const char *dump, int report_ok)
{
	const struct report_slot *s = &slots[0];
	struct ptrec_sbuf b;
	char name[32];
	char path[64];

	ptrec_sbuf_init(&b, path, sizeof(path));
	ptrec_sbuf_str(&b, "/proc/self/task/");
	ptrec_sbuf_dec(&b, tid);
	ptrec_sbuf_str(&b, "/comm");
	if (ptrec_read_small_file(path, name, sizeof(name)) < 0 &&
	    (tid != ptrec_gettid() || prctl(PR_GET_NAME, name, 0, 0, 0) != 0))
		name[0] = '\0';

	ptrec_sbuf_init(&b, line_buf, sizeof(line_buf));
	ptrec_sbuf_str(&b, "ptrec: ");
	ptrec_sbuf_escaped(&b, what);
	ptrec_sbuf_str(&b, " in pid ");
	ptrec_sbuf_dec(&b, getpid());
	ptrec_sbuf_str(&b, " thread ");
	ptrec_sbuf_dec(&b, tid);
	if (name[0]) {
		ptrec_sbuf_str(&b, " (");
		ptrec_sbuf_escaped(&b, name);
		ptrec_sbuf_char(&b, ')');
	}
	if (!dump) {
		const char *why = ptrec_dump_failure(0);
		ptrec_sbuf_str(&b, ": no dump written (");
		ptrec_sbuf_str(&b, why[0] ? why : "no writable directory");
		ptrec_sbuf_str(&b, ")");
	} else {
		ptrec_sbuf_str(&b, ": dump ");
		host_path(&b, dump);
		if (report_ok) {
			ptrec_sbuf_str(&b, ", report ");
			host_path(&b, dump);
			ptrec_sbuf_str(&b, ".txt");
		} else {
			ptrec_sbuf_str(&b, s->kept ? "; partial report " : "; no report");
			if (s->kept) {
				host_path(&b, dump);
				ptrec_sbuf_str(&b, ".txt");
			}
			ptrec_sbuf_str(&b, " (");
			if (s->state == REPORT_TIMEOUT)
				ptrec_sbuf_str(&b, "timed out; ");
			else if (s->state == REPORT_FAILED)
				ptrec_sbuf_str(&b, "report tool failed; ");
			else if (s->state == REPORT_NOT_RUN && ptrec_crash.cfg.report_timeout_ms == 0)
				ptrec_sbuf_str(&b, "PTREC_REPORT_TIMEOUT_MS=0; ");
			if (s->state == REPORT_NOT_RUN && s->no_tool)
				no_tool_reason(&b);
			else
				ptrec_sbuf_str(&b, "decode later: ");
			ptrec_sbuf_str(&b, "ptrec report ");
			host_path(&b, dump);
			ptrec_sbuf_str(&b, ")");
		}
		if (s->dmp_ok) {
			ptrec_sbuf_str(&b, ", minidump ");
			host_path(&b, s->dmp);
		}
		const char *priv = ptrec_root_changed() ? NULL : ptrec_dump_private_dir(dump);
		if (priv) {
			ptrec_sbuf_str(&b, " (this unit's private ");
			ptrec_sbuf_str(&b, priv);
			ptrec_sbuf_str(&b, ": systemd removes it when the unit stops; give the unit "
			               "StateDirectory= or PTREC_DIR)");
		}
		if (report_ok && s->signature[0]) {
			ptrec_sbuf_str(&b, "; signature: ");
			ptrec_sbuf_str(&b, s->signature);
		}
	}
	size_t text_len = b.len;
	ptrec_sbuf_char(&b, '\n');
	if (b.overflow && b.cap > 1)
		line_buf[b.cap - 2] = '\n';
	ptrec_write_all(2, line_buf, b.len);
	if (text_len > 7)
		syslog_line(10, line_buf + 7, text_len - 7);
}
