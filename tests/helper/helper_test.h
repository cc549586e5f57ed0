/* helper_test.h — what the ptrec-helper tests share: a client run as nobody, and the user
 * space software event that stands in for intel_pt in the helper's test mode. */
#ifndef PTREC_HELPER_TEST_H
#define PTREC_HELPER_TEST_H

#include <grp.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

/* Opens the test mode's event (task clock, user space only, disabled) on thread tid (0: the
 * caller) as the kernel lets this process.  Returns the fd or -1 with errno. */
static inline int sw_event_open(pid_t tid)
{
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_TASK_CLOCK;
	attr.disabled = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	return (int)syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/* Runs fn(out, len) in a child as nobody (uid and gid 65534, no groups, dumpable as a process
 * nobody started would be) and returns its text in out (empty if it failed). */
static inline void as_nobody(void (*fn)(char *, size_t), char *out, size_t len)
{
	int pfd[2];
	out[0] = '\0';
	if (pipe(pfd))
		exit(99);
	pid_t child = fork();
	if (child == 0) {
		char buf[700] = "";
		close(pfd[0]);
		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(3);
		/* setuid made us non-dumpable (commit_creds); a process nobody started is not */
		prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
		fn(buf, sizeof(buf));
		if (write(pfd[1], buf, strlen(buf)) < 0)
			_exit(4);
		_exit(0);
	}
	close(pfd[1]);
	ssize_t n = read(pfd[0], out, len - 1);
	out[n > 0 ? n : 0] = '\0';
	close(pfd[0]);
	int st;
	waitpid(child, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

#endif
