/* helper_client.c — asks ptrec-helper for a perf event fd over its unix socket
 * (helper_client.h has the protocol).  Normal context only. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "capture/helper_client.h"
#include "ptrec.h"

#ifndef PTREC_HELPER_SOCKET
#define PTREC_HELPER_SOCKET "/run/ptrec/helper.sock"
#endif
#define ANON_INODE_FS_MAGIC 0x09041934 /* linux/magic.h: anon_inodefs, home of perf events */

/* A helper that let an exchange time out is not asked again for a while (per socket path),
 * so that a silent one costs one bounded wait, not one per new thread. */
static pthread_mutex_t quiet_lock = PTHREAD_MUTEX_INITIALIZER;
static char quiet_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
static struct timespec quiet_until;

static long long now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Returns 1 (with the reason) while path is in its quiet period after a timeout. */
static int quiet_now(const char *path, char *reason, size_t len)
{
	long long left = 0;
	pthread_mutex_lock(&quiet_lock);
	if (!strcmp(quiet_path, path))
		left = (long long)quiet_until.tv_sec * 1000 + quiet_until.tv_nsec / 1000000 - now_ms();
	pthread_mutex_unlock(&quiet_lock);
	if (left <= 0)
		return 0;
	snprintf(reason, len, "ptrec-helper at %s did not answer within %u ms lately: not asked "
	         "again for %lld ms", path, PTREC_HELPER_CLIENT_MS, left);
	return 1;
}

static void quiet_start(const char *path)
{
	long long until = now_ms() + PTREC_HELPER_QUIET_MS;
	pthread_mutex_lock(&quiet_lock);
	snprintf(quiet_path, sizeof(quiet_path), "%s", path);
	quiet_until.tv_sec = (time_t)(until / 1000);
	quiet_until.tv_nsec = (long)(until % 1000) * 1000000L;
	pthread_mutex_unlock(&quiet_lock);
}

/* Sets both socket timeouts to what is left before deadline (ms, CLOCK_MONOTONIC).  Returns 0,
 * or -1 once the deadline has passed. */
static int bound_by(int s, long long deadline)
{
	long long left = deadline - now_ms();
	if (left <= 0)
		return -1;
	struct timeval tv = {(time_t)(left / 1000), (suseconds_t)(left % 1000) * 1000};
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	return 0;
}

void ptrec_helper_socket_dir(const char *path, char *dir, size_t len)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		snprintf(dir, len, ".");
	else if (slash == path)
		snprintf(dir, len, "/");
	else
		snprintf(dir, len, "%.*s", (int)(slash - path), path);
}

int ptrec_helper_socket_trusted(const char *path, char *reason, size_t len)
{
	struct stat st;
	uid_t me = geteuid();
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	size_t n = strlen(path);

	if (n >= sizeof(dir)) {
		snprintf(reason, len, "ptrec-helper socket path too long: %s", path);
		return -PTREC_EINVAL;
	}
	if (lstat(path, &st) < 0) {
		int e = errno;
		snprintf(reason, len, "no ptrec-helper at %s: %s", path, strerror(e));
		return e == ENOENT || e == ENOTDIR ? -PTREC_ENOSUPP : -PTREC_EIO;
	}
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(reason, len, "no ptrec-helper at %s: not a socket", path);
		return -PTREC_ENOSUPP;
	}
	if (st.st_uid != 0 && st.st_uid != me) {
		snprintf(reason, len, "not asking the ptrec-helper socket %s: it belongs to uid %lu, "
		         "neither root nor you (uid %lu), so anyone could be listening there", path,
		         (unsigned long)st.st_uid, (unsigned long)me);
		return -PTREC_EPERM;
	}
	ptrec_helper_socket_dir(path, dir, sizeof(dir));
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		snprintf(reason, len, "no ptrec-helper at %s: its directory %s is unusable", path, dir);
		return -PTREC_ENOSUPP;
	}
	if (st.st_uid != 0 && st.st_uid != me) {
		snprintf(reason, len, "not asking the ptrec-helper socket %s: its directory %s "
		         "belongs to uid %lu, neither root nor you (uid %lu), who could put another "
		         "socket there", path, dir, (unsigned long)st.st_uid, (unsigned long)me);
		return -PTREC_EPERM;
	}
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)) {
		snprintf(reason, len, "not asking the ptrec-helper socket %s: its directory %s "
		         "(mode %04o) is writable by others, who could put another socket there",
		         path, dir, (unsigned)(st.st_mode & 07777));
		return -PTREC_EPERM;
	}
	return 0;
}

/* Whether fd, passed as the helper's answer, is a perf event: an anon inode of anon_inodefs
 * that answers PERF_EVENT_IOC_ID (and, where /proc is mounted, is named [perf_event]).
 * Anything else (a file, a memfd, a pipe) could fault or lie when mapped.  Returns 0 or -1
 * with the reason. */
static int perf_fd_check(int fd, char *reason, size_t len)
{
	struct statfs sf;
	struct stat st;
	uint64_t id;
	char link[64], name[64];

	if (fstat(fd, &st) < 0 || fstatfs(fd, &sf) < 0 || (unsigned long)sf.f_type !=
	    ANON_INODE_FS_MAGIC || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) {
		snprintf(reason, len, "ptrec-helper passed an fd that is not a perf event (not an "
		         "anonymous inode): not used");
		return -1;
	}
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, name, sizeof(name) - 1);
	if (n > 0) {
		name[n] = '\0';
		if (strcmp(name, "anon_inode:[perf_event]")) {
			snprintf(reason, len, "ptrec-helper passed an fd that is not a perf event (%s): "
			         "not used", name);
			return -1;
		}
	}
	if (ioctl(fd, PERF_EVENT_IOC_ID, &id) < 0) {
		snprintf(reason, len, "ptrec-helper passed an fd that is not a perf event "
		         "(PERF_EVENT_IOC_ID: %s): not used", strerror(errno));
		return -1;
	}
	return 0;
}

const char *ptrec_helper_socket(void)
{
#ifdef HAVE_SECURE_GETENV
	const char *s = secure_getenv("PTREC_HELPER");
#else
	const char *s = getenv("PTREC_HELPER");
#endif

	if (s && !strcmp(s, "off"))
		return NULL;
	return s && *s ? s : PTREC_HELPER_SOCKET;
}

/* Reads "KEY=0xHEX" / "KEY=DEC" at *p (advancing past it and one space).  Returns 1 if KEY
 * matched and the number parsed. */
static int take_u64(const char **p, const char *end, const char *key, uint64_t *out)
{
	size_t k = strlen(key);
	const char *s = *p;
	char num[32];
	size_t n = 0;

	if ((size_t)(end - s) <= k || memcmp(s, key, k) || s[k] != '=')
		return 0;
	s += k + 1;
	while (s < end && *s != ' ' && n < sizeof(num) - 1)
		num[n++] = *s++;
	num[n] = '\0';
	if (!n || (s < end && *s != ' '))
		return 0;
	char *e;
	errno = 0;
	unsigned long long v = strtoull(num, &e, 0);
	if (*e || errno || num[0] == '-')
		return 0;
	*out = v;
	*p = s < end ? s + 1 : s;
	return 1;
}

int ptrec_helper_reply_parse(const char *msg, size_t len, struct ptrec_helper_event *ev,
                             char *reason, size_t reason_len)
{
	const char *end = msg + len;
	static const char refused[] = "refused: ";
	uint64_t mtc = 0;

	if (reason_len)
		reason[0] = '\0';
	if (len && msg[len - 1] == '\n')
		end--;
	if ((size_t)(end - msg) >= sizeof(refused) - 1 &&
	    !memcmp(msg, refused, sizeof(refused) - 1)) {
		size_t n = (size_t)(end - msg) - (sizeof(refused) - 1);
		if (reason_len) {
			if (n >= reason_len)
				n = reason_len - 1;
			memcpy(reason, msg + sizeof(refused) - 1, n);
			reason[n] = '\0';
		}
		return -PTREC_EPERM;
	}
	const char *p = msg;
	if (end - p < 3 || memcmp(p, "ok ", 3))
		goto bad;
	p += 3;
	if (!take_u64(&p, end, "config", &ev->config) ||
	    !take_u64(&p, end, "config1", &ev->config1) ||
	    !take_u64(&p, end, "config2", &ev->config2) ||
	    !take_u64(&p, end, "mtc_period", &mtc) || p != end || mtc > 15)
		goto bad;
	ev->mtc_period = (uint32_t)mtc;
	return 0;
bad:
	snprintf(reason, reason_len, "unexpected reply from ptrec-helper: \"%.*s\"",
	         (int)(len > 80 ? 80 : len), msg);
	return -PTREC_EFORMAT;
}

/* Connects to the helper at a trusted path, bounded by deadline.  Returns the socket or a
 * negative code with reason. */
static int helper_connect(const char *path, long long deadline, int may_quiet, char *reason,
                          size_t len)
{
	struct sockaddr_un sa;
	size_t n = strlen(path);

	int rc = ptrec_helper_socket_trusted(path, reason, len);
	if (rc)
		return rc;
	if (quiet_now(path, reason, len))
		return -PTREC_EIO;
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0) {
		snprintf(reason, len, "socket(AF_UNIX): %s", strerror(errno));
		return -PTREC_EIO;
	}
	bound_by(s, deadline);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, path, n);
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;
		close(s);
		if (e == EAGAIN || e == EINPROGRESS) {
			if (may_quiet)
				quiet_start(path);
			snprintf(reason, len, "ptrec-helper at %s: no connection within %u ms", path,
			         PTREC_HELPER_CLIENT_MS);
			return -PTREC_EIO;
		}
		snprintf(reason, len, "no ptrec-helper at %s: %s", path, strerror(e));
		return e == ENOENT || e == ECONNREFUSED || e == ENOTDIR ? -PTREC_ENOSUPP
		                                                        : -PTREC_EIO;
	}
	return s;
}

/* Sends req and receives the reply into buf (NUL-terminated) and at most one passed fd into
 * *fd (-1 if none).  Returns the reply length or a negative code with reason. */
static int exchange(int s, const char *path, long long deadline, int may_quiet, const char *req,
                    char *buf, size_t buflen, int *fd, char *reason, size_t len)
{
	union {
		struct cmsghdr h;
		char space[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = {buf, buflen - 1};
	struct msghdr mh;

	*fd = -1;
	int sent = bound_by(s, deadline) == 0 && send(s, req, strlen(req), MSG_NOSIGNAL) >= 0;
	int send_errno = errno;
	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = ctl.space;
	mh.msg_controllen = sizeof(ctl.space);
	ssize_t n;
	if (!sent) {
		/* The helper may have answered ("busy") and closed before our request went: its
		 * answer is still queued for us. */
		n = recvmsg(s, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
		if (n <= 0) {
			if (send_errno == EAGAIN && may_quiet)
				quiet_start(path);
			snprintf(reason, len, "ptrec-helper: send: %s", strerror(send_errno));
			return -PTREC_EIO;
		}
	} else {
		n = bound_by(s, deadline) ? (errno = EAGAIN, -1) : recvmsg(s, &mh, MSG_CMSG_CLOEXEC);
		/* A reset (the helper closed with our request unread) is reported before an
		 * answer queued ahead of it: look once more. */
		if (n < 0 && errno == ECONNRESET)
			n = recvmsg(s, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	}
	if (n <= 0) {
		int e = errno;
		if (n < 0 && (e == EAGAIN || e == EWOULDBLOCK)) {
			if (may_quiet)
				quiet_start(path);
			snprintf(reason, len, "ptrec-helper: no reply within %u ms (not asked again for "
			         "%u s)", PTREC_HELPER_CLIENT_MS, PTREC_HELPER_QUIET_MS / 1000);
		} else {
			snprintf(reason, len, "ptrec-helper: no reply: %s",
			         n == 0 ? "connection closed" : strerror(e));
		}
		return -PTREC_EIO;
	}
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t nfd = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < nfd; i++) {
			int f;
			memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (*fd < 0)
				*fd = f;
			else
				close(f);
		}
	}
	buf[n] = '\0';
	return (int)n;
}

static int is_busy(const char *reply, int n)
{
	static const char busy[] = "refused: busy";
	return n >= (int)sizeof(busy) - 1 && !memcmp(reply, busy, sizeof(busy) - 1);
}

/* One request, with its answer in buf and a passed fd in *fd: retried while the helper
 * answers "busy", until PTREC_HELPER_CLIENT_MS have passed.  Returns the answer's length (the
 * last "refused: busy" one when time ran out) or a negative code with reason.  A helper that
 * answered "busy" is alive: running out of time after that does not silence it. */
static int ask(const char *path, const char *req, char *buf, size_t buflen, int *fd,
               char *reason, size_t len)
{
	long long deadline = now_ms() + PTREC_HELPER_CLIENT_MS;
	unsigned pause_ms = 2;
	char busy[PTREC_HELPER_MSG_MAX + 1];
	int busy_len = 0;

	for (;;) {
		*fd = -1;
		int s = helper_connect(path, deadline, !busy_len, reason, len);
		int n = s < 0 ? s
		              : exchange(s, path, deadline, !busy_len, req, buf, buflen, fd, reason, len);
		if (s >= 0)
			close(s);
		if (n < 0 && busy_len && now_ms() >= deadline) {
			memcpy(buf, busy, (size_t)busy_len + 1);
			return busy_len;
		}
		if (n < 0 || !is_busy(buf, n))
			return n;
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
		busy_len = n < (int)sizeof(busy) ? n : (int)sizeof(busy) - 1;
		memcpy(busy, buf, (size_t)busy_len);
		busy[busy_len] = '\0';
		if (now_ms() + pause_ms >= deadline)
			return n;
		/* Busy: others hold the helper for a moment; come back a little later, at a
		 * pace of our own (so that threads told "busy" together do not return together). */
		struct timespec ts = {0, (long)(pause_ms + (unsigned)(now_ms() % pause_ms)) *
		                         1000000L};
		nanosleep(&ts, NULL);
		if (pause_ms < 64)
			pause_ms *= 2;
	}
}

int ptrec_helper_open(const char *socket_path, const char *backend, pid_t tid,
                      size_t ring_size, struct ptrec_helper_event *ev, char *reason,
                      size_t reason_len)
{
	int saved = errno;
	char req[PTREC_HELPER_MSG_MAX], buf[PTREC_HELPER_MSG_MAX + 1];
	int fd, rc;

	memset(ev, 0, sizeof(*ev));
	ev->fd = -1;
	snprintf(req, sizeof(req), PTREC_HELPER_PROTO " open %s tid=%ld ring=%zu", backend,
	         (long)tid, ring_size);
	rc = ask(socket_path, req, buf, sizeof(buf), &fd, reason, reason_len);
	if (rc >= 0) {
		int busy = is_busy(buf, rc);
		rc = ptrec_helper_reply_parse(buf, (size_t)rc, ev, reason, reason_len);
		if (busy) {
			rc = -PTREC_EBUSY;
		} else if (rc == 0 && fd < 0) {
			snprintf(reason, reason_len, "ptrec-helper said ok but passed no fd");
			rc = -PTREC_EIO;
		} else if (rc == 0 && perf_fd_check(fd, reason, reason_len)) {
			rc = -PTREC_EIO;
		} else if (rc == -PTREC_EFORMAT) {
			rc = -PTREC_EIO;
		}
	}
	if (rc == 0)
		ev->fd = fd;
	else if (fd >= 0)
		close(fd);
	errno = saved;
	return rc;
}

int ptrec_helper_ping(const char *socket_path, char *reply, size_t reply_len)
{
	int saved = errno;
	char buf[PTREC_HELPER_MSG_MAX + 1];
	int fd;

	int n = ask(socket_path, PTREC_HELPER_PROTO " ping", buf, sizeof(buf), &fd, reply,
	            reply_len);
	if (fd >= 0)
		close(fd);
	errno = saved;
	if (n < 0)
		return n;
	if (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	if (n < 3 || memcmp(buf, "ok ", 3)) {
		snprintf(reply, reply_len, "%s", buf);
		return is_busy(buf, n) ? -PTREC_EBUSY : -PTREC_EPERM;
	}
	snprintf(reply, reply_len, "%s", buf + 3);
	return 0;
}

int ptrec_helper_instead(int rc, char *reason, size_t len)
{
	const char *sock = ptrec_helper_socket();
	size_t used = len ? strlen(reason) : 0;
	char why[PTREC_HELPER_MSG_MAX];

	if (!sock) {
		snprintf(reason + used, len - used, "; ptrec-helper: off (PTREC_HELPER=off)");
		return rc;
	}
	if (ptrec_helper_ping(sock, why, sizeof(why)) == 0)
		return 0;
	snprintf(reason + used, len - used, "; ptrec-helper: %s", why);
	return rc;
}
