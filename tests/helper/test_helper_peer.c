/* test_helper_peer.c — ptrec-helper's judgement of a thread's /proc status for a peer: the
 * thread must be in the peer's process and run with the peer's uid and gid alone, a
 * non-root peer's thread must hold no capabilities, and its process must be dumpable (the
 * owner of its /proc entries is the peer's). */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "check.h"
#include "helper/helper_peer.h"

static const struct ptrec_helper_peer peer = {.pid = 4000, .uid = 1000, .gid = 100, .pidfd = -1};

/* A status text of thread `tid` in process tgid with the four uids, four gids and CapPrm. */
static const char *status(char *buf, size_t len, long tgid, const char *uids, const char *gids,
                          const char *capprm)
{
	snprintf(buf, len, "Name:\tserver\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t%ld\n"
	         "Ngid:\t0\nPid:\t4001\nPPid:\t1\nTracerPid:\t0\nUid:\t%s\nGid:\t%s\n"
	         "FDSize:\t64\nGroups:\t100\nCapInh:\t0000000000000000\nCapPrm:\t%s\n"
	         "CapEff:\t%s\n", tgid, uids, gids, capprm, capprm);
	return buf;
}

static int judge(const char *text, const struct ptrec_helper_peer *p, char *err, size_t len)
{
	return ptrec_helper_status_judge(text, 4001, p, err, len);
}

int main(void)
{
	char buf[1024], err[256];
	const char *same = "1000\t1000\t1000\t1000", *gsame = "100\t100\t100\t100";
	const char *nocap = "0000000000000000";

	/* the peer's own thread, plain */
	CHECK(judge(status(buf, sizeof(buf), 4000, same, gsame, nocap), &peer, err,
	            sizeof(err)) == 0);
	/* another process's thread */
	CHECK(judge(status(buf, sizeof(buf), 4002, same, gsame, nocap), &peer, err,
	            sizeof(err)) == -1);
	CHECK_STR(err, "thread 4001 is not in your process (pid 4000): it belongs to pid 4002");
	/* the peer exec'd a setuid-root program after connecting: euid and saved uid 0 */
	CHECK(judge(status(buf, sizeof(buf), 4000, "1000\t0\t0\t0", gsame, nocap), &peer, err,
	            sizeof(err)) == -1);
	CHECK(strstr(err, "does not run with your uid 1000 alone") != NULL);
	/* a setgid program */
	CHECK(judge(status(buf, sizeof(buf), 4000, same, "100\t42\t42\t42", nocap), &peer, err,
	            sizeof(err)) == -1);
	CHECK(strstr(err, "does not run with your gid 100 alone") != NULL);
	/* a program with file capabilities, same uid */
	CHECK(judge(status(buf, sizeof(buf), 4000, same, gsame, "0000000000002000"), &peer, err,
	            sizeof(err)) == -1);
	CHECK(strstr(err, "holds capabilities (CapPrm 2000)") != NULL);
	/* root asking for its own capable thread is fine */
	struct ptrec_helper_peer root = {.pid = 4000, .uid = 0, .gid = 0, .pidfd = -1};
	CHECK(judge(status(buf, sizeof(buf), 4000, "0\t0\t0\t0", "0\t0\t0\t0", "000001ffffffffff"),
	            &root, err, sizeof(err)) == 0);
	/* missing or mangled lines refuse */
	CHECK(judge("Tgid:\t4000\nGid:\t100\t100\t100\t100\n", &peer, err, sizeof(err)) == -1);
	CHECK(judge("Uid:\t1000\t1000\t1000\t1000\n", &peer, err, sizeof(err)) == -1);
	CHECK(judge(status(buf, sizeof(buf), 4000, "1000\t1000\t1000", gsame, nocap), &peer, err,
	            sizeof(err)) == -1);
	CHECK(judge(status(buf, sizeof(buf), 4000, "-1000\t1000\t1000\t1000", gsame, nocap), &peer,
	            err, sizeof(err)) == -1);
	CHECK(judge("", &peer, err, sizeof(err)) == -1);

	/* The owner of the thread's /proc entries: the peer's while the process is dumpable,
	 * root's when it is not (PR_SET_DUMPABLE 0, an execute-only or setuid program). */
	CHECK(ptrec_helper_owner_judge(1000, 100, 4001, &peer, err, sizeof(err)) == 0);
	CHECK(ptrec_helper_owner_judge(0, 0, 4001, &peer, err, sizeof(err)) == -1);
	CHECK(strstr(err, "thread 4001: its process is not dumpable") != NULL);
	CHECK(ptrec_helper_owner_judge(1000, 0, 4001, &peer, err, sizeof(err)) == -1);
	/* root's own non-dumpable process: the kernel lets root trace it, so does the helper */
	CHECK(ptrec_helper_owner_judge(0, 0, 4001, &root, err, sizeof(err)) == 0);

	/* Whether SO_PEERPIDFD exists: the probe decides; only ENOPROTOOPT before 6.5 says no. */
	CHECK(ptrec_helper_pidfd_policy(0, "4.19.0") == 1);         /* a backport */
	CHECK(ptrec_helper_pidfd_policy(ENOPROTOOPT, "6.1.0-13-amd64") == 0);
	CHECK(ptrec_helper_pidfd_policy(ENOPROTOOPT, "5.14.0-427.el9.x86_64") == 0);
	CHECK(ptrec_helper_pidfd_policy(ENOPROTOOPT, "6.5.0") == 1);
	CHECK(ptrec_helper_pidfd_policy(ENOPROTOOPT, "7.0") == 1);
	CHECK(ptrec_helper_pidfd_policy(ENOPROTOOPT, "garbage") == 1);
	CHECK(ptrec_helper_pidfd_policy(EINVAL, "6.8.0-31-generic") == 1); /* fail closed */
	CHECK(ptrec_helper_pidfd_policy(EINVAL, "5.10.0") == 1);
	return check_done();
}
