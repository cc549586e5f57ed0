/* reaper.c — a server that reaps every child, like Redis or nginx, while it takes snapshots.
 *
 *   reaper invisible N  takes N snapshots (their reports run while it reaps) with a SIGCHLD
 *                       handler counting signals and a loop calling waitpid(-1, WNOHANG)
 *                       that records every pid it reaps; it also forks one child of its own.
 *                       It keeps fds without O_CLOEXEC open at 5 and 57.  Exits 0 when: exactly
 *                       one SIGCHLD arrived and exactly one pid was reaped, its own child;
 *                       its signal mask and SIGCHLD disposition are what it set; it has the
 *                       same descriptors as before the snapshots; N were written.
 *   reaper burst N      asks for N snapshots back to back (no rate limit, no report): some are
 *                       refused because the queue is full; exits 0 when requested == N,
 *                       written + dropped == N, dropped >= 1 and written >= 1, and prints
 *                       "written W dropped D".
 *   reaper untouched    writes every page of a 16 MiB buffer, takes one snapshot and waits
 *                       for its report, then writes every page again: exits 0 when the second
 *                       pass costs this thread fewer than 64 page faults and errno is what it
 *                       set.  A report process that copied the address space (fork) would
 *                       leave every page copy-on-write: 4096 faults, each one paid by the
 *                       application long after the snapshot returned.
 * Built with -finstrument-functions; the instrumented backend records it. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ptrec.h"

static atomic_int sigchld_count;

static void on_sigchld(int sig)
{
	(void)sig;
	atomic_fetch_add(&sigchld_count, 1);
}

static int count_fds(void)
{
	int n = 0;
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n - 1; /* the directory's own descriptor */
}

static struct ptrec_status status(void)
{
	struct ptrec_status st;
	st.struct_size = sizeof(st);
	ptrec_status(&st);
	return st;
}

__attribute__((noinline)) static int serve_request(int i)
{
	char why[64];
	snprintf(why, sizeof(why), "request %d was slow", i);
	return ptrec_snapshot(why);
}

static int invisible(int n)
{
	struct sigaction sa, now;
	sigset_t mask, mask_now;
	pid_t reaped[16];
	int nreaped = 0, ok = 1;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigchld;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGCHLD, &sa, NULL);
	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR2); /* some mask of the application's own */
	sigprocmask(SIG_SETMASK, &mask, NULL);
	int fd = open("/dev/null", O_RDONLY); /* no O_CLOEXEC: a leak candidate */
	if (fd < 0 || dup2(fd, 57) != 57 || dup2(fd, 5) != 5)
		return 98;
	close(fd);
	if (ptrec_init(NULL) != 0)
		return 97;
	int fds_before = count_fds();

	pid_t own = fork();
	if (own == 0) {
		usleep(300000);
		_exit(0);
	}
	for (int i = 0; i < n; i++) {
		int r = serve_request(i);
		if (r != 0) {
			fprintf(stderr, "reaper: snapshot %d: %s\n", i, ptrec_strerror(r));
			ok = 0;
		}
		/* The server's reaping loop runs while the report process works. */
		for (int k = 0; k < 400; k++) {
			pid_t p;
			while ((p = waitpid(-1, NULL, WNOHANG)) > 0)
				if (nreaped < 16)
					reaped[nreaped++] = p;
			usleep(1000);
		}
	}
	if (ptrec_snapshot_flush(60000) != 0) {
		fprintf(stderr, "reaper: snapshots not finished\n");
		ok = 0;
	}
	for (int k = 0; k < 1000 && nreaped == 0; k++) { /* our own child, if not yet */
		pid_t p = waitpid(-1, NULL, WNOHANG);
		if (p > 0)
			reaped[nreaped++] = p;
		usleep(1000);
	}
	pid_t p;
	while ((p = waitpid(-1, NULL, WNOHANG)) > 0)
		reaped[nreaped < 16 ? nreaped++ : 15] = p;
	if (nreaped != 1 || reaped[0] != own) {
		fprintf(stderr, "reaper: reaped %d children (first %d), expected only its own %d\n",
		        nreaped, nreaped ? (int)reaped[0] : 0, (int)own);
		ok = 0;
	}
	if (atomic_load(&sigchld_count) != 1) {
		fprintf(stderr, "reaper: %d SIGCHLD, expected 1 (its own child)\n",
		        atomic_load(&sigchld_count));
		ok = 0;
	}
	sigprocmask(SIG_SETMASK, NULL, &mask_now);
	if (!sigismember(&mask_now, SIGUSR2) || sigismember(&mask_now, SIGCHLD) ||
	    sigismember(&mask_now, SIGTERM)) {
		fprintf(stderr, "reaper: the signal mask changed\n");
		ok = 0;
	}
	sigaction(SIGCHLD, NULL, &now);
	if (now.sa_handler != on_sigchld || !(now.sa_flags & SA_RESTART)) {
		fprintf(stderr, "reaper: the SIGCHLD disposition changed\n");
		ok = 0;
	}
	int fds_after = count_fds();
	if (fds_after != fds_before) {
		fprintf(stderr, "reaper: %d descriptors before the snapshots, %d after\n", fds_before,
		        fds_after);
		ok = 0;
	}
	struct ptrec_status st = status();
	if (st.snapshots_written != (unsigned)n || st.snapshots_dropped != 0) {
		fprintf(stderr, "reaper: %u written, %u dropped; expected %d, 0\n",
		        st.snapshots_written, st.snapshots_dropped, n);
		ok = 0;
	}
	ptrec_shutdown();
	return ok ? 0 : 1;
}

static int burst(int n)
{
	int refused = 0, ok = 1;

	if (ptrec_init(NULL) != 0)
		return 97;
	for (int i = 0; i < n; i++) {
		int r = serve_request(i);
		if (r == -PTREC_ERATE)
			refused++;
		else if (r != 0)
			ok = 0;
	}
	ptrec_snapshot_flush(60000);
	struct ptrec_status st = status();
	printf("written %u dropped %u\n", st.snapshots_written, st.snapshots_dropped);
	if (st.snapshots_requested != (unsigned)n ||
	    st.snapshots_written + st.snapshots_dropped != (unsigned)n ||
	    st.snapshots_dropped != (unsigned)refused || !st.snapshots_dropped ||
	    !st.snapshots_written) {
		fprintf(stderr, "reaper: burst of %d: %u requested, %u written, %u dropped, %d "
		        "refused\n", n, st.snapshots_requested, st.snapshots_written,
		        st.snapshots_dropped, refused);
		ok = 0;
	}
	ptrec_shutdown();
	return ok ? 0 : 1;
}

static long minor_faults(void)
{
	struct rusage ru;
	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_minflt;
}

static int untouched(void)
{
	enum { LEN = 16 << 20 };
	char path[4096];
	int ok = 1;

	volatile char *buf = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
	                          -1, 0);
	if (buf == MAP_FAILED || ptrec_init(NULL) != 0)
		return 97;
	madvise((void *)buf, LEN, MADV_NOHUGEPAGE); /* one fault per 4 KiB page */
	for (size_t i = 0; i < LEN; i += 4096)
		buf[i] = 1;
	int r = ptrec_snapshot_path("untouched", path, sizeof(path));
	if (r != 0 || ptrec_snapshot_flush(60000) != 0) {
		fprintf(stderr, "reaper: snapshot: %s\n", ptrec_strerror(r));
		return 1;
	}
	errno = EDOM;
	long before = minor_faults();
	for (size_t i = 0; i < LEN; i += 4096)
		buf[i] = 2;
	long faults = minor_faults() - before;
	printf("report %s: %ld page faults writing %d pages after it\n", path, faults,
	       LEN / 4096);
	if (faults >= 64) {
		fprintf(stderr, "reaper: the report made the application's pages copy-on-write\n");
		ok = 0;
	}
	if (errno != EDOM) {
		fprintf(stderr, "reaper: errno changed\n");
		ok = 0;
	}
	ptrec_shutdown();
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "untouched") == 0)
		return untouched();
	if (argc == 3 && strcmp(argv[1], "invisible") == 0)
		return invisible(atoi(argv[2]));
	if (argc == 3 && strcmp(argv[1], "burst") == 0)
		return burst(atoi(argv[2]));
	fprintf(stderr, "usage: reaper invisible|burst N\n");
	return 2;
}
