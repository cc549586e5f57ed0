/* helper_peer.h — who is on the other end of a ptrec-helper connection, and whether the
 * thread it names is its own.  The peer is pinned by a pidfd taken when the connection is
 * accepted (SO_PEERPIDFD, else, on kernels without it, pidfd_open of the SO_PEERCRED pid),
 * so a recycled pid cannot stand in for it: every check ends by asking the pidfd whether the
 * peer still lives. */
#ifndef PTREC_HELPER_PEER_H
#define PTREC_HELPER_PEER_H

#include <stddef.h>
#include <sys/types.h>

struct ptrec_helper_peer {
	pid_t pid;   /* the peer process (SO_PEERCRED, as at connect) */
	uid_t uid;   /* its uid and gid at connect */
	gid_t gid;
	int pidfd;   /* pidfd of that process, or -1 */
};

/* Whether the kernel gives a pidfd for a socket's peer (SO_PEERPIDFD), from the errno of a
 * probe on a socketpair (0: it gave one) and the kernel release: it has when the probe
 * worked, when the probe failed otherwise than ENOPROTOOPT, or when the release is 6.5 or
 * later.  Where it has, any later failure refuses the request (on 6.5..6.15 EINVAL is what an
 * exited peer returns); only where it has not does the helper fall back to pidfd_open of the
 * SO_PEERCRED pid.  Returns 1 or 0.  Pure. */
int ptrec_helper_pidfd_policy(int probe_errno, const char *release);

/* Probes SO_PEERPIDFD at start-up (ptrec_helper_pidfd_policy) and says in what how peers
 * will be pinned.  Returns the policy. */
int ptrec_helper_peer_init(char *what, size_t len);

/* Fills peer for the connected socket sock.  Returns 0, or -1 with the cause in err. */
int ptrec_helper_peer_get(int sock, struct ptrec_helper_peer *peer, char *err, size_t len);

/* Closes the pidfd. */
void ptrec_helper_peer_release(struct ptrec_helper_peer *peer);

/* Returns 1 while the peer process has not exited (so its pid cannot have been reused),
 * else 0: polls the pidfd, which needs no right to signal the peer. */
int ptrec_helper_peer_alive(const struct ptrec_helper_peer *peer);

/* Judges the text of /proc/PID/task/TID/status for a request by peer: the thread's Tgid must
 * be peer->pid, all four of its Uid and Gid values the peer's, and, for a peer other than
 * root, its permitted capabilities empty (a process that gained privilege through exec is
 * not the peer's to trace).  Returns 0 or -1 with the cause in err.  Pure. */
int ptrec_helper_status_judge(const char *status, pid_t tid,
                              const struct ptrec_helper_peer *peer, char *err, size_t len);

/* Judges the owner (uid, gid) of thread tid's /proc entries for a request by peer.  The
 * kernel gives them the process's euid and egid while it is dumpable and root's when it is
 * not (task_dump_owner: prctl(PR_SET_DUMPABLE, 0), an exec of a setuid program or of one the
 * user may not read, such as a mode 0711 binary): the same "dumpable" that ptrace_may_access
 * requires, which perf_event_open skips for a CAP_PERFMON caller like the helper.  For a peer
 * other than root the owner must be the peer's uid and gid.  Returns 0 or -1 with the cause
 * in err.  Pure. */
int ptrec_helper_owner_judge(uid_t uid, gid_t gid, pid_t tid,
                             const struct ptrec_helper_peer *peer, char *err, size_t len);

/* Whether thread tid belongs to the peer: reads /proc/PID/task/TID/status, judges it and the
 * owner of that file, and checks the peer is still alive.  Returns 0 or -1 with the cause in err. */
int ptrec_helper_peer_owns(const struct ptrec_helper_peer *peer, pid_t tid, char *err,
                           size_t len);

#endif
