/* iso_crasher.c — an unmodified program for `ptrec run`, built as strict ISO C (-std=c11, no
 * _GNU_SOURCE or _DEFAULT_SOURCE): there <signal.h> makes signal() glibc's __sysv_signal, as in
 * zstd (-std=c99), whose SIGSEGV handler prints a backtrace and raises the signal again.  The
 * other ways glibc offers to set a disposition or a mask are declared here by hand (strict ISO C
 * declares none of them).  Each CASE sets up, prints what it reads back, then faults (or, for
 * siginterrupt, exits 0):
 *
 *   iso_crasher signal        signal(SIGSEGV, h); h prints "handler ran", sets SIG_DFL, raises
 *   iso_crasher ssignal       the same through ssignal()
 *   iso_crasher sighold       sighold(SIGSEGV): prints "held" when the mask read back holds it
 *   iso_crasher sigignore     sigignore(SIGSEGV): prints "ignored" when the action read back is
 *                             SIG_IGN
 *   iso_crasher siginterrupt  ssignal(SIGSEGV, h), then siginterrupt(SIGSEGV, 1) and (.., 0):
 *                             prints "restart off" and "restart on" as the flags read back say */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* glibc's, not declared under strict ISO C */
typedef void (*handler_fn)(int);
extern handler_fn ssignal(int sig, handler_fn h);
extern int sighold(int sig);
extern int sigignore(int sig);
extern int siginterrupt(int sig, int flag);
struct sigaction;
extern int sigaction(int sig, const struct sigaction *act, struct sigaction *old);
extern int sigprocmask(int how, const void *set, void *old);
extern int sigismember(const void *set, int sig);
extern int write(int fd, const void *buf, unsigned long n);

/* the kernel's struct sigaction as glibc's <signal.h> lays it out on x86-64 (not visible
 * under strict ISO C): handler, mask (1024 bits), flags, restorer */
struct sigaction {
	void (*handler)(int);
	uint64_t mask[16];
	int flags;
	void (*restorer)(void);
};
#define RESTART 0x10000000 /* SA_RESTART */
#define BLOCK 0          /* SIG_BLOCK */

static volatile uintptr_t addr_null = 0;

static void h(int sig)
{
	static const char msg[] = "iso_crasher: handler ran\n";
	write(2, msg, sizeof(msg) - 1);
	signal(sig, SIG_DFL);
	raise(sig);
}

__attribute__((noinline)) static void fault(void)
{
	*(volatile char *)(addr_null + 16) = 1;
}

static int restart(void)
{
	struct sigaction a;
	memset(&a, 0, sizeof(a));
	sigaction(SIGSEGV, NULL, &a);
	return !!(a.flags & RESTART);
}

int main(int argc, char **argv)
{
	const char *c = argc >= 2 ? argv[1] : "";
	uint64_t set[16];
	struct sigaction a;

	if (!strcmp(c, "signal")) {
		signal(SIGSEGV, h);
	} else if (!strcmp(c, "ssignal")) {
		ssignal(SIGSEGV, h);
	} else if (!strcmp(c, "sighold")) {
		sighold(SIGSEGV);
		memset(set, 0, sizeof(set));
		sigprocmask(BLOCK, NULL, set);
		if (sigismember(set, SIGSEGV) == 1)
			printf("held\n");
	} else if (!strcmp(c, "sigignore")) {
		sigignore(SIGSEGV);
		memset(&a, 0, sizeof(a));
		sigaction(SIGSEGV, NULL, &a);
		if (a.handler == SIG_IGN)
			printf("ignored\n");
	} else if (!strcmp(c, "siginterrupt")) {
		ssignal(SIGSEGV, h);
		siginterrupt(SIGSEGV, 1);
		printf("restart %s\n", restart() ? "on" : "off");
		siginterrupt(SIGSEGV, 0);
		printf("restart %s\n", restart() ? "on" : "off");
		return 0;
	} else {
		fprintf(stderr, "usage: iso_crasher signal|ssignal|sighold|sigignore|siginterrupt\n");
		return 2;
	}
	fflush(stdout);
	fault();
	return 0;
}
