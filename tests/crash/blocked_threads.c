/* blocked_threads.c — a server-like process for test_crash_blocked_threads.sh: its threads wait
 * in known call chains, one spins, and the main thread crashes on request.
 *
 *   blocked_threads FIFO
 *
 *   thread "sleeper":  sleeper_main -> sleeper_a -> sleeper_b -> nanosleep (an hour)
 *   thread "reader":   reader_main -> reader_c -> read() on a pipe nobody writes
 *   thread "waiter":   waiter_main -> waiter_d -> pthread_cond_wait (never signalled)
 *   thread "spinner":  spinner_main -> spin_e, a loop in user code (on a CPU: "running")
 *
 * Once every waiting thread is in its system call (its /proc/self/task/TID/syscall says so),
 * it prints "ready SLEEPER READER WAITER SPINNER" (the tids), then reads one byte from FIFO
 * and crashes (SIGSEGV in crash_main).  Built at -O2 -fomit-frame-pointer without inlining or
 * sibling calls, so every function keeps its frame and its CFI finds its caller from the stack
 * pointer alone, as in a distribution's -O2 build. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ptrec.h"

#define KEEP() __asm__ volatile("" ::: "memory") /* no tail call, no merged frames */

static int pipefd[2];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static volatile int spinning = 1;
static volatile pid_t tids[4];
static volatile uintptr_t addr_null = 0;

__attribute__((noinline)) static void sleeper_b(void)
{
	struct timespec ts = {3600, 0};
	nanosleep(&ts, NULL);
	KEEP();
}

__attribute__((noinline)) static void sleeper_a(void)
{
	sleeper_b();
	KEEP();
}

static void *sleeper_main(void *arg)
{
	(void)arg;
	tids[0] = (pid_t)syscall(SYS_gettid);
	sleeper_a();
	return NULL;
}

__attribute__((noinline)) static void reader_c(void)
{
	char b;
	if (read(pipefd[0], &b, 1) < 0)
		perror("read");
	KEEP();
}

static void *reader_main(void *arg)
{
	(void)arg;
	tids[1] = (pid_t)syscall(SYS_gettid);
	reader_c();
	return NULL;
}

__attribute__((noinline)) static void waiter_d(void)
{
	pthread_mutex_lock(&mu);
	for (;;)
		pthread_cond_wait(&cv, &mu);
}

static void *waiter_main(void *arg)
{
	(void)arg;
	tids[2] = (pid_t)syscall(SYS_gettid);
	waiter_d();
	return NULL;
}

__attribute__((noinline)) static void spin_e(void)
{
	while (spinning)
		KEEP();
}

static void *spinner_main(void *arg)
{
	(void)arg;
	tids[3] = (pid_t)syscall(SYS_gettid);
	spin_e();
	return NULL;
}

/* 1 once thread tid is blocked in system call nr (or nr2) by its /proc syscall file. */
static int in_syscall(pid_t tid, long nr, long nr2)
{
	char path[64], text[256];
	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	int ok = fgets(text, sizeof(text), f) != NULL;
	fclose(f);
	if (!ok || !strcmp(text, "running\n"))
		return 0;
	long n = strtol(text, NULL, 10);
	return n == nr || n == nr2;
}

__attribute__((noinline)) static void crash_main(void)
{
	*(volatile int *)(addr_null + 8) = 1;
	KEEP();
}

int main(int argc, char **argv)
{
	static void *(*const mains[4])(void *) = {sleeper_main, reader_main, waiter_main,
	                                          spinner_main};
	static const char *const names[4] = {"sleeper", "reader", "waiter", "spinner"};
	pthread_t th[4];
	char b;

	if (argc != 2) {
		fprintf(stderr, "usage: blocked_threads FIFO\n");
		return 2;
	}
	if (ptrec_init(NULL) != 0)
		fprintf(stderr, "ptrec_init failed\n");
	if (pipe(pipefd) != 0)
		return 99;
	for (int i = 0; i < 4; i++) {
		if (pthread_create(&th[i], NULL, mains[i], NULL) != 0)
			return 99;
		pthread_setname_np(th[i], names[i]);
	}
	/* nanosleep is clock_nanosleep (230) in glibc, nanosleep (35) in others; the waiter
	 * is in futex (202). */
	while (!tids[0] || !tids[1] || !tids[2] || !tids[3] || !in_syscall(tids[0], 230, 35) ||
	       !in_syscall(tids[1], 0, 0) || !in_syscall(tids[2], 202, 202)) {
		struct timespec ts = {0, 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	printf("ready %d %d %d %d\n", (int)tids[0], (int)tids[1], (int)tids[2], (int)tids[3]);
	fflush(stdout);
	int fd = open(argv[1], O_RDONLY);
	if (fd < 0 || read(fd, &b, 1) != 1)
		return 98;
	crash_main();
	return 0;
}
