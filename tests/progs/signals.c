/* signals.c — ptgen test program: a signal handler entered from raise() (the kernel switches
 * to the handler on the way back from a syscall), a SIGSEGV fault in user code whose handler
 * leaves with siglongjmp, and a SIGFPE from an integer division by zero. */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

static volatile sig_atomic_t usr1_count;
static sigjmp_buf recover;

static void on_usr1(int sig)
{
	(void)sig;
	usr1_count++;
}

static void on_fault(int sig)
{
	siglongjmp(recover, sig);
}

__attribute__((noinline)) static int load(volatile int *p)
{
	return *p;
}

static volatile int dividend = 7, divisor, quotient;

__attribute__((noinline)) static void divide(void)
{
	quotient = dividend / divisor;
}

int main(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_fault;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGFPE, &sa, NULL);

	raise(SIGUSR1);
	raise(SIGUSR1);

	volatile int faults = 0;
	int s = sigsetjmp(recover, 1);
	if (s == 0)
		load((volatile int *)16);
	else if (s == SIGSEGV)
		faults++;
	s = sigsetjmp(recover, 1);
	if (s == 0)
		divide();
	else if (s == SIGFPE)
		faults++;
	printf("usr1=%d faults=%d\n", (int)usr1_count, faults);
	return usr1_count == 2 && faults == 2 ? 0 : 1;
}
