/* helper_main.c — ptrec-helper: a least-privilege perf_event_open broker (doc/ptrec-helper.8).
 *
 * Runs with CAP_PERFMON (file capability or a systemd unit), listens on a unix SOCK_SEQPACKET
 * socket, and for each connection: takes the peer's credentials and a pidfd (helper_peer.c),
 * reads one request of at most PTREC_HELPER_MSG_MAX bytes within the timeout
 * (helper_request.c), checks that the thread named is the peer's own, opens a per-thread,
 * user-space-only, disabled event (exclude_kernel, exclude_hv, cpu -1; intel_pt with the
 * config the library builds, intel_bts only with --allow-bts), checks the peer again and
 * passes the fd back with SCM_RIGHTS.  Anything else is refused with a reason.  Nothing is
 * kept per client beyond its connection; one thread per connection, at most --max-clients.
 *
 * --test-software-event opens PERF_COUNT_SW_TASK_CLOCK for the thread instead of the PT/BTS
 * event (machines without PT: the test suite), with every check unchanged. */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdint.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "capture/helper_client.h"
#include "capture/perf_config.h"
#include "helper/helper_peer.h"
#include "helper/helper_request.h"
#include "platform/pmu_sysfs.h"
#include "ptrec.h"

/* The helper's settings, fixed after the command line. */
static struct {
	const char *socket_path;   /* where to listen */
	const char *user;          /* --user: drop to it after binding, keeping CAP_PERFMON */
	gid_t socket_gid;          /* --socket-group: its gid (socket 0660), else (gid_t)-1 */
	int software;              /* --test-software-event */
	int allow_bts;             /* --allow-bts */
	unsigned timeout_ms;       /* per-connection receive/send bound */
	unsigned max_clients;      /* connections served at once */
	unsigned max_per_uid;      /* of which one uid may hold at once */
	unsigned test_delay_ms;    /* --test-delay-ms: pause before the checks (tests only) */
	struct ptrec_pmu pt;       /* intel_pt PMU, read at start */
	struct ptrec_pmu bts;      /* intel_bts PMU, read at start */
} opt;

static atomic_uint clients;
static volatile sig_atomic_t stop;

/* A connection as accepted: its socket and who connected (SO_PEERCRED; pid 0 if unknown). */
struct conn {
	int s;
	pid_t pid;
	uid_t uid;
};

/* Connections held per uid, for --max-per-uid: a slot per connection at most. */
static pthread_mutex_t uid_lock = PTHREAD_MUTEX_INITIALIZER;
static struct uid_count {
	uid_t uid;
	unsigned n;
} *uid_counts;

/* Takes one of uid's connections.  Returns 0, or the number it holds if at its limit. */
static unsigned uid_take(uid_t uid)
{
	unsigned held = 0;
	struct uid_count *free_slot = NULL, *slot = NULL;

	pthread_mutex_lock(&uid_lock);
	for (unsigned i = 0; i < opt.max_clients && !slot; i++) {
		if (uid_counts[i].n && uid_counts[i].uid == uid)
			slot = &uid_counts[i];
		else if (!uid_counts[i].n && !free_slot)
			free_slot = &uid_counts[i];
	}
	if (!slot && free_slot) {
		slot = free_slot;
		slot->uid = uid;
	}
	if (slot && slot->n >= opt.max_per_uid)
		held = slot->n;
	else if (slot)
		slot->n++;
	else
		held = opt.max_clients; /* cannot happen: the global cap comes first */
	pthread_mutex_unlock(&uid_lock);
	return held;
}

static void uid_give(uid_t uid)
{
	pthread_mutex_lock(&uid_lock);
	for (unsigned i = 0; i < opt.max_clients; i++)
		if (uid_counts[i].n && uid_counts[i].uid == uid) {
			uid_counts[i].n--;
			break;
		}
	pthread_mutex_unlock(&uid_lock);
}

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "ptrec-helper: %s\n", line);
}

/* Sends msg, with fd attached when fd >= 0. */
static void reply(int s, const char *msg, int fd)
{
	union {
		struct cmsghdr h;
		char space[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = {(void *)msg, strlen(msg)};
	struct msghdr mh;

	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	if (fd >= 0) {
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.space;
		mh.msg_controllen = sizeof(ctl.space);
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	sendmsg(s, &mh, MSG_NOSIGNAL);
}

/* Refusals are logged at most LOG_BURST lines per LOG_WINDOW_S seconds; the rest are
 * counted and the count logged when the next window opens: a flood cannot fill the journal. */
#define LOG_BURST 20u
#define LOG_WINDOW_S 10
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static time_t log_window;
static unsigned log_lines;
static unsigned long log_dropped;

/* Returns 1 if a refusal may be logged now; with flush, only logs the count not logged. */
static int log_gate(int flush)
{
	struct timespec now;
	int ok;

	clock_gettime(CLOCK_MONOTONIC, &now);
	pthread_mutex_lock(&log_lock);
	if (flush || now.tv_sec - log_window >= LOG_WINDOW_S) {
		if (log_dropped)
			logf_("%lu more refusals in the last %ld s not logged (at most %u lines per "
			      "%d s)", log_dropped, (long)(now.tv_sec - log_window), LOG_BURST,
			      LOG_WINDOW_S);
		log_window = now.tv_sec;
		log_lines = 0;
		log_dropped = 0;
	}
	ok = log_lines < LOG_BURST;
	if (ok)
		log_lines++;
	else
		log_dropped++;
	pthread_mutex_unlock(&log_lock);
	return ok;
}

static void refuse(const struct conn *c, const char *why)
{
	char msg[PTREC_HELPER_MSG_MAX];

	snprintf(msg, sizeof(msg), "refused: %s", why);
	reply(c->s, msg, -1);
	if (!log_gate(0))
		return;
	if (c->pid > 0)
		logf_("pid %ld uid %lu: refused: %s", (long)c->pid, (unsigned long)c->uid, why);
	else
		logf_("unknown peer (no SO_PEERCRED): refused: %s", why);
}

/* The attributes for req: the only events this helper ever opens.  Returns 0 or -1 with why. */
static int event_attr(const struct ptrec_helper_request *req, struct perf_event_attr *attr,
                      uint32_t *mtc_period, char *why, size_t len)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->disabled = 1;
	attr->exclude_kernel = 1;
	attr->exclude_hv = 1;
	*mtc_period = 0;
	if (opt.software) {
		attr->type = PERF_TYPE_SOFTWARE;
		attr->config = PERF_COUNT_SW_TASK_CLOCK;
		return 0;
	}
	if (req->backend == PTREC_BACKEND_INTEL_BTS) {
		if (!opt.allow_bts) {
			snprintf(why, len, "intel_bts is not enabled in this helper (--allow-bts): "
			         "BTS records leak kernel addresses");
			return -1;
		}
		if (!opt.bts.present || opt.bts.type < 0) {
			snprintf(why, len, "this machine has no intel_bts PMU");
			return -1;
		}
		attr->type = (uint32_t)opt.bts.type;
		return 0;
	}
	struct ptrec_pt_request pr;
	struct ptrec_pt_config pc;
	char err[256];
	if (!opt.pt.present || opt.pt.type < 0) {
		snprintf(why, len, "this machine has no intel_pt PMU");
		return -1;
	}
	ptrec_pt_request_default(&pr, req->ring_size);
	if (ptrec_pt_config_build(&opt.pt, &pr, &pc, err, sizeof(err))) {
		snprintf(why, len, "cannot build the intel_pt config: %.120s", err);
		return -1;
	}
	attr->type = (uint32_t)opt.pt.type;
	attr->config = pc.config;
	attr->config1 = pc.config1;
	attr->config2 = pc.config2;
	if (pc.flags & PTREC_PT_MTC)
		*mtc_period = pc.mtc_period;
	return 0;
}

static void serve_open(const struct conn *c, const struct ptrec_helper_peer *peer,
                       const struct ptrec_helper_request *req)
{
	struct perf_event_attr attr;
	uint32_t mtc;
	char why[200], msg[PTREC_HELPER_MSG_MAX];

	if (ptrec_helper_peer_owns(peer, req->tid, why, sizeof(why)) ||
	    event_attr(req, &attr, &mtc, why, sizeof(why))) {
		refuse(c, why);
		return;
	}
	int fd = (int)syscall(SYS_perf_event_open, &attr, req->tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		snprintf(why, sizeof(why), "perf_event_open(%s, tid %ld): %s",
		         ptrec_backend_name(req->backend), (long)req->tid, strerror(errno));
		refuse(c, why);
		return;
	}
	/* The thread may have exited and its tid gone elsewhere while we opened: ask again. */
	if (ptrec_helper_peer_owns(peer, req->tid, why, sizeof(why))) {
		close(fd);
		refuse(c, why);
		return;
	}
	snprintf(msg, sizeof(msg), "ok config=0x%llx config1=0x%llx config2=0x%llx mtc_period=%u",
	         (unsigned long long)attr.config, (unsigned long long)attr.config1,
	         (unsigned long long)attr.config2, mtc);
	reply(c->s, msg, fd);
	close(fd);
	logf_("pid %ld uid %lu: opened %s%s for tid %ld", (long)peer->pid,
	      (unsigned long)peer->uid, ptrec_backend_name(req->backend),
	      opt.software ? " (as a software event: test mode)" : "", (long)req->tid);
}

static void serve(const struct conn *c)
{
	int s = c->s;
	struct ptrec_helper_peer peer;
	struct ptrec_helper_request req;
	char buf[PTREC_HELPER_MSG_MAX + 1], why[200], peer_why[200];

	if (opt.test_delay_ms) { /* a slow accept: the peer may be gone and its pid reused */
		struct timespec ts = {opt.test_delay_ms / 1000,
		                      (long)(opt.test_delay_ms % 1000) * 1000000L};
		nanosleep(&ts, NULL);
	}
	int pinned = ptrec_helper_peer_get(s, &peer, peer_why, sizeof(peer_why)) == 0;
	ssize_t n = recv(s, buf, sizeof(buf), MSG_TRUNC);
	if (n < 0) {
		refuse(c, errno == EAGAIN ? "no request within the timeout" : strerror(errno));
	} else if ((size_t)n > PTREC_HELPER_MSG_MAX) {
		snprintf(why, sizeof(why), "request of %zd bytes is over the limit of %u", n,
		         PTREC_HELPER_MSG_MAX);
		refuse(c, why);
	} else if (ptrec_helper_request_parse(buf, (size_t)n, &req, why, sizeof(why))) {
		refuse(c, why);
	} else if (req.verb == PTREC_HELPER_PING) {
		snprintf(buf, sizeof(buf), "ok ptrec-helper %s events=%s", ptrec_version(),
		         opt.software ? "software(test)" : opt.allow_bts ? "intel_pt,intel_bts"
		                                                         : "intel_pt");
		reply(s, buf, -1);
	} else if (!pinned) {
		refuse(c, peer_why);
	} else {
		serve_open(c, &peer, &req);
	}
	if (pinned)
		ptrec_helper_peer_release(&peer);
}

static void *connection(void *p)
{
	struct conn *c = p;

	serve(c);
	close(c->s);
	uid_give(c->uid);
	atomic_fetch_sub(&clients, 1);
	free(c);
	return NULL;
}

/* Answers "refused: busy: ..." on a connection not served, without waiting on it, and closes
 * it having read what it sent (so the peer reads the answer instead of a reset). */
static void refuse_busy(struct conn *c, const char *why)
{
	char buf[PTREC_HELPER_MSG_MAX + 1];
	struct timeval tv = {0, 0};

	setsockopt(c->s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	refuse(c, why);
	shutdown(c->s, SHUT_WR);
	while (recv(c->s, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
	close(c->s);
}

/* The listening socket: systemd's (LISTEN_FDS) or our own at opt.socket_path, in a directory
 * only root (or we) may write, mode 0666 (who may ask is decided per request), or 0660 and
 * the group of --socket-group.  Sets *owned when we created the path.  Returns fd or -1. */
static int listen_socket(int *owned)
{
	const char *lp = getenv("LISTEN_PID"), *lf = getenv("LISTEN_FDS");

	*owned = 0;
	if (lp && lf && atol(lp) == (long)getpid() && atoi(lf) >= 1)
		return 3;
	struct sockaddr_un sa;
	size_t n = strlen(opt.socket_path);
	if (n >= sizeof(sa.sun_path)) {
		logf_("socket path too long: %s", opt.socket_path);
		return -1;
	}
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0) {
		logf_("socket: %s", strerror(errno));
		return -1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, opt.socket_path, n);
	/* The directory first: made if missing, and writable by us alone, so that nobody else
	 * can swap what is at the path between the calls below. */
	char dir[sizeof(sa.sun_path)];
	ptrec_helper_socket_dir(opt.socket_path, dir, sizeof(dir));
	mkdir(dir, 0755); /* /run/ptrec when started by hand; EEXIST is fine */
	struct stat st;
	int sr = stat(dir, &st);
	if (sr < 0 || !S_ISDIR(st.st_mode)) {
		logf_("the socket's directory %s is not usable: %s", dir,
		      sr < 0 ? strerror(errno) : "not a directory");
		close(s);
		return -1;
	}
	if ((st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		logf_("the socket's directory %s (owner uid %lu, mode %04o) may be written by "
		      "others, who could swap the socket: give it to root, mode 0755", dir,
		      (unsigned long)st.st_uid, (unsigned)(st.st_mode & 07777));
		close(s);
		return -1;
	}
	if (lstat(opt.socket_path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			logf_("%s exists and is not a socket: not touching it", opt.socket_path);
			close(s);
			return -1;
		}
		unlink(opt.socket_path); /* a stale socket of a previous run */
	}
	/* The mode comes from the umask at bind: nothing afterwards follows the path. */
	mode_t old = umask(opt.socket_gid != (gid_t)-1 ? 0117 : 0111);
	int r = bind(s, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (r == 0 && opt.socket_gid != (gid_t)-1 &&
	    lchown(opt.socket_path, (uid_t)-1, opt.socket_gid) < 0) {
		logf_("cannot give %s to group %lu: %s", opt.socket_path,
		      (unsigned long)opt.socket_gid, strerror(errno));
		unlink(opt.socket_path);
		close(s);
		return -1;
	}
	if (r < 0 || listen(s, 64) < 0) {
		logf_("cannot listen on %s: %s", opt.socket_path, strerror(errno));
		close(s);
		return -1;
	}
	*owned = 1;
	return s;
}

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif

/* --user: started by root, become user (a name, or a number for uid and gid) with no
 * supplementary groups, CAP_PERFMON alone in the permitted, effective and bounding sets, and
 * no_new_privs: what the systemd unit grants, for a host without systemd.  Returns 0 or -1
 * (logged). */
static int drop_to(const char *user)
{
	uid_t uid;
	gid_t gid;
	char *e;
	unsigned long n = strtoul(user, &e, 10);
	struct passwd *pw = NULL;

	if (*user && !*e && n > 0 && n < (unsigned long)(uid_t)-1) {
		uid = (uid_t)n;
		gid = (gid_t)n;
	} else if ((pw = getpwnam(user))) {
		uid = pw->pw_uid;
		gid = pw->pw_gid;
	} else {
		logf_("--user %s: no such user", user);
		return -1;
	}
	if (uid == 0) {
		logf_("--user %s: that is root; name an unprivileged user", user);
		return -1;
	}
	if (geteuid() != 0) {
		logf_("--user needs the helper started as root (it binds, then drops to %s)", user);
		return -1;
	}
	for (int c = 0; c < 64; c++)
		if (c != CAP_PERFMON && prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL) {
			logf_("cannot drop capability %d from the bounding set: %s", c, strerror(errno));
			return -1;
		}
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0 || setgroups(0, NULL) < 0 || setgid(gid) < 0 ||
	    setuid(uid) < 0) {
		logf_("cannot become %s (uid %lu gid %lu): %s", user, (unsigned long)uid,
		      (unsigned long)gid, strerror(errno));
		return -1;
	}
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];
	memset(d, 0, sizeof(d));
	d[CAP_PERFMON / 32].permitted = d[CAP_PERFMON / 32].effective = 1u << (CAP_PERFMON % 32);
	if (syscall(SYS_capset, &h, d) < 0 || prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0 ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		logf_("cannot keep CAP_PERFMON alone as %s: %s", user, strerror(errno));
		return -1;
	}
	if (getuid() != uid || geteuid() != uid || getgid() != gid || setuid(0) == 0) {
		logf_("still privileged after dropping to %s", user);
		return -1;
	}
	return 0;
}

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: ptrec-helper [--socket PATH] [--socket-group GROUP] [--user USER] "
	        "[--allow-bts]\n"
	        "                    [--timeout-ms N] [--max-clients N] [--max-per-uid N]\n"
	        "                    [--test-software-event [--test-delay-ms N]]\n"
	        "Opens per-thread, user-space-only Intel PT (and with --allow-bts, BTS) perf events\n"
	        "for the threads of the processes that ask, and passes them the fd.  Needs\n"
	        "CAP_PERFMON: from its systemd unit, or started as root with --user USER (binds,\n"
	        "then runs as USER with CAP_PERFMON alone).  Default socket: %s.\n"
	        "See ptrec-helper(8).\n", PTREC_HELPER_SOCKET);
}

static int parse_uint(const char *s, unsigned *out)
{
	char *e;
	errno = 0;
	unsigned long v = strtoul(s ? s : "", &e, 10);
	if (!s || !*s || *e || errno || v > UINT_MAX || *s == '-')
		return -1;
	*out = (unsigned)v;
	return 0;
}

int main(int argc, char **argv)
{
	opt.socket_path = PTREC_HELPER_SOCKET;
	opt.socket_gid = (gid_t)-1;
	opt.timeout_ms = PTREC_HELPER_TIMEOUT_MS;
	opt.max_clients = 64;
	opt.max_per_uid = 8;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--socket") && i + 1 < argc) {
			opt.socket_path = argv[++i];
		} else if (!strcmp(a, "--socket-group") && i + 1 < argc) {
			const char *g = argv[++i];
			struct group *gr = getgrnam(g);
			char *e;
			unsigned long v = strtoul(g, &e, 10);
			if (gr)
				opt.socket_gid = gr->gr_gid;
			else if (*g && !*e && v < (unsigned long)(gid_t)-1)
				opt.socket_gid = (gid_t)v;
			else {
				fprintf(stderr, "ptrec-helper: --socket-group %s: no such group\n", g);
				return 2;
			}
		} else if (!strcmp(a, "--user") && i + 1 < argc) {
			opt.user = argv[++i];
		} else if (!strcmp(a, "--allow-bts")) {
			opt.allow_bts = 1;
		} else if (!strcmp(a, "--test-software-event")) {
			opt.software = 1;
		} else if (!strcmp(a, "--timeout-ms") && i + 1 < argc) {
			if (parse_uint(argv[++i], &opt.timeout_ms) || !opt.timeout_ms)
				goto bad;
		} else if (!strcmp(a, "--max-clients") && i + 1 < argc) {
			if (parse_uint(argv[++i], &opt.max_clients) || !opt.max_clients)
				goto bad;
		} else if (!strcmp(a, "--max-per-uid") && i + 1 < argc) {
			if (parse_uint(argv[++i], &opt.max_per_uid) || !opt.max_per_uid)
				goto bad;
		} else if (!strcmp(a, "--test-delay-ms") && i + 1 < argc) {
			if (parse_uint(argv[++i], &opt.test_delay_ms))
				goto bad;
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 0;
		} else {
			goto bad;
		}
	}
	if (opt.test_delay_ms && !opt.software) {
		fprintf(stderr, "ptrec-helper: --test-delay-ms needs --test-software-event\n");
		return 2;
	}
	uid_counts = calloc(opt.max_clients, sizeof(*uid_counts));
	if (!uid_counts) {
		fprintf(stderr, "ptrec-helper: out of memory\n");
		return 1;
	}
	ptrec_pmu_read(NULL, "intel_pt", &opt.pt);
	ptrec_pmu_read(NULL, "intel_bts", &opt.bts);
	char pinning[200];
	ptrec_helper_peer_init(pinning, sizeof(pinning));

	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop; /* no SA_RESTART: accept() returns EINTR */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	int owned;
	int ls = listen_socket(&owned);
	if (ls < 0)
		return 1;
	if (opt.user && drop_to(opt.user)) {
		if (owned)
			unlink(opt.socket_path);
		return 1;
	}
	logf_("listening on %s (%s); peers pinned by %s",
	      owned ? opt.socket_path : "the socket systemd passed",
	      opt.software ? "test mode: software events" : opt.allow_bts ? "intel_pt, intel_bts"
	                                                               : "intel_pt", pinning);
	pthread_attr_t ta;
	pthread_attr_init(&ta);
	pthread_attr_setdetachstate(&ta, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&ta, 128u << 10);
	while (!stop) {
		int c = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0) {
			if (errno != EINTR && errno != ECONNABORTED)
				logf_("accept: %s", strerror(errno));
			continue;
		}
		struct conn cn = {c, 0, (uid_t)-1};
		struct ucred cr;
		socklen_t sl = sizeof(cr);
		if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cr, &sl) == 0 && sl == sizeof(cr)) {
			cn.pid = cr.pid;
			cn.uid = cr.uid;
		}
		struct timeval tv = {opt.timeout_ms / 1000, (opt.timeout_ms % 1000) * 1000};
		setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		char why[160];
		if (atomic_fetch_add(&clients, 1) >= opt.max_clients) {
			atomic_fetch_sub(&clients, 1);
			snprintf(why, sizeof(why), "busy: %u connections open (the limit), try again",
			         opt.max_clients);
			refuse_busy(&cn, why);
			continue;
		}
		unsigned held = uid_take(cn.uid);
		if (held) {
			atomic_fetch_sub(&clients, 1);
			snprintf(why, sizeof(why), "busy: uid %lu has %u connections open (the limit "
			         "per uid), try again", (unsigned long)cn.uid, held);
			refuse_busy(&cn, why);
			continue;
		}
		struct conn *heap = malloc(sizeof(*heap));
		pthread_t t;
		if (heap)
			*heap = cn;
		/* The connection's thread starts with SIGTERM and SIGINT blocked: they must reach
		 * this thread, whose accept() they interrupt. */
		sigset_t all, prev;
		sigemptyset(&all);
		sigaddset(&all, SIGTERM);
		sigaddset(&all, SIGINT);
		pthread_sigmask(SIG_BLOCK, &all, &prev);
		int started = heap && pthread_create(&t, &ta, connection, heap) == 0;
		pthread_sigmask(SIG_SETMASK, &prev, NULL);
		if (!started) {
			free(heap);
			uid_give(cn.uid);
			atomic_fetch_sub(&clients, 1);
			refuse_busy(&cn, "busy: cannot start a thread, try again");
		}
	}
	if (owned)
		unlink(opt.socket_path);
	log_gate(1);
	logf_("stopped");
	return 0;
bad:
	usage(stderr);
	return 2;
}
