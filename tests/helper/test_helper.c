/* test_helper.c — ptrec-helper end to end, in its test mode (a software event per thread
 * instead of intel_pt, every check unchanged), and the library's fallback on it:
 *  - a thread of our own gets a working fd (SCM_RIGHTS) that counts that thread only;
 *  - a thread of another process, and another uid's request for our thread, are refused;
 *  - a thread of a non-dumpable process (PR_SET_DUMPABLE 0, an execute-only program) is
 *    refused to its own uid, as the kernel refuses it perf_event_open;
 *  - a peer that exits before its request is judged is refused, also when its pid is reused
 *    (the pidfd taken at connect no longer lives), also where SO_PEERPIDFD answers EINVAL for
 *    the exited peer (kernels 6.5..6.15; forced here by a seccomp filter);
 *  - malformed, oversized, empty and silent requests get a reason and the helper lives on;
 *  - many concurrent clients are all served;
 *  - fds already passed keep working across a helper restart, and the restarted helper serves;
 *  - with perf_event_open refused by the kernel (a seccomp filter answering EACCES, as
 *    perf_event_paranoid=3 would), the library opens through the helper and says so.
 * SKIPs when this kernel refuses software perf events to us (no perf at all). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/filter.h>
#include <linux/perf_event.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "capture/helper_client.h"
#include "capture/perf_aux.h"
#include "check.h"
#include "helper_test.h"
#include "helper/helper_peer.h"
#include "ptrec.h"

static char dir[64], sock_path[128], helper_bin[4096];
static pid_t helper_pid = -1;

static pid_t tid_self(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* Starts the helper in test mode with extra args (NULL-terminated) and waits for its ping. */
static int helper_einval;   /* start the helper with SO_PEERPIDFD failing EINVAL */
static const char *helper_log; /* start the helper with its stderr into this file */
static int helper_no_chmod; /* start the helper with chmod by path failing EPERM */

/* Makes getsockopt(..., SO_PEERPIDFD, ...) fail with EINVAL in this process and what it execs:
 * what kernels 6.5 to 6.15 answer for a peer that has exited. */
static int peerpidfd_einval(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getsockopt, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 77 /* SO_PEERPIDFD */, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EINVAL),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof(f) / sizeof(f[0]), f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

/* Makes chmod, fchmodat and fchmodat2 (a mode change by path, which follows a symlink put in
 * the socket's place) fail with EPERM in this process and what it execs. */
static int path_chmod_eperm(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
#ifdef SYS_chmod
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_chmod, 3, 0),
#else
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_fchmodat, 3, 0),
#endif
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_fchmodat, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 452 /* fchmodat2 */, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
	};
	struct sock_fprog prog = {sizeof(f) / sizeof(f[0]), f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

static pid_t helper_start(const char *path, const char *extra1, const char *extra2)
{
	pid_t p = fork();
	if (p == 0) {
		if ((helper_einval && peerpidfd_einval()) || (helper_no_chmod && path_chmod_eperm()))
			_exit(126);
		if (helper_log) {
			int lf = open(helper_log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
			if (lf < 0 || dup2(lf, 2) != 2)
				_exit(126);
		}
		execl(helper_bin, helper_bin, "--test-software-event", "--socket", path,
		      "--timeout-ms", "1000", extra1, extra2, (char *)NULL);
		_exit(127);
	}
	char reply[256];
	for (int i = 0; i < 500; i++) {
		if (ptrec_helper_ping(path, reply, sizeof(reply)) == 0)
			return p;
		sleep_ms(10);
	}
	fprintf(stderr, "helper at %s did not answer: %s\n", path, reply);
	kill(p, SIGKILL);
	waitpid(p, NULL, 0);
	if (helper_pid > 0) /* the main helper, if this was another: not left behind */
		kill(helper_pid, SIGTERM);
	exit(99);
}

static void helper_stop(pid_t p)
{
	kill(p, SIGTERM);
	waitpid(p, NULL, 0);
}

static uint64_t count_of(int fd)
{
	uint64_t v = 0;
	if (read(fd, &v, sizeof(v)) != (ssize_t)sizeof(v))
		return UINT64_MAX;
	return v;
}

/* Runs on this CPU for ms milliseconds of this thread's CPU time (not wall time: the
 * machine is shared, and a task clock counts only the time the thread ran). */
static void spin_ms(unsigned ms)
{
	struct timespec a, b;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < ms);
}

/* Sends raw bytes on a fresh connection and returns the reply (or "" on none). */
static void raw_ask(const void *msg, size_t len, char *reply, size_t rlen)
{
	struct sockaddr_un sa;
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	strcpy(sa.sun_path, sock_path);
	reply[0] = '\0';
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
	    (!msg || send(s, msg, len, MSG_NOSIGNAL) >= 0)) {
		ssize_t n = recv(s, reply, rlen - 1, 0);
		reply[n > 0 ? n : 0] = '\0';
	}
	close(s);
}

/* ---- a thread of our own ---------------------------------------------------------------- */

static void *sleeper(void *arg)
{
	*(volatile pid_t *)arg = tid_self();
	pause();
	return NULL;
}

static int test_own_thread(void)
{
	struct ptrec_helper_event ev;
	char why[256];
	volatile pid_t other = 0;
	pthread_t th;

	printf("-- own thread: the fd counts this thread, another thread of ours is granted\n");
	CHECK(ptrec_helper_open(sock_path, "intel_pt", tid_self(), 65536, &ev, why,
	                        sizeof(why)) == 0);
	CHECK(ev.fd >= 0);
	if (ev.fd < 0) {
		fprintf(stderr, "  refused: %s\n", why);
		return -1;
	}
	CHECK(fcntl(ev.fd, F_GETFD) & FD_CLOEXEC);
	CHECK_EQ_U64(ev.config, PERF_COUNT_SW_TASK_CLOCK);
	CHECK_EQ_U64(count_of(ev.fd), 0); /* opened disabled */
	CHECK(ioctl(ev.fd, PERF_EVENT_IOC_ENABLE, 0) == 0);
	spin_ms(30);
	uint64_t c = count_of(ev.fd);
	CHECK(c >= 27000000u && c != UINT64_MAX); /* >= 90% of the 30 ms it ran */

	/* A sleeping thread of ours: granted, and its count stays near zero while we spin.
	 * (spin_ms counts this thread's CPU time; the event must have seen all of it.) */
	pthread_create(&th, NULL, sleeper, (void *)&other);
	while (!other)
		sleep_ms(1);
	struct ptrec_helper_event ev2;
	CHECK(ptrec_helper_open(sock_path, "intel_pt", other, 4096, &ev2, why, sizeof(why)) == 0);
	if (ev2.fd >= 0) {
		ioctl(ev2.fd, PERF_EVENT_IOC_ENABLE, 0);
		spin_ms(30);
		CHECK(count_of(ev2.fd) < 5000000u);
		close(ev2.fd);
	}
	pthread_cancel(th);
	pthread_join(th, NULL);
	return ev.fd; /* kept open across the restart test */
}

/* ---- refusals ---------------------------------------------------------------------------- */

static void test_other_process(void)
{
	struct ptrec_helper_event ev;
	char why[256];

	printf("-- a thread of another process is refused\n");
	pid_t child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	CHECK(ptrec_helper_open(sock_path, "intel_pt", child, 65536, &ev, why, sizeof(why)) ==
	      -PTREC_EPERM);
	CHECK(ev.fd == -1);
	CHECK(strstr(why, "is not in your process") != NULL);
	printf("   reason: %s\n", why);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);

	CHECK(ptrec_helper_open(sock_path, "intel_pt", 1, 65536, &ev, why, sizeof(why)) ==
	      -PTREC_EPERM);
	CHECK(strstr(why, "thread 1 is not in your process") != NULL);
}

static void test_other_uid(void)
{
	printf("-- another uid (nobody) asking for our thread is refused, for its own granted\n");
	if (geteuid() != 0) {
		printf("   skipped: not root, so this test cannot run a client as another uid\n");
		return;
	}
	pid_t me = tid_self();
	int pfd[2];
	if (pipe(pfd))
		exit(99);
	pid_t child = fork();
	if (child == 0) {
		struct ptrec_helper_event ev;
		char why[256], out[600];
		close(pfd[0]);
		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(3);
		prctl(PR_SET_DUMPABLE, 1, 0, 0, 0); /* as after an exec: setuid cleared it */
		int r1 = ptrec_helper_open(sock_path, "intel_pt", me, 65536, &ev, why, sizeof(why));
		int n = snprintf(out, sizeof(out), "%d|%s|", r1, why);
		int r2 = ptrec_helper_open(sock_path, "intel_pt", tid_self(), 65536, &ev, why,
		                           sizeof(why));
		snprintf(out + n, sizeof(out) - (size_t)n, "%d|%d", r2, ev.fd >= 0);
		if (write(pfd[1], out, strlen(out)) < 0)
			_exit(4);
		_exit(0);
	}
	close(pfd[1]);
	char buf[600] = "";
	ssize_t n = read(pfd[0], buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	close(pfd[0]);
	int st;
	waitpid(child, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	printf("   nobody got: %s\n", buf);
	char expect[64];
	snprintf(expect, sizeof(expect), "%d|thread %ld is not in your process", -PTREC_EPERM,
	         (long)me);
	CHECK(strncmp(buf, expect, strlen(expect)) == 0);
	CHECK(strstr(buf, "|0|1") != NULL); /* its own thread: granted, with an fd */
}

/* ---- dumpability ------------------------------------------------------------------------- */

/* The kernel's own verdict, the oracle: may this process open a user-space software event
 * on process pid itself (perf_event_open checks ptrace_may_access, dumpability included,
 * for a caller without CAP_PERFMON)?  Returns 1 yes, 0 no (EACCES/EPERM). */
static int kernel_allows(pid_t pid)
{
	int fd = sw_event_open(pid);
	if (fd >= 0)
		close(fd);
	return fd >= 0;
}

/* As nobody: asks for our own thread, then again after prctl(PR_SET_DUMPABLE, 0); and a
 * child of ours (nobody too) asks the kernel whether it may open an event on us. */
static void ask_undumpable(char *out, size_t len)
{
	struct ptrec_helper_event ev;
	char why[256];
	int r1 = ptrec_helper_open(sock_path, "intel_pt", tid_self(), 4096, &ev, why, sizeof(why));
	if (ev.fd >= 0)
		close(ev.fd);
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	int r2 = ptrec_helper_open(sock_path, "intel_pt", tid_self(), 4096, &ev, why, sizeof(why));
	pid_t c = fork();
	if (c == 0)
		_exit(kernel_allows(getppid()));
	int st = 0;
	waitpid(c, &st, 0);
	snprintf(out, len, "kernel=%d|%d|%d|%d|%s", WIFEXITED(st) ? WEXITSTATUS(st) : -1, r1, r2,
	         ev.fd >= 0, why);
}

static char xonly_path[160]; /* a mode 0711 copy of a program, which nobody may not read */

/* As nobody: a child connects, then execs the execute-only program; on its socket we ask for
 * the child's thread (the peer is the child: its pid, its uid), and ask the kernel whether
 * we may open an event on the child ourselves. */
static void ask_execute_only(char *out, size_t len)
{
	struct sockaddr_un sa;
	char req[128], reply[256] = "", comm[64] = "", proc[64];
	int s = socket(AF_UNIX, SOCK_SEQPACKET, 0); /* inherited across the exec */
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	strcpy(sa.sun_path, sock_path);
	pid_t c = fork();
	if (c == 0) {
		if (connect(s, (struct sockaddr *)&sa, sizeof(sa)))
			_exit(1);
		execl(xonly_path, xonly_path, "10", (char *)NULL);
		_exit(100 + errno);
	}
	/* Wait for the exec: the child's name becomes the program's. */
	snprintf(proc, sizeof(proc), "/proc/%ld/comm", (long)c);
	for (int i = 0; i < 500 && !strstr(comm, "sleep-0711"); i++) {
		FILE *f = fopen(proc, "r");
		if (!f || !fgets(comm, sizeof(comm), f))
			comm[0] = '\0';
		if (f)
			fclose(f);
		if (!strstr(comm, "sleep-0711"))
			sleep_ms(10);
	}
	int kernel = kernel_allows(c);
	snprintf(req, sizeof(req), PTREC_HELPER_PROTO " open intel_pt tid=%ld ring=4096", (long)c);
	if (send(s, req, strlen(req), 0) > 0) {
		ssize_t n = recv(s, reply, sizeof(reply) - 1, 0);
		reply[n > 0 ? n : 0] = '\0';
	}
	int cst = 0;
	if (waitpid(c, &cst, WNOHANG) == c) /* the exec failed: say why */
		snprintf(reply, sizeof(reply), "exec of %s: %s", xonly_path,
		         WIFEXITED(cst) && WEXITSTATUS(cst) > 100 ? strerror(WEXITSTATUS(cst) - 100)
		                                                 : "died");
	snprintf(out, len, "kernel=%d|%s", kernel, reply);
	kill(c, SIGKILL);
	waitpid(c, NULL, 0);
	close(s);
}

/* Copies the program at from to `to` with mode 0711.  Returns 0 or -1. */
static int copy_execute_only(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY | O_CLOEXEC);
	int out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0700);
	ssize_t n = 0;
	if (in >= 0 && out >= 0)
		while ((n = read(in, buf, sizeof(buf))) > 0 && write(out, buf, (size_t)n) == n)
			;
	int ok = in >= 0 && out >= 0 && n == 0 && fchmod(out, 0711) == 0;
	if (in >= 0)
		close(in);
	if (out >= 0 && close(out))
		ok = 0;
	return ok ? 0 : -1;
}

static void test_not_dumpable(void)
{
	char out[600], expect[96];

	printf("-- a thread of a non-dumpable process is refused to its own uid (nobody), as the "
	       "kernel refuses it\n");
	if (geteuid() != 0) {
		printf("   skipped: not root, so this test cannot run a client as another uid\n");
		return;
	}
	as_nobody(ask_undumpable, out, sizeof(out));
	printf("   nobody, before and after PR_SET_DUMPABLE 0: %s\n", out);
	CHECK(strncmp(out, "kernel=0|", 9) == 0); /* the oracle: the kernel refuses nobody */
	snprintf(expect, sizeof(expect), "kernel=0|0|%d|0|thread ", -PTREC_EPERM);
	CHECK(strncmp(out, expect, strlen(expect)) == 0);
	CHECK(strstr(out, "its process is not dumpable") != NULL);

	/* An execute-only program: whether it makes the process non-dumpable is the kernel's
	 * call (would_dump); the helper must agree with the kernel either way. */
	snprintf(xonly_path, sizeof(xonly_path), "%s/sleep-0711", dir);
	if (copy_execute_only("/bin/sleep", xonly_path)) {
		printf("   skipped the execute-only case: cannot copy /bin/sleep: %s\n",
		       strerror(errno));
		return;
	}
	as_nobody(ask_execute_only, out, sizeof(out));
	printf("   nobody's child after exec of a 0711 program: %s\n", out);
	if (!strncmp(out, "kernel=0|", 9)) {
		CHECK(strstr(out, "|refused: thread ") != NULL);
		CHECK(strstr(out, "its process is not dumpable") != NULL);
	} else {
		printf("   (this kernel keeps a process that runs an execute-only program dumpable, "
		       "and lets its user trace it: so does the helper)\n");
		CHECK(strncmp(out, "kernel=1|ok config=", 19) == 0);
	}
	unlink(xonly_path);
}

/* ---- pid reuse --------------------------------------------------------------------------- */

static void test_pid_reuse(int einval)
{
	char path[160], reply[256];
	struct sockaddr_un sa;

	printf("-- a peer that exits before its request is judged is refused, also when its pid "
	       "is reused%s\n", einval ? "; also where SO_PEERPIDFD says EINVAL (6.5..6.15)" : "");
	snprintf(path, sizeof(path), "%s/slow.sock", dir);
	helper_einval = einval;
	pid_t slow = helper_start(path, "--test-delay-ms", "400");
	helper_einval = 0;
	int s = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	strcpy(sa.sun_path, path);
	/* The child connects (so the peer is the child) and asks for its own thread, then exits;
	 * we keep the socket and read the answer. */
	pid_t a = fork();
	if (a == 0) {
		char req[128];
		snprintf(req, sizeof(req), PTREC_HELPER_PROTO " open intel_pt tid=%ld ring=4096",
		         (long)tid_self());
		if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) || send(s, req, strlen(req), 0) < 0)
			_exit(1);
		_exit(0);
	}
	int st;
	waitpid(a, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* Hand pid a to a new process whose main thread has tid a: without the pidfd the helper
	 * would find /proc/a/task/a with our uid and grant it. */
	pid_t b = -1;
	int reused = 0;
	FILE *f = fopen("/proc/sys/kernel/ns_last_pid", "w");
	if (f) {
		fprintf(f, "%ld", (long)a - 1);
		if (fclose(f) == 0) {
			b = fork();
			if (b == 0) {
				pause();
				_exit(0);
			}
			reused = b == a;
		}
	}
	if (!reused)
		printf("   note: could not make the kernel reuse pid %ld (ns_last_pid: %s); "
		       "checking the exited peer only\n", (long)a, f ? "no reuse" : strerror(errno));
	ssize_t n = recv(s, reply, sizeof(reply) - 1, 0);
	reply[n > 0 ? n : 0] = '\0';
	printf("   peer %ld%s: %s\n", (long)a, reused ? " (pid reused)" : "", reply);
	char expect[96];
	snprintf(expect, sizeof(expect), "refused: your process (pid %ld) has exited", (long)a);
	CHECK(strncmp(reply, expect, strlen(expect)) == 0);
	close(s);
	if (einval) { /* fail closed: no pidfd for a live peer either, so no grant */
		struct ptrec_helper_event ev;
		CHECK(ptrec_helper_open(path, "intel_pt", tid_self(), 4096, &ev, reply,
		                        sizeof(reply)) == -PTREC_EPERM);
		printf("   a live peer, SO_PEERPIDFD failing: %s\n", reply);
		CHECK(strstr(reply, "(no pidfd for it: Invalid argument)") != NULL);
	}
	if (b > 0) {
		kill(b, SIGKILL);
		waitpid(b, NULL, 0);
	}
	helper_stop(slow);
}

/* ---- bad requests --------------------------------------------------------------------------- */

static void test_bad_requests(void)
{
	static char big[65536];
	char reply[256], req[128];

	printf("-- malformed, oversized, empty and silent requests get a reason\n");
	static const struct {
		const char *msg;
		const char *reason;
	} cases[] = {
		{"hello", "refused: not a ptrec-helper/1 request"},
		{"ptrec-helper/2 ping", "refused: not a ptrec-helper/1 request"},
		{"ptrec-helper/1 ping now", "refused: ping takes no arguments"},
		{"ptrec-helper/1 open perf_sw tid=1 ring=4096", "refused: event \"perf_sw\" is not"},
		{"ptrec-helper/1 open intel_pt tid=01 ring=4096", "refused: tid \"01\" is not"},
		{"ptrec-helper/1 open intel_pt tid=0 ring=4096", "refused: tid \"0\" is not"},
		{"ptrec-helper/1 open intel_pt tid=-5 ring=4096", "refused: tid \"-5\" is not"},
		{"ptrec-helper/1 open intel_pt tid=99999999999999999999999 ring=4096",
		 "refused: tid \"9999"},
		{"ptrec-helper/1 open intel_pt tid=5 ring=5000", "refused: ring \"5000\" is not"},
		{"ptrec-helper/1 open intel_pt tid=5 tid=5 ring=4096", "refused: tid given twice"},
		{"ptrec-helper/1 open intel_pt tid=5", "refused: open needs tid= and ring="},
		{"ptrec-helper/1 open intel_pt tid=5 ring=4096 cpu=0", "refused: unknown argument"},
		{"ptrec-helper/1 open intel_pt tid=5  ring=4096", "refused: unknown argument"},
		{"ptrec-helper/1 open intel_pt tid=5 ring=4096 exclude_kernel=0",
		 "refused: unknown argument"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		raw_ask(cases[i].msg, strlen(cases[i].msg), reply, sizeof(reply));
		if (strncmp(reply, cases[i].reason, strlen(cases[i].reason)))
			fprintf(stderr, "   \"%s\" -> \"%s\"\n", cases[i].msg, reply);
		CHECK(strncmp(reply, cases[i].reason, strlen(cases[i].reason)) == 0);
	}
	raw_ask("ptrec-helper/1 p\0ng", 19, reply, sizeof(reply));
	CHECK_STR(reply, "refused: byte 0x00 at offset 16 is not printable ASCII");
	raw_ask("", 0, reply, sizeof(reply));
	CHECK_STR(reply, "refused: empty request");
	memset(big, 'a', sizeof(big));
	raw_ask(big, sizeof(big), reply, sizeof(reply));
	CHECK_STR(reply, "refused: request of 65536 bytes is over the limit of 256");
	/* A valid request one byte over the limit. */
	snprintf(req, sizeof(req), PTREC_HELPER_PROTO " open intel_pt tid=%ld ring=4096",
	         (long)tid_self());
	memset(big, ' ', 300);
	memcpy(big, req, strlen(req));
	raw_ask(big, PTREC_HELPER_MSG_MAX + 1, reply, sizeof(reply));
	CHECK_STR(reply, "refused: request of 257 bytes is over the limit of 256");

	/* A client that sends nothing is cut off at the timeout (1000 ms here: long enough that the
	 * 32 clients of test_many_clients are not cut off on a loaded machine) while another is
	 * served meanwhile. */
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int silent = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	struct sockaddr_un sa;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	strcpy(sa.sun_path, sock_path);
	CHECK(connect(silent, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	CHECK(ptrec_helper_ping(sock_path, reply, sizeof(reply)) == 0);
	ssize_t n = recv(silent, reply, sizeof(reply) - 1, 0);
	reply[n > 0 ? n : 0] = '\0';
	clock_gettime(CLOCK_MONOTONIC, &t1);
	CHECK_STR(reply, "refused: no request within the timeout");
	long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	CHECK(ms >= 900 && ms < 5000);
	close(silent);
	CHECK(ptrec_helper_ping(sock_path, reply, sizeof(reply)) == 0);
}

/* ---- many clients -------------------------------------------------------------------------- */

#define CLIENTS 32
#define ROUNDS 8

static void *client(void *arg)
{
	int *granted = arg;
	for (int i = 0; i < ROUNDS; i++) {
		struct ptrec_helper_event ev;
		char why[256];
		if (ptrec_helper_open(sock_path, "intel_pt", tid_self(), 65536, &ev, why,
		                      sizeof(why)) == 0 && ev.fd >= 0) {
			__atomic_fetch_add(granted, 1, __ATOMIC_RELAXED);
			close(ev.fd);
		} else {
			fprintf(stderr, "   client refused: %s\n", why);
		}
	}
	return NULL;
}

static void test_many_clients(void)
{
	pthread_t th[CLIENTS];
	int granted = 0;

	printf("-- %d concurrent clients x %d requests are all served\n", CLIENTS, ROUNDS);
	for (int i = 0; i < CLIENTS; i++)
		pthread_create(&th[i], NULL, client, &granted);
	for (int i = 0; i < CLIENTS; i++)
		pthread_join(th[i], NULL);
	CHECK_EQ_U64(granted, CLIENTS * ROUNDS);
}

/* ---- restart ---------------------------------------------------------------------------- */

static void test_restart(int held)
{
	char reply[256];
	struct ptrec_helper_event ev;

	printf("-- fds passed before a helper restart keep counting; the new helper serves\n");
	helper_stop(helper_pid);
	helper_pid = -1;
	CHECK(ptrec_helper_ping(sock_path, reply, sizeof(reply)) == -PTREC_ENOSUPP);
	uint64_t a = count_of(held);
	spin_ms(20);
	uint64_t b = count_of(held);
	printf("   held fd: %llu ns, then %llu ns after 20 ms of this thread's CPU time\n",
	       (unsigned long long)a, (unsigned long long)b);
	CHECK(a != UINT64_MAX && b >= a + 18000000u);
	helper_pid = helper_start(sock_path, NULL, NULL);
	CHECK(ptrec_helper_open(sock_path, "intel_pt", tid_self(), 65536, &ev, reply,
	                        sizeof(reply)) == 0);
	if (ev.fd >= 0)
		close(ev.fd);
	close(held);
}

/* ---- a fake helper: what the client accepts ------------------------------------------------ */

/* A listener at path that, per connection, either passes a zero-length read-write file as the
 * "event" with an ok reply (mode 'f'), or never answers (mode 's').  Runs in a child. */
static pid_t fake_helper(const char *path, int mode)
{
	struct sockaddr_un sa;
	int ls = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	strcpy(sa.sun_path, path);
	if (ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof(sa)) || chmod(path, 0666) ||
	    listen(ls, 8))
		exit(99);
	fflush(stdout);
	pid_t p = fork();
	if (p == 0) {
		char file[200], buf[300];
		snprintf(file, sizeof(file), "%s.empty", path);
		int empty = open(file, O_RDWR | O_CREAT | O_TRUNC, 0666);
		unlink(file);
		for (;;) {
			int c = accept(ls, NULL, NULL);
			if (c < 0 || mode == 's') /* silent: keep it open (never closed), say nothing */
				continue;
			if (recv(c, buf, sizeof(buf), 0) < 0) {
				close(c);
				continue;
			}
			static const char ok[] = "ok config=0x1 config1=0x0 config2=0x0 mtc_period=0";
			union {
				struct cmsghdr h;
				char space[CMSG_SPACE(sizeof(int))];
			} ctl;
			struct iovec iov = {(void *)ok, sizeof(ok) - 1};
			struct msghdr mh;
			memset(&mh, 0, sizeof(mh));
			memset(&ctl, 0, sizeof(ctl));
			mh.msg_iov = &iov;
			mh.msg_iovlen = 1;
			mh.msg_control = ctl.space;
			mh.msg_controllen = sizeof(ctl.space);
			struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
			cm->cmsg_level = SOL_SOCKET;
			cm->cmsg_type = SCM_RIGHTS;
			cm->cmsg_len = CMSG_LEN(sizeof(int));
			memcpy(CMSG_DATA(cm), &empty, sizeof(int));
			sendmsg(c, &mh, MSG_NOSIGNAL);
			close(c);
		}
	}
	close(ls);
	return p;
}

static int refuse_perf(void);

static void test_fake_helper(void)
{
	char path[160], reason[512];
	struct ptrec_helper_event ev;
	struct timespec t0, t1, t2;

	printf("-- a fake helper's file is not mapped, a silent one costs one bounded wait\n");
	snprintf(path, sizeof(path), "%s/fake.sock", dir);
	pid_t fake = fake_helper(path, 'f');
	CHECK(ptrec_helper_open(path, "intel_pt", tid_self(), 65536, &ev, reason,
	                        sizeof(reason)) == -PTREC_EIO);
	printf("   a zero-length file passed as the event: %s\n", reason);
	CHECK(ev.fd == -1);
	CHECK(strstr(reason, "ptrec-helper passed an fd that is not a perf event") != NULL);
	/* The library's own path, with the kernel refusing perf_event_open as at paranoid 3: a
	 * child maps what it was given (before the check: SIGBUS on the first write). */
	fflush(stdout);
	pid_t c = fork();
	if (c == 0) {
		struct ptrec_perf_aux_spec spec = {
			.pmu_name = "intel_pt", .type = PERF_TYPE_SOFTWARE,
			.config = PERF_COUNT_SW_TASK_CLOCK,
		};
		struct ptrec_ring ring;
		setenv("PTREC_HELPER", path, 1);
		if (refuse_perf())
			_exit(77);
		int rc = ptrec_perf_aux_open(&ring, 65536, &spec, reason, sizeof(reason));
		printf("   the library, given it: %d %s\n", rc, reason);
		fflush(stdout);
		_exit(rc == -PTREC_EPERM && strstr(reason, "not a perf event") ? 0 : 1);
	}
	int st;
	waitpid(c, &st, 0);
	if (WIFSIGNALED(st))
		fprintf(stderr, "   the library died of signal %d\n", WTERMSIG(st));
	CHECK((WIFEXITED(st) && WEXITSTATUS(st) == 0) || (WIFEXITED(st) && WEXITSTATUS(st) == 77));
	kill(fake, SIGKILL);
	waitpid(fake, NULL, 0);
	unlink(path);

	fake = fake_helper(path, 's');
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK(ptrec_helper_open(path, "intel_pt", tid_self(), 65536, &ev, reason,
	                        sizeof(reason)) == -PTREC_EIO);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("   a silent helper: %s\n", reason);
	CHECK(strstr(reason, "no reply within 1000 ms") != NULL);
	CHECK(ptrec_helper_open(path, "intel_pt", tid_self(), 65536, &ev, reason,
	                        sizeof(reason)) == -PTREC_EIO);
	clock_gettime(CLOCK_MONOTONIC, &t2);
	printf("   and right after: %s\n", reason);
	CHECK(strstr(reason, "not asked again for") != NULL);
	long ms1 = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	long ms2 = (t2.tv_sec - t1.tv_sec) * 1000 + (t2.tv_nsec - t1.tv_nsec) / 1000000;
	printf("   waited %ld ms, then %ld ms\n", ms1, ms2);
	CHECK(ms1 >= 900 && ms1 < 1500);
	CHECK(ms2 < 100);
	kill(fake, SIGKILL);
	waitpid(fake, NULL, 0);
	unlink(path);
}

/* As nobody: asks for its own thread at sock_path, returns rc|reason. */
static void ask_untrusted(char *out, size_t len)
{
	struct ptrec_helper_event ev;
	char why[300];
	int rc = ptrec_helper_open(sock_path, "intel_pt", tid_self(), 4096, &ev, why, sizeof(why));
	snprintf(out, len, "%d|%s", rc, why);
}

/* A socket another user owns, or in a directory others may write, is not asked. */
static void test_untrusted_socket(void)
{
	char path[160], out[700], saved[128], cmd[4400], info[8192];
	struct ptrec_helper_event ev;

	printf("-- a socket of another user, or in a directory others may write, is not asked\n");
	if (geteuid() != 0) {
		printf("   skipped: not root, so this test cannot make another user's socket\n");
		return;
	}
	/* Root's own helper, seen by nobody: root's socket in root's 0711 directory: asked. */
	as_nobody(ask_untrusted, out, sizeof(out));
	CHECK(strncmp(out, "0|", 2) == 0);
	/* A socket that belongs to nobody, asked by root. */
	snprintf(path, sizeof(path), "%s/nobody.sock", dir);
	pid_t fake = fake_helper(path, 'f');
	CHECK(lchown(path, 65534, 65534) == 0);
	CHECK(ptrec_helper_open(path, "intel_pt", tid_self(), 65536, &ev, out, sizeof(out)) ==
	      -PTREC_EPERM);
	printf("   nobody's socket: %s\n", out);
	CHECK(strstr(out, "belongs to uid 65534, neither root nor you (uid 0)") != NULL);
	const char *tool = getenv("PTREC_TOOL");
	if (tool) {
		snprintf(cmd, sizeof(cmd), "PTREC_HELPER='%s' '%s' info --json", path, tool);
		FILE *f = popen(cmd, "r");
		size_t n = f ? fread(info, 1, sizeof(info) - 1, f) : 0;
		info[n] = '\0';
		if (f)
			pclose(f);
		CHECK(strstr(info, "\"reachable\": false,") != NULL);
		CHECK(strstr(info, "belongs to uid 65534, neither root nor you") != NULL);
	}
	/* Root's socket in a directory anyone may write (no sticky bit): not asked either. */
	char open_dir[160];
	snprintf(open_dir, sizeof(open_dir), "%s/open", dir);
	CHECK(mkdir(open_dir, 0777) == 0 && chmod(open_dir, 0777) == 0);
	snprintf(saved, sizeof(saved), "%s", sock_path);
	snprintf(sock_path, sizeof(sock_path), "%.100s/helper.sock", open_dir);
	pid_t h = fake_helper(sock_path, 'f');
	CHECK(ptrec_helper_open(sock_path, "intel_pt", tid_self(), 65536, &ev, out, sizeof(out)) ==
	      -PTREC_EPERM);
	printf("   a 0777 directory: %s\n", out);
	CHECK(strstr(out, "(mode 0777) is writable by others") != NULL);
	kill(h, SIGKILL);
	waitpid(h, NULL, 0);
	unlink(sock_path);
	CHECK(rmdir(open_dir) == 0);
	snprintf(sock_path, sizeof(sock_path), "%s", saved);
	kill(fake, SIGKILL);
	waitpid(fake, NULL, 0);
	unlink(path);
}

/* ---- the helper's own socket ----------------------------------------------------------------- */

/* Runs the helper on path (plus one extra option pair) for at most 1.5 s or until it exits,
 * its stderr into err.  Returns its exit status, or -1 if it was still running (killed). */
static int helper_try(const char *path, const char *x1, const char *x2, char *err, size_t len)
{
	int pfd[2];
	if (pipe(pfd))
		exit(99);
	fflush(stdout);
	pid_t p = fork();
	if (p == 0) {
		dup2(pfd[1], 2);
		close(pfd[0]);
		if (helper_no_chmod && path_chmod_eperm())
			_exit(126);
		execl(helper_bin, helper_bin, "--test-software-event", "--socket", path, x1, x2,
		      (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	int st = 0, done = 0;
	for (int i = 0; i < 150 && !done; i++) {
		done = waitpid(p, &st, WNOHANG) == p;
		if (!done)
			sleep_ms(10);
	}
	if (!done) {
		kill(p, SIGTERM);
		waitpid(p, &st, 0);
	}
	ssize_t n = read(pfd[0], err, len - 1);
	err[n > 0 ? n : 0] = '\0';
	close(pfd[0]);
	return done && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* As uid/gid 61998 (in no group of ours): may it connect to sock_path? */
static int stranger_connects(void)
{
	pid_t p = fork();
	if (p == 0) {
		struct sockaddr_un sa;
		if (setgroups(0, NULL) || setgid(61998) || setuid(61998))
			_exit(3);
		int s = socket(AF_UNIX, SOCK_SEQPACKET, 0);
		memset(&sa, 0, sizeof(sa));
		sa.sun_family = AF_UNIX;
		strcpy(sa.sun_path, sock_path);
		_exit(connect(s, (struct sockaddr *)&sa, sizeof(sa)) == 0 ? 0 :
		      errno == EACCES ? 1 : 2);
	}
	int st;
	waitpid(p, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 3;
}

static void test_socket_dir(void)
{
	char sub[160], path[200], err[2048], reply[256];
	struct stat st;

	printf("-- the helper's socket: never in a directory others may write, its mode set at "
	       "bind (no chmod that follows a symlink), 0660 for --socket-group\n");
	static const struct {
		const char *name;
		mode_t mode;
		uid_t owner;
	} bad[] = {{"open", 0777, 0}, {"sticky", 01777, 0}, {"group", 0775, 0},
	           {"nobodys", 0755, 65534}};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(sub, sizeof(sub), "%s/%s", dir, bad[i].name);
		snprintf(path, sizeof(path), "%s/helper.sock", sub);
		CHECK(mkdir(sub, 0700) == 0 && chmod(sub, bad[i].mode) == 0 &&
		      chown(sub, bad[i].owner, 0) == 0);
		int rc = helper_try(path, NULL, NULL, err, sizeof(err));
		printf("   %s (mode %04o, uid %lu): exit %d: %s", bad[i].name, (unsigned)bad[i].mode,
		       (unsigned long)bad[i].owner, rc, err);
		CHECK(rc == 1);
		CHECK(strstr(err, "may be written by others, who could swap the socket") != NULL);
		CHECK(lstat(path, &st) < 0 && errno == ENOENT);
		unlink(path);
		CHECK(rmdir(sub) == 0);
	}

	/* No mode change by path at all: under a filter that fails chmod/fchmodat, the helper
	 * starts and its socket is 0666. */
	snprintf(path, sizeof(path), "%s/nochmod.sock", dir);
	helper_no_chmod = 1;
	fflush(stdout);
	pid_t h = helper_start(path, NULL, NULL); /* exits 99 if it never answers */
	helper_no_chmod = 0;
	CHECK(lstat(path, &st) == 0 && S_ISSOCK(st.st_mode) && (st.st_mode & 07777) == 0666);
	helper_stop(h);

	/* --socket-group: 0660, that group's; a user outside it cannot connect. */
	char saved[sizeof(sock_path)];
	snprintf(saved, sizeof(saved), "%s", sock_path);
	snprintf(sock_path, sizeof(sock_path), "%.100s/group.sock", dir);
	h = helper_start(sock_path, "--socket-group", "65534");
	CHECK(lstat(sock_path, &st) == 0 && (st.st_mode & 07777) == 0660 && st.st_gid == 65534);
	CHECK(ptrec_helper_ping(sock_path, reply, sizeof(reply)) == 0); /* root */
	char out[700];
	as_nobody(ask_untrusted, out, sizeof(out)); /* nobody, of group 65534 */
	CHECK(strncmp(out, "0|", 2) == 0);
	CHECK(stranger_connects() == 1); /* EACCES */
	helper_stop(h);
	snprintf(sock_path, sizeof(sock_path), "%s", saved);
}

/* ---- one user cannot lock the others out ------------------------------------------------------ */

#define FLOOD_CONNS 70 /* more than --max-clients (64) */
#define FLOOD_BAD 200

static char flood_path[160];

/* As nobody: holds FLOOD_CONNS silent connections (those past its per-uid limit are answered
 * "busy" at once), asks for its own thread meanwhile, then sends FLOOD_BAD bad requests. */
static void flood(char *out, size_t len)
{
	struct sockaddr_un sa;
	int held[FLOOD_CONNS], busy = 0, busy_named = 0;
	char reply[256], why[300];

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	strcpy(sa.sun_path, flood_path);
	for (int i = 0; i < FLOOD_CONNS; i++) {
		held[i] = socket(AF_UNIX, SOCK_SEQPACKET, 0);
		struct timeval tv = {0, 200000};
		setsockopt(held[i], SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		if (connect(held[i], (struct sockaddr *)&sa, sizeof(sa)))
			continue;
	}
	sleep_ms(300); /* the answers to those past the limit are in by now */
	for (int i = 0; i < FLOOD_CONNS; i++) {
		ssize_t n = recv(held[i], reply, sizeof(reply) - 1, MSG_DONTWAIT);
		reply[n > 0 ? n : 0] = '\0';
		busy += strncmp(reply, "refused: busy: ", 15) == 0;
		busy_named += strstr(reply, "uid 65534 has 8 connections open") != NULL;
	}
	/* Told the answer, nobody's own requests end in -PTREC_EBUSY within the bound. */
	struct ptrec_helper_event ev;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int rc = ptrec_helper_open(flood_path, "intel_pt", tid_self(), 4096, &ev, why, sizeof(why));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	/* The parent, another uid, is served meanwhile: tell it to go, wait until it is done. */
	if (write(1, "go", 2) != 2 || read(0, reply, 2) != 2)
		_exit(5);
	for (int i = 0; i < FLOOD_CONNS; i++)
		close(held[i]);
	for (int i = 0; i < FLOOD_BAD; i++) {
		char r[256];
		int s = socket(AF_UNIX, SOCK_SEQPACKET, 0);
		if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) == 0 && send(s, "hello", 5, 0) == 5)
			while (recv(s, r, sizeof(r), 0) < 0 && errno == EINTR)
				;
		close(s);
	}
	snprintf(out, len, "busy=%d named=%d rc=%d ms=%ld why=%s", busy, busy_named, rc, ms, why);
}

static void test_flood(void)
{
	char log[200], out[700], reason[256];

	printf("-- one user holding every connection it can locks nobody else out; its refusals "
	       "are answered, logged under its own name and rate-limited\n");
	if (geteuid() != 0) {
		printf("   skipped: not root, so this test cannot run a client as another uid\n");
		return;
	}
	snprintf(flood_path, sizeof(flood_path), "%s/flood.sock", dir);
	snprintf(log, sizeof(log), "%s/flood.log", dir);
	helper_log = log;
	/* Default limits (64 connections, 8 per uid); silent peers held 3 s, longer than the
	 * client's bound, so that nobody's slots stay full while it asks. */
	pid_t h = helper_start(flood_path, "--timeout-ms", "3000");
	helper_log = NULL;
	/* nobody floods in a child, talking to us over two pipes (its stdin and stdout). */
	int to[2], from[2];
	if (pipe(to) || pipe(from))
		exit(99);
	fflush(stdout);
	pid_t c = fork();
	if (c == 0) {
		dup2(to[0], 0);
		dup2(from[1], 1);
		char buf[700];
		as_nobody(flood, buf, sizeof(buf));
		_exit(write(1, buf, strlen(buf)) > 0 ? 0 : 1);
	}
	close(to[0]);
	close(from[1]);
	char go[2];
	CHECK(read(from[0], go, 2) == 2);
	int granted = 0;
	for (int i = 0; i < 20; i++) {
		struct ptrec_helper_event ev;
		if (ptrec_helper_open(flood_path, "intel_pt", tid_self(), 4096, &ev, reason,
		                      sizeof(reason)) == 0) {
			granted++;
			close(ev.fd);
		} else {
			printf("   refused to root: %s\n", reason);
		}
	}
	printf("   root, while nobody holds all it can: %d of 20 granted\n", granted);
	CHECK(granted == 20);
	CHECK(write(to[1], "ok", 2) == 2);
	ssize_t n = read(from[0], out, sizeof(out) - 1);
	out[n > 0 ? n : 0] = '\0';
	printf("   nobody: %s\n", out);
	int busy = -1, named = -1, rc = 0;
	long ms = -1;
	CHECK(sscanf(out, "busy=%d named=%d rc=%d ms=%ld", &busy, &named, &rc, &ms) == 4);
	CHECK(busy == FLOOD_CONNS - 8 && named == busy); /* past its 8: answered busy, read */
	CHECK(rc == -PTREC_EBUSY && strstr(out, "why=busy: uid 65534 has 8 connections open"));
	CHECK(ms >= 700 && ms < 1500); /* retried "busy" until near its 1000 ms bound */
	int st;
	waitpid(c, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(to[1]);
	close(from[0]);
	helper_stop(h);

	FILE *f = fopen(log, "r");
	char line[512];
	int lines = 0, refused = 0, blamed_root = 0, busy_named = 0, dropped = 0;
	while (f && fgets(line, sizeof(line), f)) {
		lines++;
		refused += strstr(line, ": refused: ") != NULL;
		blamed_root += strstr(line, "pid -1 uid 0") != NULL;
		busy_named += strstr(line, " uid 65534: refused: busy: uid 65534 has 8") != NULL;
		dropped += strstr(line, "more refusals in the last") != NULL;
	}
	if (f)
		fclose(f);
	printf("   the helper's log: %d lines, %d refusals logged, %d summary lines\n", lines,
	       refused, dropped);
	CHECK(refused <= 20);          /* of 62 busy + FLOOD_BAD bad requests */
	CHECK(busy_named >= 1);
	CHECK(blamed_root == 0);
	CHECK(dropped == 1);           /* "N more refusals ... not logged", at the latest at stop */
	unlink(log);
}

/* ---- the library's fallback ---------------------------------------------------------------- */

/* Makes perf_event_open fail with EACCES in this thread, as perf_event_paranoid=3 does. */
static int refuse_perf(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_perf_event_open, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof(f) / sizeof(f[0]), f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

static void test_library_fallback(void)
{
	struct ptrec_perf_aux_spec spec = {
		.pmu_name = "intel_pt",
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_TASK_CLOCK,
	};
	struct ptrec_perf_event ev;
	char reason[512];

	printf("-- the library opens through the helper when the kernel refuses it\n");
	/* Not refused: the library opens the event itself. */
	setenv("PTREC_HELPER", sock_path, 1);
	CHECK(ptrec_perf_event_open(&spec, 65536, &ev, reason, sizeof(reason)) == 0);
	CHECK(ev.via_helper == 0);
	close(ev.fd);

	if (refuse_perf()) {
		printf("   skipped: cannot install a seccomp filter: %s\n", strerror(errno));
		return;
	}
	errno = 0;
	CHECK(syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0) == -1 && errno == EACCES);
	CHECK(ptrec_perf_event_open(&spec, 65536, &ev, reason, sizeof(reason)) == 0);
	CHECK(ev.via_helper == 1);
	CHECK(ev.fd >= 0);
	if (ev.fd >= 0) {
		ioctl(ev.fd, PERF_EVENT_IOC_ENABLE, 0);
		spin_ms(20);
		CHECK(count_of(ev.fd) >= 18000000u);
		close(ev.fd);
	}
	/* The backends' verdict "perf_event_paranoid forbids it" gives way to a live helper. */
	strcpy(reason, "perf_event_paranoid is 3 (> 2)");
	CHECK(ptrec_helper_instead(-PTREC_EPERM, reason, sizeof(reason)) == 0);

	/* The ring: the library maps the helper's fd itself; a software event has no AUX area,
	 * so the data pages map and the AUX mapping is what fails. */
	struct ptrec_ring ring;
	CHECK(ptrec_perf_aux_open(&ring, 65536, &spec, reason, sizeof(reason)) == -PTREC_ENOSUPP);
	printf("   ring over the helper's software event: %s\n", reason);
	CHECK(strstr(reason, "mmap of the intel_pt AUX area") != NULL);
	CHECK(ring.fd == -1);

	setenv("PTREC_HELPER", "off", 1);
	CHECK(ptrec_perf_event_open(&spec, 65536, &ev, reason, sizeof(reason)) == -PTREC_EPERM);
	CHECK(strstr(reason, "; ptrec-helper: off (PTREC_HELPER=off)") != NULL);
	strcpy(reason, "perf_event_paranoid is 3 (> 2)");
	CHECK(ptrec_helper_instead(-PTREC_EPERM, reason, sizeof(reason)) == -PTREC_EPERM);

	setenv("PTREC_HELPER", "/nonexistent/helper.sock", 1);
	CHECK(ptrec_perf_event_open(&spec, 65536, &ev, reason, sizeof(reason)) == -PTREC_EPERM);
	printf("   without a helper: %s\n", reason);
	CHECK(strstr(reason, "; ptrec-helper: no ptrec-helper at /nonexistent/helper.sock") != NULL);
}

/* `ptrec info --json` says whether the helper is reachable. */
static void test_info(void)
{
	const char *tool = getenv("PTREC_TOOL");
	char cmd[4400], out[8192];

	printf("-- ptrec info reports the helper\n");
	if (!tool) {
		printf("   skipped: PTREC_TOOL is not set\n");
		return;
	}
	for (int off = 0; off < 2; off++) {
		snprintf(cmd, sizeof(cmd), "PTREC_HELPER='%s' '%s' info --json", off ? "off" : sock_path,
		         tool);
		FILE *p = popen(cmd, "r");
		size_t n = p ? fread(out, 1, sizeof(out) - 1, p) : 0;
		out[n] = '\0';
		CHECK(p && pclose(p) == 0);
		char *h = strstr(out, "\"helper\": {");
		CHECK(h != NULL);
		if (!h)
			continue;
		char *e = strchr(h, '}');
		if (e)
			*e = '\0';
		if (off) {
			CHECK(strstr(h, "\"socket\": null,") != NULL);
			CHECK(strstr(h, "\"reachable\": false,") != NULL);
			CHECK(strstr(h, "\"answer\": \"off (PTREC_HELPER=off)\"") != NULL);
		} else {
			char expect[256];
			snprintf(expect, sizeof(expect), "\"answer\": \"ptrec-helper %s "
			         "events=software(test)\"", ptrec_version());
			CHECK(strstr(h, "\"reachable\": true,") != NULL);
			CHECK(strstr(h, expect) != NULL);
		}
	}
}

int main(void)
{
	const char *b = getenv("top_builddir");
	int fd = sw_event_open(0);
	if (fd < 0) {
		int e = errno;
		FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
		int par = -99;
		if (f) {
			if (fscanf(f, "%d", &par) != 1)
				par = -99;
			fclose(f);
		}
		SKIP("this kernel refuses a software perf event to this test (%s, "
		     "perf_event_paranoid %d), so the helper's test mode cannot open one either",
		     strerror(e), par);
	}
	close(fd);
	snprintf(helper_bin, sizeof(helper_bin), "%s/libptrec/helper/ptrec-helper", b ? b : ".");
	strcpy(dir, "/tmp/ptrec-helper-test.XXXXXX");
	if (!mkdtemp(dir) || chmod(dir, 0711)) /* the nobody client must reach the socket */
		return 99;
	snprintf(sock_path, sizeof(sock_path), "%s/helper.sock", dir);
	signal(SIGPIPE, SIG_IGN);

	helper_pid = helper_start(sock_path, NULL, NULL);
	char reply[256];
	CHECK(ptrec_helper_ping(sock_path, reply, sizeof(reply)) == 0);
	CHECK(strstr(reply, "events=software(test)") != NULL);

	int held = test_own_thread();
	test_other_process();
	test_other_uid();
	test_not_dumpable();
	test_pid_reuse(0);
	test_pid_reuse(1);
	test_bad_requests();
	test_many_clients();
	if (held >= 0)
		test_restart(held);
	test_info();
	test_fake_helper();
	test_untrusted_socket();
	test_socket_dir();
	test_flood();
	test_library_fallback();

	helper_stop(helper_pid);
	helper_pid = -1;
	CHECK(access(sock_path, F_OK) != 0); /* the helper removes its socket on SIGTERM */
	rmdir(dir);
	return check_done();
}
