/* report_child.c — turns a dump into its text report without trusting the crashed process:
 * a child made with a raw fork syscall execs the installed `ptrec report DUMP` by absolute path
 * (never a PATH lookup), stdout and stderr into DUMP.txt, and is killed after a timeout.
 *
 * ASYNC-SIGNAL-SAFE ISLAND: runs inside the crash handler.  It may not call malloc/free,
 * stdio, fork() (glibc's runs atfork handlers and takes malloc locks: we use the raw syscall),
 * system/popen, or take locks.  The child only calls dup2/open/rt_sigprocmask/execve/exit. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/safe_str.h"
#include "crash/crash.h"

extern char **environ;

static char report_path[2][PTREC_PATH_MAX + 8];
static char line_buf[2 * PTREC_PATH_MAX + 256];

int ptrec_report_run(const char *dump, unsigned timeout_ms)
{
	struct ptrec_sbuf b;
	char *txt = report_path[ptrec_crash_owner == (int)ptrec_gettid() ? 0 : 1];
	int out, status = 0;
	long pid;

	ptrec_sbuf_init(&b, txt, sizeof(report_path[0]));
	ptrec_sbuf_str(&b, dump);
	ptrec_sbuf_str(&b, ".txt");
	if (b.overflow || access(ptrec_crash.tool_path, X_OK) != 0)
		return -PTREC_EIO;
	out = open(txt, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0)
		return -PTREC_EIO;

	pid = syscall(SYS_fork);
	if (pid == 0) {
		char *argv[4] = {ptrec_crash.tool_path, (char *)"report", (char *)dump, NULL};
		sigset_t none;
		int in = open("/dev/null", O_RDONLY);
		sigemptyset(&none);
		syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, NULL, sizeof(long));
		if (in >= 0)
			dup2(in, 0);
		dup2(out, 1);
		dup2(out, 2);
		execve(ptrec_crash.tool_path, argv, environ);
		syscall(SYS_exit_group, 127);
	}
	close(out);
	if (pid < 0)
		return -PTREC_EIO;

	struct timespec step = {0, 2 * 1000000};
	unsigned waited = 0;
	for (;;) {
		long r = waitpid((pid_t)pid, &status, WNOHANG);
		if (r == pid)
			break;
		if (r < 0 && errno != EINTR)
			return 0; /* reaped elsewhere (SIGCHLD ignored): assume it finished */
		if (waited >= timeout_ms) {
			kill((pid_t)pid, SIGKILL);
			while (waitpid((pid_t)pid, &status, 0) < 0 && errno == EINTR)
				;
			return -PTREC_EIO;
		}
		nanosleep(&step, NULL);
		waited += 2;
	}
	/* 0: report written; 1: written, with gaps noted in it. */
	if (WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 1))
		return 0;
	return -PTREC_EIO;
}

void ptrec_report_line(const char *what, pid_t tid, const char *dump, int report_ok)
{
	struct ptrec_sbuf b;
	char name[32];
	char path[64];

	ptrec_sbuf_init(&b, path, sizeof(path));
	ptrec_sbuf_str(&b, "/proc/self/task/");
	ptrec_sbuf_dec(&b, tid);
	ptrec_sbuf_str(&b, "/comm");
	if (ptrec_read_small_file(path, name, sizeof(name)) < 0)
		name[0] = '\0';

	ptrec_sbuf_init(&b, line_buf, sizeof(line_buf));
	ptrec_sbuf_str(&b, "ptrec: ");
	ptrec_sbuf_str(&b, what);
	ptrec_sbuf_str(&b, " in pid ");
	ptrec_sbuf_dec(&b, getpid());
	ptrec_sbuf_str(&b, " thread ");
	ptrec_sbuf_dec(&b, tid);
	if (name[0]) {
		ptrec_sbuf_str(&b, " (");
		ptrec_sbuf_str(&b, name);
		ptrec_sbuf_char(&b, ')');
	}
	if (!dump) {
		ptrec_sbuf_str(&b, ": no dump written (no writable directory)\n");
	} else {
		ptrec_sbuf_str(&b, ": dump ");
		ptrec_sbuf_str(&b, dump);
		if (report_ok) {
			ptrec_sbuf_str(&b, ", report ");
			ptrec_sbuf_str(&b, dump);
			ptrec_sbuf_str(&b, ".txt\n");
		} else {
			ptrec_sbuf_str(&b, "; no report (decode later: ptrec report ");
			ptrec_sbuf_str(&b, dump);
			ptrec_sbuf_str(&b, ")\n");
		}
	}
	if (b.overflow && b.cap > 1)
		line_buf[b.cap - 2] = '\n';
	ptrec_write_all(2, line_buf, b.len);
}
