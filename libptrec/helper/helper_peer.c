/* helper_peer.c — the peer of a ptrec-helper connection and the ownership of the thread it
 * names (helper_peer.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "helper/helper_peer.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

/* Whether this kernel has SO_PEERPIDFD, fixed by ptrec_helper_peer_init(). */
static int have_peerpidfd = 1;

int ptrec_helper_pidfd_policy(int probe_errno, const char *release)
{
	unsigned major = 0, minor = 0;

	if (probe_errno == 0)
		return 1;
	if (probe_errno != ENOPROTOOPT)
		return 1; /* the kernel knows the option and failed for a live peer: fail closed */
	if (sscanf(release ? release : "", "%u.%u", &major, &minor) != 2)
		return 1;
	return major > 6 || (major == 6 && minor >= 5);
}

int ptrec_helper_peer_init(char *what, size_t len)
{
	struct utsname u;
	int sv[2], fd = -1, e = 0;
	socklen_t sl = sizeof(fd);

	if (uname(&u) < 0)
		snprintf(u.release, sizeof(u.release), "?");
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		e = errno;
	} else {
		if (getsockopt(sv[0], SOL_SOCKET, SO_PEERPIDFD, &fd, &sl) < 0)
			e = errno;
		else if (fd >= 0)
			close(fd);
		close(sv[0]);
		close(sv[1]);
	}
	have_peerpidfd = ptrec_helper_pidfd_policy(e, u.release);
	if (!e)
		snprintf(what, len, "SO_PEERPIDFD");
	else if (have_peerpidfd)
		snprintf(what, len, "SO_PEERPIDFD, which failed for ourselves (%s, kernel %s): "
		         "every request will be refused", strerror(e), u.release);
	else
		snprintf(what, len, "pidfd_open of the SO_PEERCRED pid (kernel %s has no "
		         "SO_PEERPIDFD)", u.release);
	return have_peerpidfd;
}

int ptrec_helper_peer_get(int sock, struct ptrec_helper_peer *peer, char *err, size_t len)
{
	struct ucred cr;
	socklen_t sl = sizeof(cr);

	peer->pidfd = -1;
	if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cr, &sl) < 0 || sl != sizeof(cr) ||
	    cr.pid <= 0) {
		snprintf(err, len, "no peer credentials (SO_PEERCRED): %s", strerror(errno));
		return -1;
	}
	peer->pid = cr.pid;
	peer->uid = cr.uid;
	peer->gid = cr.gid;
	int fd = -1;
	sl = sizeof(fd);
	if (have_peerpidfd) {
		/* Any failure means no pidfd for the peer: on 6.5..6.15 an exited peer gives
		 * EINVAL, and a pidfd_open of its pid could pin a stranger.  Refuse. */
		if (getsockopt(sock, SOL_SOCKET, SO_PEERPIDFD, &fd, &sl) < 0 || fd < 0) {
			snprintf(err, len, "your process (pid %ld) has exited (no pidfd for it: %s)",
			         (long)cr.pid, strerror(errno));
			return -1;
		}
	} else {
		/* Kernels before 6.5: the pid as at connect, pinned now.  The liveness checks
		 * after each step still catch an exit, not a reuse before this point. */
		fd = (int)syscall(SYS_pidfd_open, cr.pid, 0);
		if (fd < 0) {
			snprintf(err, len, "pidfd_open(%ld): %s", (long)cr.pid, strerror(errno));
			return -1;
		}
	}
	peer->pidfd = fd;
	return 0;
}

void ptrec_helper_peer_release(struct ptrec_helper_peer *peer)
{
	if (peer->pidfd >= 0)
		close(peer->pidfd);
	peer->pidfd = -1;
}

int ptrec_helper_peer_alive(const struct ptrec_helper_peer *peer)
{
	struct pollfd p = {.fd = peer->pidfd, .events = POLLIN};

	if (peer->pidfd < 0)
		return 0;
	/* A pidfd polls readable once its process has exited.  Not pidfd_send_signal(0): that
	 * needs the right to signal the peer, which a helper under another uid without CAP_KILL
	 * lacks (EPERM), and would read as "exited" for every other user. */
	return poll(&p, 1, 0) == 0;
}

/* The numbers after "KEY:\t" in status (up to max), or -1 if the line is missing/bad. */
static int status_nums(const char *status, const char *key, int base, uint64_t *v, int max)
{
	size_t k = strlen(key);
	const char *l = status;

	while (l && *l) {
		if (!strncmp(l, key, k) && l[k] == ':') {
			const char *p = l + k + 1;
			int n = 0;
			while (n < max) {
				char *e;
				while (*p == ' ' || *p == '\t')
					p++;
				if (*p == '\n' || !*p)
					break;
				if (*p == '-' || *p == '+')
					return -1;
				errno = 0;
				unsigned long long x = strtoull(p, &e, base);
				if (e == p || errno)
					return -1;
				v[n++] = x;
				p = e;
			}
			return n;
		}
		l = strchr(l, '\n');
		if (l)
			l++;
	}
	return -1;
}

int ptrec_helper_status_judge(const char *status, pid_t tid,
                              const struct ptrec_helper_peer *peer, char *err, size_t len)
{
	uint64_t v[4];

	if (status_nums(status, "Tgid", 10, v, 1) != 1) {
		snprintf(err, len, "thread %ld: no Tgid in its status", (long)tid);
		return -1;
	}
	if (v[0] != (uint64_t)peer->pid) {
		snprintf(err, len, "thread %ld is not in your process (pid %ld): it belongs to pid "
		         "%" PRIu64, (long)tid, (long)peer->pid, v[0]);
		return -1;
	}
	if (status_nums(status, "Uid", 10, v, 4) != 4 || v[0] != peer->uid ||
	    v[1] != peer->uid || v[2] != peer->uid || v[3] != peer->uid) {
		snprintf(err, len, "thread %ld does not run with your uid %lu alone (real, "
		         "effective, saved and fs uid must all be it)", (long)tid,
		         (unsigned long)peer->uid);
		return -1;
	}
	if (status_nums(status, "Gid", 10, v, 4) != 4 || v[0] != peer->gid ||
	    v[1] != peer->gid || v[2] != peer->gid || v[3] != peer->gid) {
		snprintf(err, len, "thread %ld does not run with your gid %lu alone", (long)tid,
		         (unsigned long)peer->gid);
		return -1;
	}
	if (peer->uid != 0) {
		if (status_nums(status, "CapPrm", 16, v, 1) != 1) {
			snprintf(err, len, "thread %ld: no CapPrm in its status", (long)tid);
			return -1;
		}
		if (v[0] != 0) {
			snprintf(err, len, "thread %ld holds capabilities (CapPrm %" PRIx64 "): a "
			         "privileged program is not traced on behalf of its user", (long)tid,
			         v[0]);
			return -1;
		}
	}
	return 0;
}

int ptrec_helper_owner_judge(uid_t uid, gid_t gid, pid_t tid,
                              const struct ptrec_helper_peer *peer, char *err, size_t len)
{
	if (peer->uid == 0 || (uid == peer->uid && gid == peer->gid))
		return 0;
	snprintf(err, len, "thread %ld: its process is not dumpable (its /proc entries belong to "
	         "uid %lu gid %lu, not to you: it called prctl(PR_SET_DUMPABLE, 0) or runs a "
	         "program you may not read), so the kernel would not let you trace it",
	         (long)tid, (unsigned long)uid, (unsigned long)gid);
	return -1;
}

int ptrec_helper_peer_owns(const struct ptrec_helper_peer *peer, pid_t tid, char *err,
                           size_t len)
{
	char path[96], buf[4096];

	if (!ptrec_helper_peer_alive(peer)) {
		snprintf(err, len, "your process (pid %ld) has exited", (long)peer->pid);
		return -1;
	}
	snprintf(path, sizeof(path), "/proc/%ld/task/%ld/status", (long)peer->pid, (long)tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, len, "thread %ld is not in your process (pid %ld)", (long)tid,
		         (long)peer->pid);
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) < 0) {
		snprintf(err, len, "thread %ld: fstat of its status: %s", (long)tid, strerror(errno));
		close(fd);
		return -1;
	}
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0) {
		snprintf(err, len, "thread %ld: its status is unreadable", (long)tid);
		return -1;
	}
	buf[n] = '\0';
	if (ptrec_helper_status_judge(buf, tid, peer, err, len) ||
	    ptrec_helper_owner_judge(st.st_uid, st.st_gid, tid, peer, err, len))
		return -1;
	/* The process read above is the peer only if the peer was not reaped meanwhile. */
	if (!ptrec_helper_peer_alive(peer)) {
		snprintf(err, len, "your process (pid %ld) has exited", (long)peer->pid);
		return -1;
	}
	return 0;
}
