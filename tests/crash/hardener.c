/* hardener.c — crashes the way the hardening tests need (issue 16, issue 10 part 3), with
 * libptrec recording, and two helpers the tests use as oracles.
 *
 *   hardener CASE             crash after ptrec_init(NULL):
 *     segv                    a plain SIGSEGV in crash_here()
 *     nondumpable             prctl(PR_SET_DUMPABLE, 0), then SIGSEGV
 *     redumpable              prctl(PR_SET_DUMPABLE, 1) (a setuid program that wants dumps),
 *                             then SIGSEGV
 *     secret_fd               opens a file without O_CLOEXEC as fd 3 and fd 200, then SIGSEGV
 *     evil_name               names the thread "ev\nil\033[31m", then SIGSEGV
 *     emfile                  uses every free descriptor, then SIGSEGV
 *     closed_stdio            closes descriptors 0, 1 and 2 (a daemon), then SIGSEGV
 *     emfile_noreserve        the same after closing the descriptor libptrec reserved
 *     nofile_low              lowers the soft RLIMIT_NOFILE to 3 (a sandboxed worker): no
 *                             number is left above stdio, not even the reserve's; SIGSEGV
 *     nproc_low               lowers the soft RLIMIT_NPROC to 1 (a sandbox that forbids
 *                             forking; counts only for an ordinary user); SIGSEGV
 *     pre_thread_overflow     two threads started before ptrec_init; one attaches, prints the
 *                             ptrec_status line "no_altstack COUNT TIDS", then "idle_tid TID"
 *                             (the other one's), and overflows its stack
 *     daemon_fds              like a daemon after a preloaded ptrec_init: closes every
 *                             descriptor above 2, then a TCP connection of its own takes the
 *                             numbers 3..63; forks a peer that prints "peer_bytes N" (what
 *                             reached the other end) once the connection closes; SIGSEGV
 *     snapshot_nofile         lowers the soft RLIMIT_NOFILE to 3 (nofile_low), takes a
 *                             snapshot with ptrec_snapshot_path and waits for its report;
 *                             prints "snapshot RC PATH", "soft N" (the soft limit after it) and
 *                             "fds BEFORE AFTER" (descriptors open before and after), exits 0
 *     pre_blocked_attach      a thread started before ptrec_init blocks every signal (a pool's
 *                             worker), calls ptrec_thread_attach() after it, must still read
 *                             SIGSEGV back as blocked (else exit 95), and faults
 *     many_maps               maps 60 000 single pages of alternating protection (a server
 *                             with tens of thousands of mappings; they never merge), then
 *                             SIGSEGV; exits 77 when the kernel refuses so many
 *     chroot                  chroot($HARDENER_ROOT) and chdir("/") after ptrec_init, as
 *                             vsftpd, postfix and OpenSSH's privilege separation do (the new
 *                             root holds no /proc and no report tool); prints "ways_out N"
 *                             (descriptors from which ".." leads out of the new root); SIGSEGV
 *     sandbox                 after ptrec_init, makes itself not dumpable and puts itself
 *                             under a seccomp filter like OpenSSH's preauth sandbox
 *                             (PR_SET_NO_NEW_PRIVS, then PR_SET_SECCOMP: a short list of
 *                             allowed system calls, any other kills); SIGSEGV
 *     status                  prints "settings_problems TEXT" from ptrec_status and exits 0
 *   hardener report DUMP      stands in for `ptrec report` (PTREC_TOOL): prints its open
 *                             descriptors ("fd N" lines, from /proc/self/fd) and exits 0
 *   hardener syslog-sink SOCKET OUT SECONDS
 *                             binds a datagram socket at SOCKET, writes the first datagram
 *                             received to OUT; exits 0, or 1 after SECONDS without one
 *
 * Crash cases exit 96 when they did not crash. */
#include <dirent.h>
#include <stdatomic.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <linux/audit.h>
#if defined(__x86_64__)
#define TEST_AUDIT_ARCH AUDIT_ARCH_X86_64
#else
#define TEST_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>

#include "ptrec.h"
#include "crash/crash.h"

static volatile uintptr_t addr_null = 0;
static volatile int keep_recursing = 1;
static volatile int sink;

__attribute__((noinline)) static void crash_here(void)
{
	*(volatile int *)addr_null = 1;
}

__attribute__((noinline)) static int overflow(int depth)
{
	volatile char pad[256];
	pad[depth & 255] = (char)depth;
	return keep_recursing ? overflow(depth + 1) + pad[0] : pad[0];
}

static int report_stand_in(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	if (!d)
		return 2;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.' && atoi(e->d_name) != dirfd(d))
			printf("fd %s\n", e->d_name);
	closedir(d);
	return 0;
}

static int syslog_sink(const char *path, const char *out, int seconds)
{
	struct sockaddr_un a;
	char buf[8192];
	int s = socket(AF_UNIX, SOCK_DGRAM, 0);
	if (s < 0 || strlen(path) >= sizeof(a.sun_path))
		return 2;
	memset(&a, 0, sizeof(a));
	a.sun_family = AF_UNIX;
	strcpy(a.sun_path, path);
	unlink(path);
	if (bind(s, (struct sockaddr *)&a, sizeof(a)) != 0)
		return 2;
	struct timeval tv = {seconds, 0};
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	ssize_t n = recv(s, buf, sizeof(buf), 0);
	if (n < 0)
		return 1;
	FILE *f = fopen(out, "w");
	if (!f || fwrite(buf, 1, (size_t)n, f) != (size_t)n || fclose(f) != 0)
		return 2;
	return 0;
}

static void use_every_fd(void)
{
	while (open("/dev/null", O_RDONLY) >= 0)
		;
}

/* The daemon_fds case: a connection whose peer counts what reaches it, then every number
 * libptrec might still use belongs to the connection. */
static int daemon_fds(void)
{
	struct sockaddr_in a;
	socklen_t al = sizeof(a);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(l, 1) != 0 ||
	    getsockname(l, (struct sockaddr *)&a, &al) != 0)
		return 99;
	int c = socket(AF_INET, SOCK_STREAM, 0);
	if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof(a)) != 0)
		return 99;
	int s = accept(l, NULL, NULL);
	if (s < 0)
		return 99;
	fflush(stdout);
	if (fork() == 0) {
		char buf[4096];
		long total = 0;
		ssize_t n;
		close(c);
		close(l);
		for (int fd = 3; fd < 1024; fd++)
			if (fd != s)
				close(fd);
		while ((n = read(s, buf, sizeof(buf))) > 0)
			total += n;
		printf("peer_bytes %ld\n", total);
		fflush(stdout);
		_exit(0);
	}
	if (dup2(c, 100) != 100)
		return 99;
	for (int fd = 3; fd < 1024; fd++)
		if (fd != 100)
			close(fd);
	for (int fd = 3; fd < 64; fd++)
		if (dup2(100, fd) != fd)
			return 99;
	crash_here();
	return 96;
}

static pthread_barrier_t started, attach_now;
static pthread_t pre[2];
static _Atomic long idle_tid;

static void *pre_thread(void *arg)
{
	int attacher = arg != NULL;
	if (!attacher)
		idle_tid = (long)ptrec_gettid();
	pthread_barrier_wait(&started);
	pthread_barrier_wait(&attach_now);
	if (!attacher) {
		pause();
		return NULL;
	}
	ptrec_thread_attach();
	struct ptrec_status st = {.struct_size = sizeof(st)};
	ptrec_status(&st);
	printf("no_altstack %u %s\n", st.threads_no_altstack, st.no_altstack_tids);
	printf("idle_tid %ld\n", (long)idle_tid);
	fflush(stdout);
	sink = overflow(0);
	return NULL;
}

static void *blocked_thread(void *arg)
{
	sigset_t all, now;
	(void)arg;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, NULL);
	pthread_barrier_wait(&started);
	pthread_barrier_wait(&attach_now);
	ptrec_thread_attach();
	if (pthread_sigmask(SIG_SETMASK, NULL, &now) != 0 || !sigismember(&now, SIGSEGV))
		exit(95);
	crash_here();
	return NULL;
}

/* Lowers the soft limit of resource to value (the hard one stays); exits 99 on failure. */
/* The sandbox case: not dumpable (OpenSSH's [net] child, after setuid), and the system calls
 * allowed as OpenSSH's preauth filter lists them (x86-64); any other kills the process.  No rt_sigaction, kill or rt_sigreturn: a signal handler there
 * cannot even return. */
static int sandbox(void)
{
	static const int allowed[] = {
		SYS_read, SYS_write, SYS_close, SYS_exit, SYS_exit_group, SYS_brk, SYS_futex,
		SYS_getpid, SYS_getuid, SYS_geteuid, SYS_getrandom, SYS_gettimeofday,
		SYS_clock_gettime, SYS_madvise, SYS_mmap, SYS_mprotect, SYS_mremap, SYS_munmap,
		SYS_nanosleep, SYS_clock_nanosleep, SYS_pselect6,
#ifdef SYS_poll
		SYS_poll, SYS_select,
#else /* aarch64: only the p-variants */
		SYS_ppoll,
#endif
		SYS_rt_sigprocmask, SYS_shutdown,
	};
	enum { N = sizeof(allowed) / sizeof(allowed[0]) };
	struct sock_filter f[4 + 2 * N + 1];
	unsigned k = 0;

	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
	                                      offsetof(struct seccomp_data, arch));
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TEST_AUDIT_ARCH, 1, 0);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
	                                      offsetof(struct seccomp_data, nr));
	for (unsigned i = 0; i < N; i++) {
		f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)allowed[i],
		                                      0, 1);
		f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	}
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL);
	struct sock_fprog prog = {.len = (unsigned short)k, .filter = f};
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0)
		return 77;
	crash_here();
	return 96;
}

static void lower_soft(int resource, rlim_t value)
{
	struct rlimit rl;
	if (getrlimit(resource, &rl) != 0)
		exit(99);
	rl.rlim_cur = value;
	if (setrlimit(resource, &rl) != 0)
		exit(99);
}

/* Descriptors open now (fstat of every number below 4096: no descriptor is needed). */
static int count_fds(void)
{
	struct stat st;
	int n = 0;
	for (int fd = 0; fd < 4096; fd++)
		n += fstat(fd, &st) == 0;
	return n;
}

/* How many open descriptors lead out of the root directory: directories from which ".." many
 * times over ends somewhere else than "/" (from one inside the root, ".." stops at it). */
static int ways_out(void)
{
	struct stat root, st;
	struct rlimit lim;
	int n = 0;
	if (stat("/", &root) != 0 || getrlimit(RLIMIT_NOFILE, &lim) != 0)
		return -1;
	for (long fd = 0; fd < (long)lim.rlim_cur && fd < (1L << 20); fd++) {
		if (fstat((int)fd, &st) != 0 || !S_ISDIR(st.st_mode))
			continue;
		int up = openat((int)fd, "../../../../../../../../../../../../../../../..",
		                O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (up >= 0 && fstat(up, &st) == 0 && (st.st_dev != root.st_dev || st.st_ino != root.st_ino))
			n++;
		if (up >= 0)
			close(up);
	}
	return n;
}

static int snapshot_nofile(void)
{
	char path[4096];
	struct rlimit rl;
	int before = count_fds();
	lower_soft(RLIMIT_NOFILE, 3);
	int r = ptrec_snapshot_path("nofile", path, sizeof(path));
	ptrec_snapshot_flush(30000);
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 99;
	printf("snapshot %d %s\n", r, r == 0 ? path : "-");
	printf("soft %llu\n", (unsigned long long)rl.rlim_cur);
	printf("fds %d %d\n", before, count_fds());
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "report"))
		return report_stand_in();
	if (argc == 5 && !strcmp(argv[1], "syslog-sink"))
		return syslog_sink(argv[2], argv[3], atoi(argv[4]));
	if (argc != 2) {
		fprintf(stderr, "usage: hardener CASE\n");
		return 98;
	}
	const char *c = argv[1];
	if (!strcmp(c, "pre_thread_overflow")) {
		pthread_barrier_init(&started, NULL, 3);
		pthread_barrier_init(&attach_now, NULL, 3);
		pthread_create(&pre[0], NULL, pre_thread, NULL);
		pthread_create(&pre[1], NULL, pre_thread, (void *)1);
		pthread_barrier_wait(&started); /* both exist before ptrec_init */
	}
	if (!strcmp(c, "pre_blocked_attach")) {
		pthread_barrier_init(&started, NULL, 2);
		pthread_barrier_init(&attach_now, NULL, 2);
		pthread_create(&pre[0], NULL, blocked_thread, NULL);
		pthread_barrier_wait(&started);
	}
	int r = ptrec_init(NULL);
	if (r != 0) {
		fprintf(stderr, "hardener: ptrec_init: %s\n", ptrec_strerror(r));
		return 97;
	}
	if (!strcmp(c, "status")) {
		struct ptrec_config cfg;
		ptrec_config_init(&cfg); /* a second look at the environment says nothing more */
		struct ptrec_status st = {.struct_size = sizeof(st)};
		ptrec_status(&st);
		printf("settings_problems %s\n", st.settings_problems);
		printf("ring_size %zu\n", st.ring_size);
		return 0;
	}
	if (!strcmp(c, "segv") || !strcmp(c, "redumpable")) {
		if (c[0] == 'r')
			prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
		crash_here();
	} else if (!strcmp(c, "nondumpable")) {
		prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
		crash_here();
	} else if (!strcmp(c, "secret_fd")) {
		int fd = open("/proc/self/status", O_RDONLY);
		if (fd < 0 || dup2(fd, 3) != 3 || dup2(fd, 200) != 200)
			return 99;
		crash_here();
	} else if (!strcmp(c, "evil_name")) {
		prctl(PR_SET_NAME, "ev\nil\033[31m", 0, 0, 0);
		crash_here();
	} else if (!strcmp(c, "emfile")) {
		use_every_fd();
		crash_here();
	} else if (!strcmp(c, "closed_stdio")) {
		close(0);
		close(1);
		close(2);
		crash_here();
	} else if (!strcmp(c, "emfile_noreserve")) {
		close(ptrec_crash_reserved_fd());
		use_every_fd();
		crash_here();
	} else if (!strcmp(c, "nofile_low")) {
		lower_soft(RLIMIT_NOFILE, 3);
		crash_here();
	} else if (!strcmp(c, "nproc_low")) {
		lower_soft(RLIMIT_NPROC, 1);
		crash_here();
	} else if (!strcmp(c, "snapshot_nofile")) {
		return snapshot_nofile();
	} else if (!strcmp(c, "pre_blocked_attach")) {
		pthread_barrier_wait(&attach_now);
		pthread_join(pre[0], NULL);
	} else if (!strcmp(c, "many_maps")) {
		for (int i = 0; i < 60000; i++)
			if (mmap(NULL, 4096, i & 1 ? PROT_READ : PROT_READ | PROT_WRITE,
			         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED)
				return 77;
		crash_here();
	} else if (!strcmp(c, "chroot")) {
		const char *root = getenv("HARDENER_ROOT");
		if (!root || chroot(root) != 0 || chdir("/") != 0)
			return 99;
		printf("ways_out %d\n", ways_out());
		fflush(stdout);
		crash_here();
	} else if (!strcmp(c, "daemon_fds")) {
		return daemon_fds();
	} else if (!strcmp(c, "sandbox")) {
		return sandbox();
	} else if (!strcmp(c, "pre_thread_overflow")) {
		pthread_barrier_wait(&attach_now);
		pthread_join(pre[1], NULL);
	} else {
		fprintf(stderr, "hardener: unknown case %s\n", c);
		return 98;
	}
	fprintf(stderr, "hardener: %s did not crash\n", c);
	return 96;
}
