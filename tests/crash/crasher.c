/* crasher.c — a program that crashes in the way its argument names, with libptrec recording
 * (instrumented backend: built with -finstrument-functions -O0 -g).  Each case crashes in a
 * function named after it, called through handle_request() from main(), so a test can check
 * that the report names the crashing function and its callers.
 *
 *   crasher CASE      CASE: segv_null segv_wild call_null bus ill fpe abort trap sys overflow
 *                           two_threads heap thread_after_init ptrec_assert chain jit
 *                           own_handler vfork vfork_signal exit_race return_race
 *                           main_exit segv_null_thread
 *
 * "sys" installs a seccomp filter that traps getpriority(2) (SECCOMP_RET_TRAP raises SIGSYS)
 * and then calls it; nothing in libptrec or the ptrec tool calls getpriority, so the report
 * child, which inherits the filter, is unaffected.
 *
 * "chain" installs its own SIGSEGV handler before ptrec_init; that handler writes
 * "crasher: previous handler ran" to stderr and exits with status 42.
 * "jit" runs ud2 from an anonymous executable mapping (like JIT code).
 * "own_handler" starts the recorder with PTREC_F_NO_SIGNALS; its own SIGSEGV handler calls
 * ptrec_crash_dump() (a second call must say -PTREC_EBUSY), then dies of the signal.
 * "vfork": a vfork child (it shares the memory) faults in crash_in_vfork_child; the parent
 * says "crasher: vfork child PID died of signal N", then faults in crash_segv_null.
 * "vfork_signal": main blocks SIGBUS and installs a SIGSEGV handler that says "crasher: parent
 * handler ran", resets SIGSEGV to SIG_DFL and returns; a vfork child resets SIGSEGV to SIG_DFL
 * and empties its mask before it leaves (as spawning code does before exec); main's mask must
 * still hold SIGBUS (else exit 95), then it faults in crash_segv_null.
 * "exit_race", "return_race": a worker faults in crash_in_race_worker while main, once the
 * dump's file appears in $PTREC_DIR, calls exit(0) (or returns 0 from main), as a server
 * shutting down while a worker crashes.
 * "main_exit": main ends with pthread_exit (its leader stays a zombie); a worker waits until
 * it is one, then faults in crash_after_main_exit.
 * "segv_null_thread": the fault of segv_null (crash_segv_null), in a thread main started. */
#include <assert.h>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/audit.h>
#if defined(__x86_64__)
#define TEST_AUDIT_ARCH AUDIT_ARCH_X86_64
#else
#define TEST_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ptrec.h"

static volatile int sink;
/* Bad addresses kept in volatile variables, so the compiler cannot see them coming. */
static volatile uintptr_t addr_null = 0, addr_wild = 0xdead0000beefull, addr_low = 8;
static volatile int keep_recursing = 1;

__attribute__((noinline)) static void crash_segv_null(void)
{
	*(volatile int *)addr_null = 1;
}

/* A call through an unset callback: the fault is at pc 0. */
__attribute__((noinline)) static void crash_call_null(void)
{
	void (*volatile callback)(void) = (void (*)(void))addr_null;
	callback();
	sink++;
}

__attribute__((noinline)) static void crash_segv_wild(void)
{
	*(volatile int *)addr_wild = 2;
}

__attribute__((noinline)) static void crash_bus(void)
{
	char path[] = "/tmp/ptrec-bus-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0 || ftruncate(fd, 8192) != 0)
		exit(99);
	volatile char *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		exit(99);
	unlink(path);
	if (ftruncate(fd, 0) != 0)
		exit(99);
	sink = p[4096]; /* the page is beyond the end of the file now */
}

__attribute__((noinline)) static void crash_ill(void)
{
#if defined(__x86_64__)
	__asm__ volatile("ud2");
#else
	__asm__ volatile("udf #0");
#endif
}

__attribute__((noinline)) static void crash_fpe(void)
{
	volatile int zero = 0;
	sink = 42 / zero;
}

__attribute__((noinline)) static void crash_trap(void)
{
#if defined(__x86_64__)
	__asm__ volatile("int3");
#else
	__asm__ volatile("brk #0");
#endif
}

__attribute__((noinline)) static void crash_sys(void)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TEST_AUDIT_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_getpriority, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof(code) / sizeof(code[0]), code};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
		exit(77); /* seccomp unavailable: the test skips */
	sink = (int)syscall(__NR_getpriority, 0, 0);
}

__attribute__((noinline)) static void crash_jit(void)
{
	unsigned char *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
	                           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED)
		exit(99);
#if defined(__x86_64__)
	memset(code, 0x90, 64);  /* nops, then ud2 */
	code[64] = 0x0f;
	code[65] = 0x0b;
#else
	for (int i = 0; i < 16; i++) /* nops, then udf #0 */
		memcpy(code + 4 * i, &(uint32_t){0xd503201fu}, 4);
	memset(code + 64, 0, 4);
	__builtin___clear_cache((char *)code, (char *)code + 68);
#endif
	((void (*)(void))(void *)code)();
}

__attribute__((noinline)) static void crash_abort(void)
{
	assert(sink == 12345);
}

__attribute__((noinline)) static int crash_overflow(int depth)
{
	volatile char pad[256];
	pad[depth & 255] = (char)depth;
	return keep_recursing ? crash_overflow(depth + 1) + pad[0] : pad[0];
}

static pthread_barrier_t both;

__attribute__((noinline)) static void crash_in_thread(void)
{
	*(volatile int *)addr_low = 3;
}

static void *two_threads_worker(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&both);
	crash_in_thread();
	return NULL;
}

__attribute__((noinline)) static void crash_two_threads(void)
{
	pthread_t t[2];
	pthread_barrier_init(&both, NULL, 2);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, two_threads_worker, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
}

__attribute__((noinline)) static void crash_heap(void)
{
	char *a = malloc(64);
	char *b = malloc(64);
	/* Smash the chunk headers around both blocks, then fault: the crash path must not touch
	 * malloc. */
	memset(a - 16, 0xff, 256);
	sink = (int)(uintptr_t)b;
	*(volatile int *)addr_null = 4;
}

__attribute__((noinline)) static void crash_late_thread_fn(void)
{
	*(volatile int *)(addr_low + 8) = 5;
}

static void *late_thread_main(void *arg)
{
	(void)arg;
	crash_late_thread_fn();
	return NULL;
}

__attribute__((noinline)) static void crash_thread_after_init(void)
{
	pthread_t t;
	pthread_create(&t, NULL, late_thread_main, NULL);
	pthread_join(t, NULL);
}

__attribute__((noinline)) static void crash_in_vfork_child(void)
{
	*(volatile int *)(addr_low + 16) = 6;
}

/* Runs child() in a vfork child, which then exits 0; returns its wait status, its pid in *pid. */
static int vfork_run(void (*child)(void), pid_t *pid)
{
	int st = 0;
	pid_t p = vfork();
	if (p == 0) {
		child();
		_exit(0);
	}
	if (p < 0 || waitpid(p, &st, 0) != p)
		exit(99);
	*pid = p;
	return st;
}

__attribute__((noinline)) static void crash_vfork(void)
{
	pid_t p;
	int st = vfork_run(crash_in_vfork_child, &p);
	fprintf(stderr, "crasher: vfork child %d died of signal %d\n", (int)p,
	        WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	crash_segv_null();
}

static void parent_segv(int sig)
{
	static const char msg[] = "crasher: parent handler ran\n";
	(void)!write(2, msg, sizeof(msg) - 1);
	signal(sig, SIG_DFL);
}

__attribute__((noinline)) static void vfork_child_reset(void)
{
	sigset_t none;
	sigemptyset(&none);
	signal(SIGSEGV, SIG_DFL);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

__attribute__((noinline)) static void crash_vfork_signal(void)
{
	sigset_t bus, now;
	pid_t p;
	sigemptyset(&bus);
	sigaddset(&bus, SIGBUS);
	sigprocmask(SIG_BLOCK, &bus, NULL);
	signal(SIGSEGV, parent_segv);
	vfork_run(vfork_child_reset, &p);
	if (sigprocmask(SIG_BLOCK, NULL, &now) != 0 || !sigismember(&now, SIGBUS)) {
		fprintf(stderr, "crasher: main's mask lost SIGBUS in the vfork child\n");
		exit(95);
	}
	crash_segv_null();
}

__attribute__((noinline)) static void crash_in_race_worker(void)
{
	*(volatile int *)(addr_low + 24) = 7;
}

static void *race_worker(void *arg)
{
	(void)arg;
	crash_in_race_worker();
	return NULL;
}

/* 1 once a file named *.ptrec is in directory dir. */
static int dump_begun(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int found = 0;
	while (d && !found && (e = readdir(d))) {
		size_t n = strlen(e->d_name);
		found = n > 6 && !strcmp(e->d_name + n - 6, ".ptrec");
	}
	if (d)
		closedir(d);
	return found;
}

/* Starts the worker that crashes and returns once its dump is being written. */
__attribute__((noinline)) static void crash_race(void)
{
	pthread_t t;
	const char *dir = getenv("PTREC_DIR");
	struct timespec ms = {0, 1000000};
	if (!dir || pthread_create(&t, NULL, race_worker, NULL) != 0)
		exit(99);
	for (int k = 0; k < 60000 && !dump_begun(dir); k++)
		nanosleep(&ms, NULL);
}

__attribute__((noinline)) static void crash_after_main_exit(void)
{
	*(volatile int *)(addr_low + 32) = 8;
}

/* 1 once the main thread (the leader) is a zombie. */
static int main_ended(void)
{
	char path[64], stat[512];
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)getpid());
	int fd = open(path, O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, stat, sizeof(stat) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return 1;
	stat[n] = '\0';
	char *end = strrchr(stat, ')');
	return end && end[1] == ' ' && end[2] == 'Z';
}

static void *after_main_worker(void *arg)
{
	struct timespec ms = {0, 1000000};
	(void)arg;
	for (int k = 0; k < 60000 && !main_ended(); k++)
		nanosleep(&ms, NULL);
	crash_after_main_exit();
	return NULL;
}

__attribute__((noinline)) static void crash_main_exit(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, after_main_worker, NULL) != 0)
		exit(99);
	pthread_exit(NULL);
}

static void *segv_null_main(void *arg)
{
	(void)arg;
	crash_segv_null();
	return NULL;
}

__attribute__((noinline)) static void crash_segv_null_thread(void)
{
	pthread_t t;
	pthread_create(&t, NULL, segv_null_main, NULL);
	pthread_join(t, NULL);
}

__attribute__((noinline)) static void crash_ptrec_assert(void)
{
	PTREC_ASSERT_MSG(sink == 777, "sink is %d", sink);
}

__attribute__((noinline)) static void handle_request(const char *c)
{
	if (!strcmp(c, "segv_null")) crash_segv_null();
	else if (!strcmp(c, "segv_wild")) crash_segv_wild();
	else if (!strcmp(c, "call_null")) crash_call_null();
	else if (!strcmp(c, "bus")) crash_bus();
	else if (!strcmp(c, "ill")) crash_ill();
	else if (!strcmp(c, "fpe")) crash_fpe();
	else if (!strcmp(c, "abort")) crash_abort();
	else if (!strcmp(c, "trap")) crash_trap();
	else if (!strcmp(c, "sys")) crash_sys();
	else if (!strcmp(c, "chain")) crash_segv_null();
	else if (!strcmp(c, "jit")) crash_jit();
	else if (!strcmp(c, "own_handler")) crash_segv_null();
	else if (!strcmp(c, "overflow")) sink = crash_overflow(0);
	else if (!strcmp(c, "two_threads")) crash_two_threads();
	else if (!strcmp(c, "heap")) crash_heap();
	else if (!strcmp(c, "thread_after_init")) crash_thread_after_init();
	else if (!strcmp(c, "ptrec_assert")) crash_ptrec_assert();
	else if (!strcmp(c, "segv_null_thread")) crash_segv_null_thread();
	else if (!strcmp(c, "exit_race")) { crash_race(); exit(0); }
	else if (!strcmp(c, "return_race")) crash_race();
	else if (!strcmp(c, "main_exit")) crash_main_exit();
	else if (!strcmp(c, "vfork")) crash_vfork();
	else if (!strcmp(c, "vfork_signal")) crash_vfork_signal();
	else {
		fprintf(stderr, "crasher: unknown case %s\n", c);
		exit(98);
	}
}

static void previous_handler(int sig)
{
	static const char msg[] = "crasher: previous handler ran\n";
	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(43);
	_exit(42);
}

static void own_handler(int sig, siginfo_t *info, void *uc)
{
	static const char busy[] = "crasher: second ptrec_crash_dump is busy\n";
	int r = ptrec_crash_dump(sig, info, uc);
	if (r == 0 && ptrec_crash_dump(sig, info, uc) == -PTREC_EBUSY)
		(void)!write(2, busy, sizeof(busy) - 1);
	signal(sig, SIG_DFL);
	raise(sig);
}

int main(int argc, char **argv)
{
	struct ptrec_config cfg;

	if (argc != 2) {
		fprintf(stderr, "usage: crasher CASE\n");
		return 98;
	}
	if (!strcmp(argv[1], "chain"))
		signal(SIGSEGV, previous_handler);
	ptrec_config_init(&cfg);
	if (!strcmp(argv[1], "own_handler")) {
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = own_handler;
		sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
		sigaction(SIGSEGV, &sa, NULL);
		cfg.flags |= PTREC_F_NO_SIGNALS;
	}
	int r = ptrec_init(&cfg);
	if (r != 0) {
		fprintf(stderr, "crasher: ptrec_init: %s\n", ptrec_strerror(r));
		return 97;
	}
	handle_request(argv[1]);
	if (!strcmp(argv[1], "return_race"))
		return 0;
	fprintf(stderr, "crasher: %s did not crash\n", argv[1]);
	return 96;
}
