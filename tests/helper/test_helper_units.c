/* test_helper_units.c — ptrec-helper started the way its installed units start it, in test
 * mode (software events): the socket bound and listening before the helper runs, passed as
 * fd 3 with LISTEN_PID/LISTEN_FDS (ptrec-helper.socket, SocketMode from the unit), the
 * helper under a uid of its own from DynamicUser's range, with only the capabilities the
 * service grants (AmbientCapabilities, CapabilityBoundingSet, NoNewPrivileges, read from
 * the generated unit), by setpriv(1) where systemd is not PID 1.  Then:
 *  - the helper runs with that uid and exactly those capabilities;
 *  - another uid (nobody) is granted its own thread, and the fd counts it: the helper's
 *    liveness check must not need the right to signal the peer;
 *  - a thread of nobody's non-dumpable process is refused to nobody.
 * What setpriv cannot reproduce (the unit's sandboxing directives) is left to the unit
 * itself; tests/helper/test_helper_unit_files.sh rates it with systemd-analyze.
 * SKIPs without root, without setpriv, or where the kernel refuses software perf events. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/perf_event.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "capture/helper_client.h"
#include "check.h"
#include "helper_test.h"
#include "ptrec.h"

static char sock_path[128];

static pid_t tid_self(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* The value of "KEY=" in the unit file text (the last one), copied to out; 0 if found. */
static int unit_value(const char *text, const char *key, char *out, size_t len)
{
	size_t k = strlen(key);
	int found = -1;
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (strncmp(l, key, k) || l[k] != '=')
			continue;
		const char *v = l + k + 1, *e = strchr(v, '\n');
		size_t n = e ? (size_t)(e - v) : strlen(v);
		if (n >= len)
			n = len - 1;
		memcpy(out, v, n);
		out[n] = '\0';
		found = 0;
	}
	return found;
}

static char *slurp(const char *path)
{
	static char buf[2][16384];
	static int which;
	char *b = buf[which++ & 1];
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	size_t n = fread(b, 1, sizeof(buf[0]) - 1, f);
	fclose(f);
	b[n] = '\0';
	return b;
}

/* "CAP_PERFMON CAP_X" -> "-all,+perfmon,+x" (setpriv's syntax). */
static void caps_for_setpriv(const char *unit_caps, char *out, size_t len)
{
	char tmp[256];
	snprintf(tmp, sizeof(tmp), "%s", unit_caps);
	snprintf(out, len, "-all");
	for (char *w = strtok(tmp, " "); w; w = strtok(NULL, " ")) {
		size_t used = strlen(out);
		if (!strncasecmp(w, "CAP_", 4))
			w += 4;
		snprintf(out + used, len - used, ",+");
		for (char *c = w; *c && strlen(out) + 1 < len; c++) {
			used = strlen(out);
			out[used] = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
			out[used + 1] = '\0';
		}
	}
}

/* ---- nobody's requests ------------------------------------------------------------------- */

static void ask_as_nobody(char *out, size_t len)
{
	struct ptrec_helper_event ev;
	char why[256];
	struct timespec a, b;

	int r1 = ptrec_helper_open(sock_path, "intel_pt", tid_self(), 4096, &ev, why, sizeof(why));
	uint64_t count = 0;
	if (r1 == 0 && ev.fd >= 0) {
		ioctl(ev.fd, PERF_EVENT_IOC_ENABLE, 0);
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
		do
			clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
		while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < 20);
		if (read(ev.fd, &count, sizeof(count)) != (ssize_t)sizeof(count))
			count = 0;
		close(ev.fd);
	}
	int n = snprintf(out, len, "%d|%s|%d|", r1, r1 ? why : "", count >= 18000000u);
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	int r2 = ptrec_helper_open(sock_path, "intel_pt", tid_self(), 4096, &ev, why, sizeof(why));
	snprintf(out + n, len - (size_t)n, "%d|%d|%s", r2, ev.fd >= 0, why);
}

/* Waits for the helper's ping, checks that it runs as uid with CAP_PERFMON alone, that
 * nobody is granted its own thread and refused it once not dumpable; then stops it. */
static void check_helper(pid_t helper, uid_t uid)
{
	char reply[256] = "", path[64];
	int up = 0;
	for (int i = 0; i < 500 && !up; i++) {
		up = ptrec_helper_ping(sock_path, reply, sizeof(reply)) == 0;
		if (!up)
			sleep_ms(10);
	}
	CHECK(up);
	if (!up) {
		fprintf(stderr, "the helper did not answer: %s\n", reply);
		kill(helper, SIGKILL);
		waitpid(helper, NULL, 0);
		return;
	}
	printf("-- the helper runs as uid %lu with CAP_PERFMON alone\n", (unsigned long)uid);
	snprintf(path, sizeof(path), "/proc/%ld/status", (long)helper);
	char *status = slurp(path), line[128];
	snprintf(line, sizeof(line), "\nUid:\t%lu\t%lu\t%lu\t%lu\n", (unsigned long)uid,
	         (unsigned long)uid, (unsigned long)uid, (unsigned long)uid);
	CHECK(status && strstr(status, line));
	CHECK(status && strstr(status, "\nGroups:\t \n")); /* none */
	CHECK(status && strstr(status, "\nCapPrm:\t0000004000000000\n"));
	CHECK(status && strstr(status, "\nCapEff:\t0000004000000000\n"));
	CHECK(status && strstr(status, "\nCapBnd:\t0000004000000000\n"));
	CHECK(status && strstr(status, "\nNoNewPrivs:\t1\n"));

	printf("-- nobody is granted its own thread, and refused it once not dumpable\n");
	char out[700];
	as_nobody(ask_as_nobody, out, sizeof(out));
	printf("   nobody got: %s\n", out);
	char expect[64];
	snprintf(expect, sizeof(expect), "0||1|%d|0|thread ", -PTREC_EPERM);
	CHECK(strncmp(out, expect, strlen(expect)) == 0);
	CHECK(strstr(out, "its process is not dumpable") != NULL);

	kill(helper, SIGTERM);
	int st = 0, gone = 0;
	for (int i = 0; i < 500 && !gone; i++) {
		gone = waitpid(helper, &st, WNOHANG) == helper;
		if (!gone)
			sleep_ms(10);
	}
	CHECK(gone); /* SIGTERM stops it within 5 s */
	if (!gone) {
		kill(helper, SIGKILL);
		waitpid(helper, &st, 0);
	}
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

int main(void)
{
	const char *b = getenv("top_builddir");
	char helper_bin[4096], path[4200], caps_amb[128], caps_bnd[128], v[256];
	char amb[256], bnd[256], mode_s[32];

	if (geteuid() != 0)
		SKIP("not root: starting the helper under its own uid with CAP_PERFMON needs root");
	if (access("/usr/bin/setpriv", X_OK) && access("/bin/setpriv", X_OK))
		SKIP("no setpriv(1) (util-linux) to start the helper as its unit does");
	int fd = sw_event_open(0);
	if (fd < 0)
		SKIP("this kernel refuses a software perf event (%s): no test mode", strerror(errno));
	close(fd);
	if (prctl(PR_CAPBSET_READ, 38 /* CAP_PERFMON */, 0, 0, 0) != 1)
		SKIP("this kernel has no CAP_PERFMON (Linux 5.8+)");

	b = b ? b : ".";
	snprintf(helper_bin, sizeof(helper_bin), "%s/libptrec/helper/ptrec-helper", b);
	snprintf(path, sizeof(path), "%s/libptrec/helper/ptrec-helper.service", b);
	char *service = slurp(path);
	snprintf(path, sizeof(path), "%s/libptrec/helper/ptrec-helper.socket", b);
	char *socket_unit = slurp(path);
	if (!service || !socket_unit) {
		fprintf(stderr, "cannot read the generated units under %s/libptrec/helper\n", b);
		return 99;
	}
	/* The service's user model and capabilities. */
	CHECK(unit_value(service, "DynamicUser", v, sizeof(v)) == 0 && !strcmp(v, "yes"));
	CHECK(unit_value(service, "AmbientCapabilities", caps_amb, sizeof(caps_amb)) == 0);
	CHECK(unit_value(service, "CapabilityBoundingSet", caps_bnd, sizeof(caps_bnd)) == 0);
	CHECK_STR(caps_amb, "CAP_PERFMON");
	CHECK_STR(caps_bnd, "CAP_PERFMON");
	int nnp = unit_value(service, "NoNewPrivileges", v, sizeof(v)) == 0 && !strcmp(v, "yes");
	CHECK(nnp);
	caps_for_setpriv(caps_amb, amb, sizeof(amb));
	caps_for_setpriv(caps_bnd, bnd, sizeof(bnd));
	if (unit_value(socket_unit, "SocketMode", mode_s, sizeof(mode_s)))
		snprintf(mode_s, sizeof(mode_s), "0666");
	mode_t mode = (mode_t)strtoul(mode_s, NULL, 8);

	/* A uid of DynamicUser's range (61184..65519) that names nobody here. */
	uid_t uid = 61999;
	while (getpwuid(uid) || getgrgid(uid))
		uid--;

	/* The socket, as systemd makes it: bound by root in a root-owned 0755 directory. */
	char dir[] = "/tmp/ptrec-helper-units.XXXXXX";
	if (!mkdtemp(dir) || chmod(dir, 0755))
		return 99;
	snprintf(sock_path, sizeof(sock_path), "%s/helper.sock", dir);
	struct sockaddr_un sa;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	strcpy(sa.sun_path, sock_path);
	int ls = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	mode_t old = umask(0777 & ~mode);
	int bound = bind(ls, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (ls < 0 || bound || listen(ls, 64))
		return 99;

	char ruid[32], rgid[32], inh[300], ambient[300], bounding[300];
	snprintf(ruid, sizeof(ruid), "--reuid=%lu", (unsigned long)uid);
	snprintf(rgid, sizeof(rgid), "--regid=%lu", (unsigned long)uid);
	snprintf(inh, sizeof(inh), "--inh-caps=%s", amb);
	snprintf(ambient, sizeof(ambient), "--ambient-caps=%s", amb);
	snprintf(bounding, sizeof(bounding), "--bounding-set=%s", bnd);
	printf("-- setpriv %s %s --clear-groups %s %s %s --no-new-privs %s --test-software-event "
	       "(socket %s, mode %04o, as fd 3)\n", ruid, rgid, inh, ambient, bounding, helper_bin,
	       sock_path, (unsigned)mode);
	fflush(stdout);
	pid_t helper = fork();
	if (helper == 0) {
		char lp[32];
		if (dup2(ls, 3) != 3)
			_exit(126);
		snprintf(lp, sizeof(lp), "%ld", (long)getpid());
		setenv("LISTEN_PID", lp, 1);
		setenv("LISTEN_FDS", "1", 1);
		/* PTREC_TEST_HELPER_STRACE=FILE: the helper's system calls into FILE, for
		 * test_helper_unit_files.sh to hold against the unit's SystemCallFilter (strace -D
		 * keeps this pid, which LISTEN_PID names). */
		const char *trace = getenv("PTREC_TEST_HELPER_STRACE");
		if (trace)
			execlp("strace", "strace", "-D", "-f", "-qq", "-o", trace, "setpriv", ruid,
			       rgid, "--clear-groups", inh, ambient, bounding, "--no-new-privs",
			       helper_bin, "--test-software-event", (char *)NULL);
		else
			execlp("setpriv", "setpriv", ruid, rgid, "--clear-groups", inh, ambient,
			       bounding, "--no-new-privs", helper_bin, "--test-software-event",
			       (char *)NULL);
		_exit(127);
	}
	close(ls);
	check_helper(helper, uid);

	/* Without systemd: root starts it with --user, it binds the socket (root's, so clients
	 * trust it) and drops to that user with CAP_PERFMON alone. */
	unlink(sock_path);
	printf("-- ptrec-helper --user %lu, started by root (no systemd)\n", (unsigned long)uid);
	char user[32];
	snprintf(user, sizeof(user), "%lu", (unsigned long)uid);
	helper = fork();
	if (helper == 0) {
		execl(helper_bin, helper_bin, "--user", user, "--socket", sock_path,
		      "--test-software-event", (char *)NULL);
		_exit(127);
	}
	check_helper(helper, uid);
	struct stat st;
	CHECK(lstat(sock_path, &st) == 0 && st.st_uid == 0 && (st.st_mode & 0777) == 0666);
	unlink(sock_path);
	rmdir(dir);
	return check_done();
}
