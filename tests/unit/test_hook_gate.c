/* test_hook_gate.c — the hook gate (capture/hook_gate.h) under threads that stop and resume the
 * hooks at the same time, as concurrent crash signals do (one thread's episode ends while
 * another thread, faulting too, stops the hooks): every stop must leave the gate closed and
 * read-only, and no call may write the gate while another has made it read-only (which
 * faulted in ptrec_hooks_stop: the SIGSEGV of a Go program under `ptrec run`), not even when the
 * thread changing the gate is held up for long (a signal handler runs on it: a crash being
 * dumped, or a loaded machine that gives it no CPU). */
#include "config.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "capture/hook_gate.h"

#define ROUNDS 200000

static _Atomic int faulted;

static void on_fault(int sig, siginfo_t *info, void *uc)
{
	(void)sig, (void)uc;
	if (info->si_addr == (void *)&__ptrec_hook_gate) {
		atomic_store(&faulted, 1);
		write(2, "FAIL: a gate call wrote the read-only gate\n", 43);
		_exit(1);
	}
	signal(SIGSEGV, SIG_DFL);
}

static void *stop_resume(void *p)
{
	(void)p;
	for (int i = 0; i < ROUNDS; i++) {
		ptrec_hooks_stop();
		ptrec_hooks_resume();
	}
	return NULL;
}

static _Atomic int running;

/* Holds up the thread it lands on for 200 ms, wherever it was in a change of the gate. */
static void on_delay(int sig)
{
	struct timespec ts = {0, 200000000};
	(void)sig;
	nanosleep(&ts, NULL);
}

static void *stop_resume_until(void *p)
{
	(void)p;
	while (atomic_load(&running)) {
		ptrec_hooks_stop();
		ptrec_hooks_resume();
	}
	return NULL;
}

int main(void)
{
	struct sigaction sa;
	pthread_t t[4];

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);

	/* one thread alone: stop closes the gate once, resume opens it */
	CHECK(ptrec_hooks_stop() == 1);
	CHECK(__ptrec_hook_gate.stopped == 1);
	CHECK(ptrec_hooks_stop() == 0);
	ptrec_hooks_resume();
	CHECK(__ptrec_hook_gate.stopped == 0);

	/* four threads at once */
	for (int k = 0; k < 4; k++)
		CHECK(pthread_create(&t[k], NULL, stop_resume, NULL) == 0);
	for (int k = 0; k < 4; k++)
		pthread_join(t[k], NULL);
	CHECK(!atomic_load(&faulted));

	/* one thread held up for 200 ms at random points of its changes, twenty times, while
	 * another changes the gate too: the other waits for it (a bound of 100000 sched_yield
	 * calls gave up after a few ms and wrote the gate unserialized) */
	struct sigaction delay;
	memset(&delay, 0, sizeof(delay));
	delay.sa_handler = on_delay;
	sigaction(SIGUSR1, &delay, NULL);
	atomic_store(&running, 1);
	for (int k = 0; k < 2; k++)
		CHECK(pthread_create(&t[k], NULL, stop_resume_until, NULL) == 0);
	for (int n = 0; n < 20; n++) {
		struct timespec ts = {0, 30000000 + 7000000 * n};
		nanosleep(&ts, NULL);
		pthread_kill(t[n & 1], SIGUSR1);
		ts.tv_nsec = 220000000;
		nanosleep(&ts, NULL);
	}
	atomic_store(&running, 0);
	for (int k = 0; k < 2; k++)
		pthread_join(t[k], NULL);
	CHECK(!atomic_load(&faulted));
	/* and afterwards the gate works as before */
	CHECK(ptrec_hooks_stop() == 1);
	CHECK(__ptrec_hook_gate.stopped == 1);
	ptrec_hooks_resume();
	CHECK(__ptrec_hook_gate.stopped == 0);
	return check_done();
}
