/* test_hook_gate.c — the hook gate (capture/hook_gate.h) under threads that stop and resume the
 * hooks at the same time, as concurrent crash signals do (one thread's episode ends while
 * another thread, faulting too, stops the hooks): every stop must leave the gate closed and
 * read-only, and no call may write the gate while another has made it read-only (which
 * faulted in ptrec_hooks_stop: the SIGSEGV of a Go program under `ptrec run`). */
#include "config.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
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
	/* and afterwards the gate works as before */
	CHECK(ptrec_hooks_stop() == 1);
	CHECK(__ptrec_hook_gate.stopped == 1);
	ptrec_hooks_resume();
	CHECK(__ptrec_hook_gate.stopped == 0);
	return check_done();
}
