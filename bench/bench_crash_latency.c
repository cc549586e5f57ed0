/* bench_crash_latency.c — time from a crash to the process's death with its dump (and its
 * report) written, against ring size and thread count.  Each run forks a child that starts
 * the recorder (instrumented backend), fills every thread's ring, notes the time and crashes
 * on a NULL pointer; the parent takes the time when it reaps the child.  "dump" runs use
 * PTREC_F_NO_REPORT; "dump+report" runs exec `ptrec report` (the built tool) as in production.
 * Median of 3 runs each. */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ptrec.h"
#include "workload.h"
#include "bench_util.h"

#define RUNS 3

static volatile uint64_t sink;
static volatile uintptr_t null_addr;
static pthread_barrier_t filled;

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void *filler(void *p)
{
	(void)p;
	sink += wl_calls_calls(25); /* ~240k calls: 11 MB of records, more than any ring here */
	pthread_barrier_wait(&filled);
	for (;;)
		pause();
	return NULL;
}

static void child(size_t ring, unsigned threads, int report, int fd)
{
	struct ptrec_config cfg;
	ptrec_config_init(&cfg);
	cfg.backend = PTREC_BACKEND_INSTRUMENTED;
	cfg.ring_size = ring;
	cfg.memory_budget = 1u << 30;
	cfg.report_timeout_ms = 60000;
	cfg.flags = report ? 0 : PTREC_F_NO_REPORT;
	if (ptrec_init(&cfg) != 0)
		_exit(2);
	pthread_barrier_init(&filled, NULL, threads);
	for (unsigned i = 1; i < threads; i++) {
		pthread_t t;
		pthread_create(&t, NULL, filler, NULL);
	}
	sink += wl_calls_calls(25);
	pthread_barrier_wait(&filled);
	double t0 = now_ms();
	if (write(fd, &t0, sizeof(t0)) != sizeof(t0))
		_exit(3);
	*(volatile int *)null_addr = 1;
	_exit(4);
}

/* Removes the files of one run. */
static long long clean(const char *dir)
{
	long long dump_size = 0;
	DIR *d = opendir(dir);
	struct dirent *e;
	char p[PATH_MAX];
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		struct stat st;
		size_t n = strlen(e->d_name);
		if (n > 6 && !strcmp(e->d_name + n - 6, ".ptrec") && stat(p, &st) == 0)
			dump_size = st.st_size;
		unlink(p);
	}
	if (d)
		closedir(d);
	return dump_size;
}

static double run(const char *dir, size_t ring, unsigned threads, int report, long long *size,
                  int *ok)
{
	double v[RUNS];
	*ok = 1;
	for (int r = 0; r < RUNS; r++) {
		int p[2];
		double t0 = 0;
		if (pipe(p) != 0)
			exit(1);
		pid_t pid = fork();
		if (pid == 0) {
			close(p[0]);
			int dn = open("/dev/null", O_WRONLY);
			dup2(dn, 2);
			if (chdir(dir) != 0)
				_exit(5);
			child(ring, threads, report, p[1]);
		}
		close(p[1]);
		if (read(p[0], &t0, sizeof(t0)) != sizeof(t0))
			*ok = 0;
		int st;
		waitpid(pid, &st, 0);
		double t1 = now_ms();
		close(p[0]);
		if (!WIFSIGNALED(st) || WTERMSIG(st) != 11)
			*ok = 0;
		v[r] = t1 - t0;
		*size = clean(dir);
	}
	qsort(v, RUNS, sizeof(double), bench_cmp_double);
	return v[RUNS / 2];
}

int main(void)
{
	static const size_t rings[] = {64u << 10, 1u << 20, 8u << 20};
	static const unsigned threads[] = {1, 4, 16};
	char dir[] = "/tmp/ptrec-bench-XXXXXX";
	char exe[PATH_MAX], tool[PATH_MAX + 32];

	if (!getenv("PTREC_TOOL")) {
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		exe[n > 0 ? n : 0] = '\0';
		char *slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
		slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
		snprintf(tool, sizeof(tool), "%s/libptrec/tool/ptrec", exe);
		setenv("PTREC_TOOL", tool, 1);
	}
	if (!mkdtemp(dir))
		return 1;
	unsetenv("PTREC_DIR");
	printf("crash-to-report latency (instrumented backend, rings full, median of %d runs)\n",
	       RUNS);
	printf("from the faulting store to the parent reaping the child; report tool: %s\n\n",
	       getenv("PTREC_TOOL"));
	printf("%9s %8s %12s %12s %16s\n", "ring", "threads", "dump MiB", "dump ms",
	       "dump+report ms");
	for (size_t r = 0; r < sizeof(rings) / sizeof(rings[0]); r++)
		for (size_t t = 0; t < sizeof(threads) / sizeof(threads[0]); t++) {
			long long size = 0, size2 = 0;
			int ok1, ok2;
			double d = run(dir, rings[r], threads[t], 0, &size, &ok1);
			double dr = run(dir, rings[r], threads[t], 1, &size2, &ok2);
			printf("%6zuKiB %8u %12.2f %12.1f %16.1f%s\n", rings[r] >> 10, threads[t],
			       size / 1048576.0, d, dr, ok1 && ok2 ? "" : "  (a run did not die of SIGSEGV)");
		}
	rmdir(dir);
	return 0;
}
