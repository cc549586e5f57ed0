/* helper_peer.h — who is on the other end of a ptrec-helper connection, and whether the
 * thread it names is its own.  The peer is pinned by a pidfd taken when the connection is
 * accepted (SO_PEERPIDFD, else pidfd_open of the SO_PEERCRED pid), so a recycled pid cannot
 * stand in for it: every check ends by asking the pidfd whether the peer still lives. */
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

/* Fills peer for the connected socket sock.  Returns 0, or -1 with the cause in err. */
int ptrec_helper_peer_get(int sock, struct ptrec_helper_peer *peer, char *err, size_t len);

/* Closes the pidfd. */
void ptrec_helper_peer_release(struct ptrec_helper_peer *peer);

/* Returns 1 while the peer process has not been reaped (its pid cannot have been reused),
 * else 0. */
int ptrec_helper_peer_alive(const struct ptrec_helper_peer *peer);

/* Judges the text of /proc/PID/task/TID/status for a request by peer: the thread's Tgid must
 * be peer->pid, all four of its Uid and Gid values the peer's, and, for a peer other than
 * root, its permitted capabilities empty (a process that gained privilege through exec is
 * not the peer's to trace).  Returns 0 or -1 with the cause in err.  Pure. */
int ptrec_helper_status_judge(const char *status, pid_t tid,
                              const struct ptrec_helper_peer *peer, char *err, size_t len);

/* Whether thread tid belongs to the peer: reads /proc/PID/task/TID/status, judges it, and
 * checks the peer is still alive.  Returns 0 or -1 with the cause in err. */
int ptrec_helper_peer_owns(const struct ptrec_helper_peer *peer, pid_t tid, char *err,
                           size_t len);

#endif
