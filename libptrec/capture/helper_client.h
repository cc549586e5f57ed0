/* helper_client.h — the library's side of ptrec-helper (doc/ptrec-helper.8): when the kernel
 * refuses perf_event_open (perf_event_paranoid > 2, no CAP_PERFMON), ask the helper, a small
 * privileged broker on a unix socket, to open the per-thread event and pass the fd back.
 *
 * The protocol, one SOCK_SEQPACKET message each way, printable ASCII:
 *   request  "ptrec-helper/1 open BACKEND tid=TID ring=BYTES"   (BACKEND intel_pt|intel_bts)
 *            "ptrec-helper/1 ping"
 *   reply    "ok config=0xC config1=0xC1 config2=0xC2 mtc_period=N" with the event fd attached
 *            (SCM_RIGHTS), "ok ptrec-helper VERSION events=WHAT" to a ping, or
 *            "refused: REASON".
 * The helper opens the event with attributes it chooses itself (disabled, exclude_kernel,
 * exclude_hv, pid = TID, cpu = -1, the config the library would build for BYTES); the library
 * maps the AUX ring itself, so the mlock charge stays with the caller.
 * Runs in normal context (thread attach), never in the crash path. */
#ifndef PTREC_HELPER_CLIENT_H
#define PTREC_HELPER_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PTREC_HELPER_PROTO "ptrec-helper/1"  /* first word of every request */
#define PTREC_HELPER_MSG_MAX 256u            /* longest request or reply, bytes */
#define PTREC_HELPER_TIMEOUT_MS 500u         /* the helper's bound on a silent peer */
#define PTREC_HELPER_CLIENT_MS 1000u         /* the client's bound on a whole exchange */
#define PTREC_HELPER_QUIET_MS 30000u         /* not asked again after a timeout, for this */

/* What the helper opened. */
struct ptrec_helper_event {
	int fd;               /* the perf event fd (close-on-exec), or -1 */
	uint64_t config;      /* perf_event_attr.config the helper used */
	uint64_t config1;     /* config1 */
	uint64_t config2;     /* config2 */
	uint32_t mtc_period;  /* intel_pt MTC period encoding used (0 if none) */
};

/* The socket the library would use: PTREC_HELPER (secure_getenv) when set and not "off",
 * else the build's default (configure --with-helper-socket).  Returns NULL when
 * PTREC_HELPER=off.  The pointer stays valid for the process's life. */
const char *ptrec_helper_socket(void);

/* The directory of socket path into dir ("." for a bare name, "/" for one in the root). */
void ptrec_helper_socket_dir(const char *path, char *dir, size_t len);

/* Whether the socket at path may be asked: it must be a socket owned by root or by the
 * caller (euid), in a directory owned by root or by the caller that others cannot write
 * (unless sticky), so that no other user can stand in for the helper.  Returns 0, or
 * -PTREC_ENOSUPP (nothing there), -PTREC_EPERM (not trusted), -PTREC_EINVAL / -PTREC_EIO
 * with the cause in reason. */
int ptrec_helper_socket_trusted(const char *path, char *reason, size_t len);

/* Parses a reply (len bytes, not NUL-terminated) into ev's config fields.  Returns 0 for an
 * "ok ..." reply, -PTREC_EPERM for "refused: ..." (the reason copied to reason), or
 * -PTREC_EFORMAT for anything else.  Pure. */
int ptrec_helper_reply_parse(const char *msg, size_t len, struct ptrec_helper_event *ev,
                             char *reason, size_t reason_len);

/* Asks the helper at `socket_path` to open `backend`'s ("intel_pt" / "intel_bts") event for
 * thread tid of the calling process with a ring of ring_size bytes.  The socket must pass
 * ptrec_helper_socket_trusted(), the whole exchange takes at most PTREC_HELPER_CLIENT_MS
 * (after a timeout that path is not asked again for PTREC_HELPER_QUIET_MS), and the fd passed
 * must be a perf event (anon inode [perf_event] answering PERF_EVENT_IOC_ID).  Returns 0 with
 * ev->fd open, or -PTREC_ENOSUPP (no helper listening there), -PTREC_EPERM (the helper
 * refused, or the socket is not trusted), -PTREC_EBUSY (the helper answered "refused: busy"
 * until the bound: retried meanwhile, with growing pauses), -PTREC_EIO (talk failed or timed out, or what was
 * passed is not a perf event), with the cause in reason.  Opens and closes its own socket;
 * errno is preserved. */
int ptrec_helper_open(const char *socket_path, const char *backend, pid_t tid,
                      size_t ring_size, struct ptrec_helper_event *ev, char *reason,
                      size_t reason_len);

/* Pings the helper at socket_path.  Returns 0 with its answer (e.g. "ptrec-helper 0.1.0
 * events=intel_pt,intel_bts") in reply, or a negative code as ptrec_helper_open does. */
int ptrec_helper_ping(const char *socket_path, char *reply, size_t reply_len);

/* A backend's verdict rc = -PTREC_EPERM (reason says why the kernel would refuse this
 * process) meets the helper: when ptrec_helper_socket() answers a ping, returns 0 (open
 * through the helper); else returns rc with "; ptrec-helper: WHY NOT" appended to reason. */
int ptrec_helper_instead(int rc, char *reason, size_t len);

#endif
