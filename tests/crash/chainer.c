/* chainer.c — servers that own their crash signals, with libptrec recording (instrumented
 * backend: built with -finstrument-functions -O0 -g).  Each case installs its handlers the
 * way a real server does, then crashes in a function named after it, called through
 * handle_request() from main(); the tests (test_chain_*.sh) check that libptrec still writes
 * exactly one dump holding the first fault, and that the process dies as the handler meant.
 *
 *   chainer CASE
 *
 *   redis           after ptrec_init: SEGV BUS FPE ILL ABRT with SA_SIGINFO|SA_NODEFER|
 *                   SA_RESETHAND; the handler logs, resets all to SIG_DFL, kill(getpid(), sig)
 *   memtest         the same, and the handler first runs a preserving memory test over every
 *                   anonymous writable mapping with a 1 MiB buffer on its stack
 *   rseq            the same as redis, but the handler first rewrites the rseq_cs word of its
 *                   thread's rseq area (glibc's, in the TCB) as a memory test's pattern
 *                   would, takes a SIGUSR1 meanwhile (the kernel reads the word at every
 *                   signal delivery), and restores it; exit 77 when glibc registered none
 *   kill_threads    the same as redis, but the handler first cancels and joins a worker
 *                   thread blocked in pause(), as Redis 7's killThreads() does before its
 *                   memory test (the worker's exit runs libptrec's thread-exit destructor
 *                   while the crashing thread waits for it)
 *   resethand       SA_RESETHAND handler that logs and returns: the fault repeats and kills
 *   abort           the SIGSEGV handler calls abort()
 *   exit, _exit     the SIGSEGV handler calls exit(3) / _exit(5)
 *   fork_exec       the SIGSEGV handler forks a child that execs /bin/sh to log (servers
 *                   that start a debugger or a log shipper from their crash handler), waits
 *                   for it with waitpid, resets to SIG_DFL and returns
 *   signal          signal(SIGFPE, h); h logs, signal(sig, SIG_DFL), raise(sig)
 *   thread          another thread installs the SIGSEGV handler, then main crashes
 *   before_init     the handler is installed before ptrec_init
 *   guard_page      a guard-page handler maps the page and resumes, 1000 times; then a real
 *                   crash, which the handler does not own: it resets to SIG_DFL and returns
 *   guard_threads   8 threads each take 2000 guard faults on a page of their own at the same
 *                   time (a runtime's threads: Go's recovered nil dereferences), the handler
 *                   maps the page, the thread takes it away again; then main's real crash
 *   guard_join      guard_page's handler, which first cancels and joins a worker thread,
 *                   1100 times with a fresh worker each time (more than libptrec's 1024
 *                   thread slots); then ptrec_status must count one attached thread and
 *                   none untraced, and the real crash follows
 *   runtime_thread  Go's cgo threads: main installs a guard-page handler with
 *                   SA_SIGINFO|SA_ONSTACK and creates a thread with every signal blocked
 *                   (pthread_sigmask around pthread_create); the thread unblocks them and reads
 *                   its alternate stack with the raw system calls, takes the stack it finds as
 *                   its signal stack, and takes 1000 guard faults; the handler counts those it
 *                   ran off that stack (Go throws then); then main's real crash follows
 *   in_handler      the SIGSEGV handler itself faults (at another address)
 *   longjmp         a recovering server: its SIGSEGV handler (flags 0, so SIGSEGV is blocked
 *                   while it runs) leaves with siglongjmp to a sigsetjmp(env, 1), 1000 times;
 *                   then SIGSEGV is reset to SIG_DFL and the real crash follows
 *   thread_exit     1100 worker threads each fault on a guard page, and the SIGSEGV handler
 *                   ends the faulting worker with pthread_exit; main joins it; then
 *                   ptrec_status must count one attached thread and none untraced, and the
 *                   real crash follows
 *   exit_pending    a worker's SIGSEGV handler (SIGSEGV blocked while it runs) sends SIGSEGV
 *                   to its thread and to the process (main blocks it in the kernel), then
 *                   pthread_exit: the thread's one must be dropped (else exit 94), the
 *                   process's must reach main once it unblocks (else exit 93); then the real
 *                   crash follows
 *   queued_again    the SIGTRAP handler (SA_SIGINFO: SIGTRAP blocked while it runs) queues a
 *                   SIGTRAP to the process with sigqueue; held back, it must come back once the
 *                   handler returns with its siginfo (SI_QUEUE, our pid and uid, the value;
 *                   else exit 92, or 91 if it never comes); then the real crash follows
 *   own_thread      a snapshot starts libptrec's writer thread; main blocks SIGBUS in the
 *                   kernel, and the process is sent SIGBUS: the application's SIGBUS handler
 *                   must not run on libptrec's thread (else exit 94) and must run on main once
 *                   it unblocks (else exit 93); then the real crash follows
 *   small_altstack  after ptrec_init the server gives main an alternate stack of its own of
 *                   8 KiB (SIGSTKSZ, as language runtimes do), then faults (SIGSEGV: SIG_DFL)
 *   small_altstack_overflow  the same, then main's stack overflows (recurse_deep)
 *   altstack_disabled  after ptrec_init main disables its alternate stack (SS_DISABLE, as a
 *                   runtime does when it drops its own); read back it must be disabled (else
 *                   exit 95); then main's stack overflows (recurse_deep)
 *   altstack_threads  500 threads each give themselves an 8 KiB alternate stack of their own,
 *                   disable it and exit; the mappings of the process must not have grown by
 *                   more than 50 (else exit 95; libptrec's stack of each thread was left
 *                   mapped); then main faults (crash_write_wild)
 *   abort_ignored   SIGABRT ignored, then abort() (which resets it to SIG_DFL and kills)
 *   in_sigalrm      a SIGALRM handler whose sa_mask holds every signal faults; first the mask
 *                   must read back whole (else exit 95)
 *   sigalrm_before_init  the same, the SIGALRM handler installed before ptrec_init
 *   blocked_in_sigalrm  in_sigalrm, with main blocking SIGSEGV (pthread_sigmask) and a SIGSEGV
 *                   handler that exits 94: the fault in the SIGALRM handler must kill
 *   alarm_storm     a SIGALRM handler that works 3 ms on a 1 ms interval timer (it takes every
 *                   moment the thread has), then main faults (crash_write_wild)
 *   blocked_before_init  main blocks every signal before ptrec_init (a server that takes its
 *                   signals with sigwait), then faults; first its mask must read back with
 *                   SIGSEGV blocked (else exit 95)
 *   blocked_worker  a worker started with every signal blocked (as thread pools do) crashes;
 *                   first its mask must read back with SIGSEGV blocked (else exit 95)
 *   assert_path     handlers installed; an assertion resets them to SIG_DFL and abort()s
 *   transparency    no crash: what sigaction()/signal() read back for the crash signals is
 *                   what the kernel reads back for SIGUSR1 set the same way; prints
 *                   "chainer: transparent" and exits 0
 *
 * The first fault is a write to 0x1bad0 (SIGSEGV), a division by zero (SIGFPE), or a
 * write to 0x2bad0 (guard_page's real crash); handlers say what they do on stderr. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ptrec.h"

static volatile int sink;
static volatile uintptr_t addr_wild = 0x1bad0, addr_real = 0x2bad0;
static volatile uintptr_t addr_second = 0x40;

static void say(const char *s)
{
	if (write(2, s, strlen(s)) < 0)
		_exit(90);
}

__attribute__((noinline)) static void crash_write_wild(void)
{
	*(volatile int *)addr_wild = 1;
}

__attribute__((noinline)) static void crash_divide(void)
{
	volatile int zero = 0;
	sink = 42 / zero;
}

static const int server_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

/* sigaction(sig) with handler h (an sa_sigaction when flags has SA_SIGINFO, else an
 * sa_handler), the flags and an empty mask. */
static void install(int sig, void (*h)(int, siginfo_t *, void *), int flags)
{
	struct sigaction act;
	memset(&act, 0, sizeof(act));
	if (flags & SA_SIGINFO)
		act.sa_sigaction = h;
	else
		act.sa_handler = (void (*)(int))(void (*)(void))h;
	act.sa_flags = flags;
	sigemptyset(&act.sa_mask);
	sigaction(sig, &act, NULL);
}

static void set_all(void (*h)(int, siginfo_t *, void *), int flags)
{
	struct sigaction act;
	memset(&act, 0, sizeof(act));
	sigemptyset(&act.sa_mask);
	if (h) {
		act.sa_sigaction = h;
		act.sa_flags = SA_SIGINFO | flags;
	} else {
		act.sa_handler = SIG_DFL;
		act.sa_flags = flags;
	}
	for (unsigned i = 0; i < sizeof(server_signals) / sizeof(server_signals[0]); i++)
		sigaction(server_signals[i], &act, NULL);
}

/* ---- Redis: log, reset, re-raise; optionally a memory test first --------------------------- */

static int run_memtest, kill_threads;
static pthread_t worker;
static void *bio_worker(void *arg);
static void start_worker(void);

/* One anonymous writable mapping, as listed in /proc/self/maps. */
struct region { uintptr_t start, end; };

/* Reads every word, redzones included: not instrumented by AddressSanitizer. */
__attribute__((noinline, no_sanitize_address)) static size_t memtest_region(uintptr_t start, uintptr_t end)
{
	size_t words = 0;
	for (volatile uintptr_t *p = (uintptr_t *)start; (uintptr_t)p < end; p++) {
		uintptr_t keep = *p;
		*p = ~keep;
		if (*p != ~keep)
			say("chainer: memtest found a bad word\n");
		*p = 0x5555555555555555ull;
		*p = keep;
		words++;
	}
	return words;
}

/* Like Redis's memtest_test_linux_anonymous_maps: every rw mapping of device 00:00 that is not
 * the stack, the vDSO or vsyscall, tested word by word and restored.  Mappings of 1 GiB or
 * more are left out: they are a sanitizer's shadow reservations (terabytes, mostly never
 * touched), which a word-by-word pass would commit. */
__attribute__((noinline)) static size_t memtest_anonymous(void)
{
	static char maps[1 << 16];
	struct region regions[512];
	size_t nreg = 0, len = 0, words = 0;
	int fd = open("/proc/self/maps", O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return 0;
	while (len < sizeof(maps) - 1 && (n = read(fd, maps + len, sizeof(maps) - 1 - len)) > 0)
		len += (size_t)n;
	close(fd);
	maps[len] = '\0';
	for (char *line = maps; *line && nreg < 512;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		unsigned long s, e;
		char perms[8], dev[16];
		unsigned long off, inode;
		if (sscanf(line, "%lx-%lx %7s %lx %15s %lu", &s, &e, perms, &off, dev, &inode) == 6 &&
		    perms[0] == 'r' && perms[1] == 'w' && !strcmp(dev, "00:00") && !strstr(line, "stack") &&
		    !strstr(line, "vdso") && !strstr(line, "vsyscall") && e - s < (1ul << 30)) {
			regions[nreg].start = s;
			regions[nreg].end = e;
			nreg++;
		}
		if (!nl)
			break;
		line = nl + 1;
	}
	for (size_t i = 0; i < nreg; i++)
		words += memtest_region(regions[i].start, regions[i].end);
	return words;
}

__attribute__((noinline)) static void use_stack_mib(void)
{
	volatile char big[1 << 20];
	memset((char *)big, 0x5a, sizeof(big));
	sink = big[12345];
}

/* glibc's rseq area of the calling thread (thread pointer + __rseq_offset), or NULL when glibc
 * registered none (older glibc, GLIBC_TUNABLES=glibc.pthread.rseq=0, or the kernel refused:
 * then cpu_id is negative). */
extern const ptrdiff_t __rseq_offset __attribute__((weak));
extern const unsigned int __rseq_size __attribute__((weak));
static volatile uint64_t *rseq_cs_word(void)
{
	uintptr_t tp;
	if (!&__rseq_offset || !&__rseq_size || __rseq_size == 0)
		return NULL;
#if defined(__x86_64__)
	__asm__("movq %%fs:0, %0" : "=r"(tp));
#else
	__asm__("mrs %0, tpidr_el0" : "=r"(tp));
#endif
	char *area = (char *)tp + __rseq_offset;
	if (*(volatile int32_t *)(area + 4) < 0) /* cpu_id */
		return NULL;
	return (volatile uint64_t *)(area + 8);
}

/* Says whether the thread's rseq area was registered before handled faults and is after. */
static void say_rseq(int before)
{
	say(before ? "chainer: rseq on -> " : "chainer: rseq off -> ");
	say(rseq_cs_word() ? "on\n" : "off\n");
}

static volatile uint64_t *rseq_cs; /* rseq: the main thread's word, found before the crash */
static void usr1_noted(int sig) { (void)sig; }

/* A memory test's pattern in the rseq_cs word while a signal is delivered, then restored. */
__attribute__((noinline, no_sanitize_address)) static void scribble_rseq(void)
{
	volatile uint64_t *cs = rseq_cs;
	uint64_t keep = *cs;
	signal(SIGUSR1, usr1_noted);
	*cs = 0xaaaaaaaaaaaaaaaaull;
	raise(SIGUSR1);
	*cs = keep;
	say("chainer: rseq word restored\n");
}

static void redis_handler(int sig, siginfo_t *info, void *uc)
{
	char line[160];
	(void)uc;
	snprintf(line, sizeof(line), "chainer: === CRASH REPORT: signal %d at %p ===\n", sig,
	         info->si_addr);
	say(line);
	if (kill_threads) {
		pthread_cancel(worker);
		pthread_join(worker, NULL);
		say("chainer: threads killed\n");
	}
	if (rseq_cs)
		scribble_rseq();
	if (run_memtest) {
		use_stack_mib();
		size_t words = memtest_anonymous();
		snprintf(line, sizeof(line), "chainer: memtest passed over %zu words\n", words);
		say(line);
	}
	say("chainer: crash log complete\n");
	set_all(NULL, SA_NODEFER | SA_RESETHAND);
	kill(getpid(), sig);
}

__attribute__((noinline)) static void crash_redis(void)
{
	set_all(redis_handler, SA_NODEFER | SA_RESETHAND);
	crash_write_wild();
}

static void *bio_worker(void *arg)
{
	prctl(PR_SET_NAME, "bio_worker");
	*(volatile int *)arg = 1;
	for (;;)
		pause(); /* a cancellation point, like Redis's bio threads' condition wait */
	return NULL;
}

/* Starts `worker` and waits until it runs (attached to libptrec by then). */
static void start_worker(void)
{
	static volatile int started;
	started = 0;
	if (pthread_create(&worker, NULL, bio_worker, (void *)&started) != 0)
		exit(99);
	while (!started)
		usleep(100);
}

__attribute__((noinline)) static void crash_kill_threads(void)
{
	kill_threads = 1;
	start_worker();
	crash_redis();
}

/* ---- a handler that returns after SA_RESETHAND --------------------------------------------- */

static void note_handler(int sig)
{
	(void)sig;
	say("chainer: handler ran and returns\n");
}

__attribute__((noinline)) static void crash_resethand(void)
{
	install(SIGSEGV, (void (*)(int, siginfo_t *, void *))(void (*)(void))note_handler,
	        SA_RESETHAND);
	crash_write_wild();
}

/* ---- handlers that end the process themselves ------------------------------------------------ */

static void abort_handler(int sig, siginfo_t *info, void *uc)
{
	(void)sig, (void)info, (void)uc;
	say("chainer: fatal error, aborting\n");
	abort();
}

static void exit_handler(int sig, siginfo_t *info, void *uc)
{
	(void)sig, (void)info, (void)uc;
	say("chainer: fatal error, exit(3)\n");
	exit(3);
}

static void _exit_handler(int sig, siginfo_t *info, void *uc)
{
	(void)sig, (void)info, (void)uc;
	say("chainer: fatal error, _exit(5)\n");
	_exit(5);
}

static void fork_exec_handler(int sig, siginfo_t *info, void *uc)
{
	char line[80];
	int status = -1;
	(void)info, (void)uc;
	pid_t child = fork();
	if (child == 0) {
		execl("/bin/sh", "sh", "-c", "echo chainer: child of the handler ran >&2", (char *)NULL);
		_exit(127);
	}
	if (child > 0)
		while (waitpid(child, &status, 0) < 0 && errno == EINTR)
			;
	snprintf(line, sizeof(line), "chainer: the handler's child exited with %d\n",
	         WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	say(line);
	signal(sig, SIG_DFL);
}

__attribute__((noinline)) static void crash_with(void (*h)(int, siginfo_t *, void *))
{
	install(SIGSEGV, h, SA_SIGINFO);
	crash_write_wild();
}

/* The handler blocks every signal while it runs (HotSpot's, and many servers'). */
__attribute__((noinline)) static void crash_with_all_blocked(void (*h)(int, siginfo_t *, void *))
{
	struct sigaction act;
	memset(&act, 0, sizeof(act));
	act.sa_sigaction = h;
	act.sa_flags = SA_SIGINFO;
	sigfillset(&act.sa_mask);
	sigaction(SIGSEGV, &act, NULL);
	crash_write_wild();
}

/* ---- signal() ------------------------------------------------------------------------------- */

static void fpe_handler(int sig)
{
	say("chainer: arithmetic error, re-raising\n");
	signal(sig, SIG_DFL);
	raise(sig);
}

__attribute__((noinline)) static void crash_signal_fn(void)
{
	signal(SIGFPE, fpe_handler);
	crash_divide();
}

/* ---- installed by another thread ------------------------------------------------------------ */

static void *installer(void *arg)
{
	(void)arg;
	set_all(redis_handler, SA_NODEFER | SA_RESETHAND);
	return NULL;
}

__attribute__((noinline)) static void crash_from_thread(void)
{
	pthread_t t;
	pthread_create(&t, NULL, installer, NULL);
	pthread_join(t, NULL);
	crash_write_wild();
}

/* ---- a guard-page handler (JIT runtimes): map the page and resume ------------------------- */

static char *guard;
static long page_size;
static volatile int guard_faults;

static void guard_handler(int sig, siginfo_t *info, void *uc)
{
	char *a = info->si_addr;
	(void)uc;
	if (a >= guard && a < guard + page_size) {
		guard_faults++;
		if (kill_threads) {
			pthread_cancel(worker);
			pthread_join(worker, NULL);
		}
		mprotect(guard, (size_t)page_size, PROT_READ | PROT_WRITE);
		return; /* the access is retried and succeeds */
	}
	/* Not ours: let the default action have it. */
	struct sigaction dfl;
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigaction(sig, &dfl, NULL);
}

__attribute__((noinline)) static void touch_guard(int i)
{
	guard[i % 64] = (char)i;
}

#define GUARD_THREADS 8
#define GUARD_ROUNDS 2000
static char *guard_pages[GUARD_THREADS];
static _Atomic int guard_thread_faults;

static void guard_threads_handler(int sig, siginfo_t *info, void *uc)
{
	char *a = info->si_addr;
	(void)uc;
	for (int k = 0; k < GUARD_THREADS; k++)
		if (a >= guard_pages[k] && a < guard_pages[k] + page_size) {
			guard_thread_faults++;
			mprotect(guard_pages[k], (size_t)page_size, PROT_READ | PROT_WRITE);
			return;
		}
	struct sigaction dfl;
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigaction(sig, &dfl, NULL);
}

static void *guard_thread(void *p)
{
	char *g = p;
	for (int i = 0; i < GUARD_ROUNDS; i++) {
		((volatile char *)g)[i % 64] = (char)i;
		mprotect(g, (size_t)page_size, PROT_NONE);
	}
	return NULL;
}

__attribute__((noinline)) static void crash_after_guards(void);

__attribute__((noinline)) static void crash_guard_threads(void)
{
	pthread_t t[GUARD_THREADS];
	char line[80];

	page_size = sysconf(_SC_PAGESIZE);
	for (int k = 0; k < GUARD_THREADS; k++) {
		guard_pages[k] = mmap(NULL, (size_t)page_size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		                      -1, 0);
		if (guard_pages[k] == MAP_FAILED)
			exit(99);
	}
	install(SIGSEGV, guard_threads_handler, SA_SIGINFO);
	for (int k = 0; k < GUARD_THREADS; k++)
		if (pthread_create(&t[k], NULL, guard_thread, guard_pages[k]) != 0)
			exit(99);
	for (int k = 0; k < GUARD_THREADS; k++)
		pthread_join(t[k], NULL);
	snprintf(line, sizeof(line), "chainer: %d guard faults handled in %d threads\n",
	         (int)guard_thread_faults, GUARD_THREADS);
	say(line);
	crash_after_guards();
}

__attribute__((noinline)) static void crash_after_guards(void)
{
	*(volatile int *)addr_real = 6;
}

/* Maps the guard page (no access yet) and installs guard_handler for SIGSEGV. */
static void guard_setup(void)
{
	page_size = sysconf(_SC_PAGESIZE);
	guard = mmap(NULL, (size_t)page_size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (guard == MAP_FAILED)
		exit(99);
	install(SIGSEGV, guard_handler, SA_SIGINFO);
}

__attribute__((noinline)) static void crash_guard_page(void)
{
	char line[80];

	guard_setup();
	int rseq_before = rseq_cs_word() != NULL;
	for (int i = 0; i < 1000; i++) {
		mprotect(guard, (size_t)page_size, PROT_NONE);
		touch_guard(i);
	}
	snprintf(line, sizeof(line), "chainer: %d guard faults handled\n", guard_faults);
	say(line);
	say_rseq(rseq_before);
	crash_after_guards();
}

/* Handled faults whose handler joins a thread: every joined thread's slot is reused. */
__attribute__((noinline)) static void crash_guard_join(void)
{
	struct ptrec_status st = {.struct_size = sizeof(st)};
	char line[120];

	guard_setup();
	kill_threads = 1;
	for (int i = 0; i < 1100; i++) {
		start_worker();
		mprotect(guard, (size_t)page_size, PROT_NONE);
		touch_guard(i);
	}
	kill_threads = 0;
	ptrec_status(&st);
	snprintf(line, sizeof(line), "chainer: %d guard faults joined a thread: %u attached, %u untraced\n",
	         guard_faults, st.threads_attached, st.threads_untraced);
	say(line);
	crash_after_guards();
}

/* ---- a language runtime's own threads (Go's cgo threads) -------------------------------- */

/* Each thread of the runtime takes the alternate stack it finds as its signal stack (one of
 * its own when there is none), and its handler checks that it runs there, as Go's does. */
static __thread char *runtime_stack_lo, *runtime_stack_hi;
static volatile int runtime_off_stack;

static void runtime_handler(int sig, siginfo_t *info, void *uc)
{
	char here;
	if (&here < runtime_stack_lo || &here >= runtime_stack_hi)
		runtime_off_stack++;
	guard_handler(sig, info, uc);
}

/* The thread sets its own mask and reads its alternate stack with the raw system calls (as Go's
 * runtime does), then takes 1000 guard faults. */
static void *runtime_thread(void *p)
{
	static char own[65536];
	sigset_t none;
	stack_t st;

	(void)p;
	sigemptyset(&none);
	if (syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, NULL, (long)(_NSIG / 8)) != 0)
		exit(99);
	if (syscall(SYS_sigaltstack, NULL, &st) != 0 || (st.ss_flags & SS_DISABLE)) {
		st.ss_sp = own;
		st.ss_size = sizeof(own);
		st.ss_flags = 0;
		if (syscall(SYS_sigaltstack, &st, NULL) != 0)
			exit(99);
	}
	runtime_stack_lo = st.ss_sp;
	runtime_stack_hi = (char *)st.ss_sp + st.ss_size;
	for (int i = 0; i < 1000; i++) {
		mprotect(guard, (size_t)page_size, PROT_NONE);
		touch_guard(i);
	}
	return NULL;
}

/* A runtime's thread, created as cgo creates them: every signal blocked with pthread_sigmask
 * around pthread_create. */
__attribute__((noinline)) static void crash_runtime_thread(void)
{
	sigset_t all, old;
	pthread_t t;
	char line[100];

	guard_setup();
	install(SIGSEGV, runtime_handler, SA_SIGINFO | SA_ONSTACK);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (pthread_create(&t, NULL, runtime_thread, NULL) != 0)
		exit(99);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_join(t, NULL);
	snprintf(line, sizeof(line), "chainer: %d guard faults handled on the runtime's thread, %d off its signal stack\n",
	         guard_faults, runtime_off_stack);
	say(line);
	crash_after_guards();
}

/* ---- the handler itself faults ----------------------------------------------------------- */

static void faulty_handler(int sig, siginfo_t *info, void *uc)
{
	(void)sig, (void)info, (void)uc;
	say("chainer: handler entered\n");
	*(volatile int *)addr_second = 7;
	say("chainer: handler survived its own fault\n");
}

/* ---- a recovering server: the handler leaves with siglongjmp ------------------------------ */

static sigjmp_buf recover_env;

static void recover_handler(int sig)
{
	(void)sig;
	siglongjmp(recover_env, 1);
}

__attribute__((noinline)) static void fault_once(void)
{
	*(volatile int *)addr_wild = 2;
}

__attribute__((noinline)) static void crash_longjmp(void)
{
	char line[80];
	int recovered = 0;

	install(SIGSEGV, (void (*)(int, siginfo_t *, void *))(void (*)(void))recover_handler, 0);
	int rseq_before = rseq_cs_word() != NULL;
	for (int i = 0; i < 1000; i++)
		if (sigsetjmp(recover_env, 1) == 0)
			fault_once();
		else
			recovered++;
	snprintf(line, sizeof(line), "chainer: recovered %d times\n", recovered);
	say(line);
	say_rseq(rseq_before);
	signal(SIGSEGV, SIG_DFL);
	crash_after_guards();
}

/* ---- a server that ends the faulting thread: pthread_exit in the handler ----------------- */

static __thread int in_toucher;

static void thread_exit_handler(int sig, siginfo_t *info, void *uc)
{
	char *a = info->si_addr;
	if (in_toucher && a >= guard && a < guard + page_size) {
		guard_faults++;
		pthread_exit(NULL);
	}
	guard_handler(sig, info, uc); /* not ours: SIG_DFL */
}

static void *guard_toucher(void *arg)
{
	(void)arg;
	in_toucher = 1;
	touch_guard(1);
	return NULL;
}

__attribute__((noinline)) static void crash_thread_exit(void)
{
	struct ptrec_status st = {.struct_size = sizeof(st)};
	char line[120];
	pthread_t t;

	guard_setup();
	install(SIGSEGV, thread_exit_handler, SA_SIGINFO);
	for (int i = 0; i < 1100; i++) {
		if (pthread_create(&t, NULL, guard_toucher, NULL) != 0)
			exit(99);
		pthread_join(t, NULL);
	}
	ptrec_status(&st);
	snprintf(line, sizeof(line), "chainer: %d faulting threads ended: %u attached, %u untraced\n",
	         guard_faults, st.threads_attached, st.threads_untraced);
	say(line);
	crash_after_guards();
}

/* ---- a thread ends inside its crash handler with SIGSEGVs held back ----------------------- */

static pid_t main_tid;
static volatile int proc_signal_on_main;
static volatile int go;

/* SIGSEGV (flags SA_SIGINFO: blocked while it runs).  A worker's guard fault sends SIGSEGV to
 * the thread and to the process, both held back while the handler runs, and ends the thread.
 * The kernel drops a dying thread's own pending signals and gives the process's to another
 * thread: here main, once it unblocks SIGSEGV. */
static void exit_pending_handler(int sig, siginfo_t *info, void *uc)
{
	char *a = info->si_addr;

	if (info->si_code == SI_TKILL) {
		say("chainer: a SIGSEGV sent to a thread outlived the thread\n");
		_exit(94);
	}
	if (info->si_code == SI_USER) {
		if ((pid_t)syscall(SYS_gettid) != main_tid) {
			say("chainer: the SIGSEGV sent to the process ran on the ending thread\n");
			_exit(94);
		}
		proc_signal_on_main = 1;
		return;
	}
	if (in_toucher && a >= guard && a < guard + page_size) {
		pthread_kill(pthread_self(), SIGSEGV);
		kill(getpid(), SIGSEGV); /* main blocks it in the kernel: it comes to this thread */
		pthread_exit(NULL);
	}
	guard_handler(sig, info, uc); /* not ours: SIG_DFL */
}

static void *pending_toucher(void *arg)
{
	(void)arg;
	while (!go)
		usleep(100);
	in_toucher = 1;
	touch_guard(2);
	return NULL;
}

/* Blocks or unblocks sig in the calling thread's kernel mask, past libptrec (a thread whose
 * kernel mask blocks it, like one started before ptrec_init). */
static void kernel_block(int sig, int how)
{
	uint64_t set = 1ull << (sig - 1);
	syscall(SYS_rt_sigprocmask, how, &set, NULL, 8);
}

__attribute__((noinline)) static void crash_exit_pending(void)
{
	pthread_t t;

	main_tid = (pid_t)syscall(SYS_gettid);
	guard_setup();
	install(SIGSEGV, exit_pending_handler, SA_SIGINFO);
	if (pthread_create(&t, NULL, pending_toucher, NULL) != 0)
		exit(99);
	kernel_block(SIGSEGV, SIG_BLOCK);
	go = 1;
	pthread_join(t, NULL);
	kernel_block(SIGSEGV, SIG_UNBLOCK);
	if (!proc_signal_on_main) {
		say("chainer: the SIGSEGV sent to the process was lost with the thread\n");
		exit(93);
	}
	say("chainer: the SIGSEGV sent to the process reached main\n");
	signal(SIGSEGV, SIG_DFL);
	crash_after_guards();
}

/* ---- a crash signal held back while the application's handler runs keeps its siginfo ------ */

static volatile int queued_runs;

static void queued_handler(int sig, siginfo_t *info, void *uc)
{
	(void)sig;
	(void)uc;
	if (queued_runs++ == 0) {
		union sigval v = {.sival_int = 4242};
		sigqueue(getpid(), SIGTRAP, v); /* SIGTRAP is blocked while this runs: held back */
		return;
	}
	if (info->si_code != SI_QUEUE || info->si_pid != getpid() || info->si_uid != getuid() ||
	    info->si_value.sival_int != 4242) {
		say("chainer: the held-back SIGTRAP came back without its siginfo\n");
		_exit(92);
	}
	say("chainer: the held-back SIGTRAP came back as it was sent\n");
}

__attribute__((noinline)) static void crash_queued_again(void)
{
	install(SIGTRAP, queued_handler, SA_SIGINFO);
	kill(getpid(), SIGTRAP);
	if (queued_runs != 2) {
		say("chainer: the held-back SIGTRAP did not come back\n");
		exit(91);
	}
	crash_after_guards();
}

/* ---- a crash signal sent to the process while libptrec's snapshot writer thread runs ------ */

static volatile int bus_on_main;

static void bus_handler(int sig, siginfo_t *info, void *uc)
{
	(void)sig, (void)uc;
	if ((pid_t)syscall(SYS_gettid) != main_tid) {
		say("chainer: the application's SIGBUS handler ran on libptrec's thread\n");
		_exit(94);
	}
	if (info->si_code == SI_USER)
		bus_on_main = 1;
}

__attribute__((noinline)) static void crash_own_thread(void)
{
	char path[4096];

	main_tid = (pid_t)syscall(SYS_gettid);
	install(SIGBUS, bus_handler, SA_SIGINFO);
	/* A snapshot starts libptrec's writer thread; its files are not this test's dump. */
	if (ptrec_snapshot_path("start the writer", path, sizeof(path)) != 0 ||
	    ptrec_snapshot_flush(20000) != 0 || strlen(path) < 5)
		exit(99);
	unlink(path);
	path[strlen(path) - 4] = '\0';
	unlink(path);
	kernel_block(SIGBUS, SIG_BLOCK); /* the kernel gives the signal to another thread */
	kill(getpid(), SIGBUS);
	usleep(200000);
	kernel_block(SIGBUS, SIG_UNBLOCK);
	for (int i = 0; i < 1000 && !bus_on_main; i++)
		usleep(10000); /* the writer may pass it on only now (a loaded machine) */
	if (!bus_on_main) {
		say("chainer: the SIGBUS sent to the process was lost\n");
		exit(93);
	}
	say("chainer: the SIGBUS sent to the process reached main\n");
	crash_write_wild();
}

/* ---- abort() with SIGABRT ignored -------------------------------------------------------- */

__attribute__((noinline)) static void crash_abort_ignored(void)
{
	signal(SIGABRT, SIG_IGN);
	abort();
}

/* ---- a timer handler that takes longer than its period ------------------------------------ */

static void storm_handler(int sig)
{
	struct timespec t0, t;

	(void)sig;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 3000000L);
}

__attribute__((noinline)) static void crash_alarm_storm(void)
{
	struct sigaction act;
	struct itimerval it = {{0, 1000}, {0, 1000}};

	memset(&act, 0, sizeof(act));
	act.sa_handler = storm_handler;
	sigemptyset(&act.sa_mask);
	if (sigaction(SIGALRM, &act, NULL) != 0 || setitimer(ITIMER_REAL, &it, NULL) != 0)
		exit(95);
	crash_write_wild();
}

/* ---- a fault inside another signal's handler that blocks everything ----------------------- */

__attribute__((noinline)) static void crash_in_alarm(void)
{
	*(volatile int *)addr_wild = 4;
}

static void alarm_handler(int sig)
{
	(void)sig;
	crash_in_alarm();
}

/* Installs alarm_handler for SIGALRM with every signal in its mask. */
static void install_alarm(void)
{
	struct sigaction act;

	memset(&act, 0, sizeof(act));
	act.sa_handler = alarm_handler;
	sigfillset(&act.sa_mask);
	sigaction(SIGALRM, &act, NULL);
}

/* SIGALRM's mask must read back whole (else exit 95), then the alarm rings. */
__attribute__((noinline)) static void crash_in_sigalrm(void)
{
	struct sigaction back;

	sigaction(SIGALRM, NULL, &back);
	if (sigismember(&back.sa_mask, SIGSEGV) != 1 || sigismember(&back.sa_mask, SIGTERM) != 1)
		exit(95);
	raise(SIGALRM);
}

static void segv_ran(int sig)
{
	(void)sig;
	say("chainer: the SIGSEGV handler ran\n");
	_exit(94);
}

/* main blocks SIGSEGV (pthread_sigmask) and has a SIGSEGV handler; the SIGALRM handler faults:
 * the block holds there, as in the kernel (a dying crash), the handler must not run. */
__attribute__((noinline)) static void crash_blocked_in_sigalrm(void)
{
	sigset_t segv;
	struct sigaction act;

	memset(&act, 0, sizeof(act));
	act.sa_handler = segv_ran;
	sigaction(SIGSEGV, &act, NULL);
	sigemptyset(&segv);
	sigaddset(&segv, SIGSEGV);
	pthread_sigmask(SIG_BLOCK, &segv, NULL);
	install_alarm();
	crash_in_sigalrm();
}

/* ---- a worker started with every signal blocked ------------------------------------------ */

__attribute__((noinline)) static void crash_in_blocked_worker(void)
{
	*(volatile int *)addr_wild = 3;
}

static void *blocked_worker(void *arg)
{
	sigset_t now;
	(void)arg;
	pthread_sigmask(SIG_BLOCK, NULL, &now);
	if (sigismember(&now, SIGSEGV) != 1 || sigismember(&now, SIGTERM) != 1)
		_exit(95);
	crash_in_blocked_worker();
	return NULL;
}

__attribute__((noinline)) static void crash_blocked_worker(void)
{
	sigset_t all, old;
	pthread_t t;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (pthread_create(&t, NULL, blocked_worker, NULL) != 0)
		exit(99);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_join(t, NULL);
}

/* ---- main blocks every signal before ptrec_init (servers that take signals with sigwait) --- */

__attribute__((noinline)) static void crash_in_blocked_main(void)
{
	*(volatile int *)addr_wild = 5;
}

static void block_all(void)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, NULL);
}

/* The mask must read back with SIGSEGV blocked (else exit 95), then main faults. */
__attribute__((noinline)) static void crash_blocked_main(void)
{
	sigset_t now;

	pthread_sigmask(SIG_BLOCK, NULL, &now);
	if (sigismember(&now, SIGSEGV) != 1 || sigismember(&now, SIGTERM) != 1)
		exit(95);
	crash_in_blocked_main();
}

/* ---- the server changes its own alternate signal stack after ptrec_init ------------------ */

static volatile int keep_recursing = 1;

__attribute__((noinline)) static int recurse_deep(int depth)
{
	volatile char pad[256];
	pad[depth & 255] = (char)depth;
	return keep_recursing ? recurse_deep(depth + 1) + pad[0] : pad[0];
}

/* Replaces the thread's alternate stack by one of `size` bytes. */
static void own_altstack(size_t size)
{
	stack_t ss = {.ss_sp = malloc(size), .ss_size = size, .ss_flags = 0};

	if (!ss.ss_sp || sigaltstack(&ss, NULL) != 0)
		exit(99);
}

static void altstack_disable(void)
{
	stack_t ss = {.ss_flags = SS_DISABLE}, now;
	if (sigaltstack(&ss, NULL) != 0 || sigaltstack(NULL, &now) != 0)
		exit(99);
	if (!(now.ss_flags & SS_DISABLE) || now.ss_sp || now.ss_size) {
		fprintf(stderr, "chainer: the alternate stack reads back enabled after SS_DISABLE\n");
		exit(95);
	}
}

static void *own_altstack_thread(void *arg)
{
	static __thread char stack[8192];
	stack_t ss = {.ss_sp = stack, .ss_size = sizeof(stack), .ss_flags = 0};
	(void)arg;
	if (sigaltstack(&ss, NULL) != 0)
		exit(99);
	ss.ss_flags = SS_DISABLE; /* before its memory goes (AddressSanitizer unmaps what is left) */
	if (sigaltstack(&ss, NULL) != 0)
		exit(99);
	return NULL;
}

static long count_mappings(void)
{
	char buf[4096];
	long n = 0;
	ssize_t r;
	int fd = open("/proc/self/maps", O_RDONLY);
	if (fd < 0)
		exit(99);
	while ((r = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t k = 0; k < r; k++)
			n += buf[k] == '\n';
	close(fd);
	return n;
}

__attribute__((noinline)) static void altstack_threads(void)
{
	long before = count_mappings();
	for (int k = 0; k < 500; k++) {
		pthread_t t;
		if (pthread_create(&t, NULL, own_altstack_thread, NULL) != 0 || pthread_join(t, NULL) != 0)
			exit(99);
	}
	long after = count_mappings();
	if (after > before + 50) {
		fprintf(stderr, "chainer: %ld mappings before 500 threads, %ld after\n", before, after);
		exit(95);
	}
}

/* ---- an assertion path that resets to SIG_DFL and aborts ------------------------------------ */

__attribute__((noinline)) static void server_assert_fail(const char *expr)
{
	char line[160];
	snprintf(line, sizeof(line), "chainer: ASSERTION FAILED: %s\n", expr);
	say(line);
	set_all(NULL, 0);
	abort();
}

__attribute__((noinline)) static void crash_assert_path(void)
{
	set_all(redis_handler, SA_NODEFER | SA_RESETHAND);
	if (sink != 4242)
		server_assert_fail("sink == 4242");
}

/* ---- transparency ----------------------------------------------------------------------------- */

static int failures;

static void check(int ok, const char *what)
{
	if (!ok) {
		say("chainer: not transparent: ");
		say(what);
		say("\n");
		failures++;
	}
}

/* The kernel's own view of sig's action (no libc, no interposer). */
struct kernel_action { void *handler; unsigned long flags; void *restorer; uint64_t mask; };

static void kernel_get(int sig, struct kernel_action *k)
{
	memset(k, 0, sizeof(*k));
	syscall(SYS_rt_sigaction, sig, NULL, k, 8);
}

/* a and b read back for signals sa and sb: equal up to the signals' own numbers. */
static int same_action(const struct sigaction *a, int sa, const struct sigaction *b, int sb)
{
	if (a->sa_handler != b->sa_handler || a->sa_flags != b->sa_flags ||
	    a->sa_restorer != b->sa_restorer)
		return 0;
	for (int s = 1; s < 65; s++) {
		int x = s == sa ? sb : s == sb ? sa : s;
		if (sigismember(&a->sa_mask, s) != sigismember(&b->sa_mask, x))
			return 0;
	}
	return 1;
}

static void any_handler(int sig, siginfo_t *info, void *uc) { (void)sig, (void)info, (void)uc; }
static void plain_handler(int sig) { (void)sig; }

static void compare(const struct sigaction *set, int sig, const char *what)
{
	struct sigaction ours, kernel, before;
	sigaction(sig, NULL, &before);
	sigaction(SIGUSR1, set, NULL);
	sigaction(SIGUSR1, NULL, &kernel);
	check(sigaction(sig, set, &ours) == 0, what);
	check(same_action(&before, sig, &ours, sig), what); /* old == what the last call set */
	sigaction(sig, NULL, &ours);
	check(same_action(&kernel, SIGUSR1, &ours, sig), what);
}

__attribute__((noinline)) static int transparency(void)
{
	static const int crash[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS};
	struct sigaction a;
	struct kernel_action k;

	for (unsigned i = 0; i < sizeof(crash) / sizeof(crash[0]); i++) {
		int sig = crash[i];
		memset(&a, 0, sizeof(a));
		a.sa_sigaction = any_handler;
		a.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER | SA_RESTART;
		sigemptyset(&a.sa_mask);
		sigaddset(&a.sa_mask, SIGTERM);
		sigaddset(&a.sa_mask, SIGKILL); /* the kernel drops it */
		compare(&a, sig, "SA_SIGINFO handler");
		memset(&a, 0, sizeof(a));
		a.sa_handler = plain_handler;
		a.sa_flags = SA_RESETHAND;
		sigfillset(&a.sa_mask);
		compare(&a, sig, "SA_RESETHAND handler, full mask");
		memset(&a, 0, sizeof(a));
		a.sa_handler = SIG_IGN;
		compare(&a, sig, "SIG_IGN");
		memset(&a, 0, sizeof(a));
		a.sa_handler = SIG_DFL;
		compare(&a, sig, "SIG_DFL");

		/* signal(): the previous handler back, and the same action SIGUSR1 gets. */
		struct sigaction ours, kernel;
		signal(SIGUSR1, plain_handler);
		sigaction(SIGUSR1, NULL, &kernel);
		check(signal(sig, plain_handler) == SIG_DFL, "signal() returns the previous handler");
		check(signal(sig, SIG_DFL) == plain_handler, "signal() returns the previous handler");
		signal(sig, plain_handler);
		sigaction(sig, NULL, &ours);
		check(same_action(&kernel, SIGUSR1, &ours, sig), "signal()");

		/* The kernel still runs libptrec's handler. */
		kernel_get(sig, &k);
		check(k.handler != (void *)plain_handler && k.handler != SIG_DFL,
		      "the kernel's handler is libptrec's");
		signal(sig, SIG_DFL);
	}
	/* After ptrec_shutdown the kernel holds the application's action, and the whole mask of
	 * other signals' handlers (libptrec kept the fault signals out of it). */
	signal(SIGSEGV, plain_handler);
	memset(&a, 0, sizeof(a));
	a.sa_handler = plain_handler;
	sigfillset(&a.sa_mask);
	sigaction(SIGUSR2, &a, NULL);
	kernel_get(SIGUSR2, &k);
	check(!(k.mask & (1ull << (SIGSEGV - 1))), "SIGSEGV is kept out of a handler's kernel mask");
	ptrec_shutdown();
	kernel_get(SIGSEGV, &k);
	check(k.handler == (void *)plain_handler, "ptrec_shutdown gives the kernel the app's action");
	kernel_get(SIGUSR2, &k);
	check((k.mask & (1ull << (SIGSEGV - 1))) && (k.mask & (1ull << (SIGTERM - 1))),
	      "ptrec_shutdown gives the kernel a handler's whole mask");
	if (failures)
		return 1;
	say("chainer: transparent\n");
	return 0;
}

/* ---- main ---------------------------------------------------------------------------------- */

__attribute__((noinline)) static void handle_request(const char *c)
{
	if (!strcmp(c, "redis")) crash_redis();
	else if (!strcmp(c, "memtest")) { run_memtest = 1; crash_redis(); }
	else if (!strcmp(c, "rseq")) {
		rseq_cs = rseq_cs_word();
		if (!rseq_cs) {
			say("chainer: glibc registered no rseq area for this thread\n");
			exit(77);
		}
		crash_redis();
	}
	else if (!strcmp(c, "kill_threads")) crash_kill_threads();
	else if (!strcmp(c, "resethand")) crash_resethand();
	else if (!strcmp(c, "abort")) crash_with(abort_handler);
	else if (!strcmp(c, "abort_all_blocked")) crash_with_all_blocked(abort_handler);
	else if (!strcmp(c, "exit")) crash_with(exit_handler);
	else if (!strcmp(c, "_exit")) crash_with(_exit_handler);
	else if (!strcmp(c, "fork_exec")) crash_with(fork_exec_handler);
	else if (!strcmp(c, "signal")) crash_signal_fn();
	else if (!strcmp(c, "thread")) crash_from_thread();
	else if (!strcmp(c, "before_init")) crash_write_wild();
	else if (!strcmp(c, "guard_page")) crash_guard_page();
	else if (!strcmp(c, "guard_threads")) crash_guard_threads();
	else if (!strcmp(c, "guard_join")) crash_guard_join();
	else if (!strcmp(c, "runtime_thread")) crash_runtime_thread();
	else if (!strcmp(c, "in_handler")) crash_with(faulty_handler);
	else if (!strcmp(c, "assert_path")) crash_assert_path();
	else if (!strcmp(c, "longjmp")) crash_longjmp();
	else if (!strcmp(c, "thread_exit")) crash_thread_exit();
	else if (!strcmp(c, "exit_pending")) crash_exit_pending();
	else if (!strcmp(c, "queued_again")) crash_queued_again();
	else if (!strcmp(c, "own_thread")) crash_own_thread();
	else if (!strcmp(c, "blocked_worker")) crash_blocked_worker();
	else if (!strcmp(c, "abort_ignored")) crash_abort_ignored();
	else if (!strcmp(c, "in_sigalrm")) { install_alarm(); crash_in_sigalrm(); }
	else if (!strcmp(c, "alarm_storm")) crash_alarm_storm();
	else if (!strcmp(c, "blocked_in_sigalrm")) crash_blocked_in_sigalrm();
	else if (!strcmp(c, "sigalrm_before_init")) crash_in_sigalrm();
	else if (!strcmp(c, "blocked_before_init")) crash_blocked_main();
	else if (!strcmp(c, "small_altstack")) { own_altstack(8192); crash_write_wild(); }
	else if (!strcmp(c, "small_altstack_overflow")) { own_altstack(8192); sink = recurse_deep(0); }
	else if (!strcmp(c, "altstack_disabled")) { altstack_disable(); sink = recurse_deep(0); }
	else if (!strcmp(c, "altstack_threads")) { altstack_threads(); crash_write_wild(); }
	else if (!strcmp(c, "transparency")) exit(transparency());
	else {
		fprintf(stderr, "chainer: unknown case %s\n", c);
		exit(98);
	}
}

int main(int argc, char **argv)
{
	struct sigaction before, after;

	if (argc != 2) {
		fprintf(stderr, "usage: chainer CASE\n");
		return 98;
	}
	if (!strcmp(argv[1], "before_init"))
		set_all(redis_handler, SA_NODEFER | SA_RESETHAND);
	if (!strcmp(argv[1], "sigalrm_before_init"))
		install_alarm();
	if (!strcmp(argv[1], "blocked_before_init"))
		block_all();
	sigaction(SIGSEGV, NULL, &before);
	int r = ptrec_init(NULL);
	if (r != 0) {
		fprintf(stderr, "chainer: ptrec_init: %s\n", ptrec_strerror(r));
		return 97;
	}
	/* Reading an action back after ptrec_init gives what was there before it. */
	sigaction(SIGSEGV, NULL, &after);
	if (!same_action(&before, SIGSEGV, &after, SIGSEGV)) {
		fprintf(stderr, "chainer: SIGSEGV's action changed across ptrec_init\n");
		return 95;
	}
	handle_request(argv[1]);
	fprintf(stderr, "chainer: %s did not crash\n", argv[1]);
	return 96;
}
