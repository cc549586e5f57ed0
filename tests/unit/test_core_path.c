/* test_core_path.c — naming crash files like the kernel names core files: core_pattern
 * expansion (%p %P %i %I %e %E %t %h %u %g %s %c %%), core_uses_pid, relative patterns, pipes,
 * and the fallback name used when the core directory cannot be used. */
#include "config.h"

#include "check.h"
#include "core/safe_str.h"
#include "crash/crash.h"
#include <string.h>

static struct ptrec_core_info base(const char *pattern)
{
	struct ptrec_core_info in = {
		.pattern = pattern, .uses_pid = 0, .cwd = "/home/u/run", .pid = 4242, .tid = 4250,
		.comm = "server", .exe = "/usr/bin/server", .time = 1700000000, .hostname = "box1",
		.uid = 1000, .gid = 100, .signo = 11, .core_limit = 0,
	};
	return in;
}

static const char *expand(const struct ptrec_core_info *in)
{
	static char out[512];
	int r = ptrec_core_expand(in, out, sizeof(out));
	return r == 0 ? out : ptrec_strerror(r);
}

/* The places, in order (README "Where reports go"). */
static void test_places(void)
{
	struct ptrec_place p[PTREC_PLACE_COUNT_];
	struct ptrec_place_env env = {
		.dump_dir = "/srv/crash", .core_path = "/var/crash/core.srv.42",
		.state_dir = "/var/lib/srv:/var/lib/other", .logs_dir = "/var/log/srv", .cwd = "/",
		.xdg_state_home = "/home/u/.state", .home = "/home/u",
	};
	unsigned n = ptrec_places(&env, p);
	CHECK(n == 8);
	CHECK(p[0].kind == PTREC_PLACE_DIR && !strcmp(p[0].path, "/srv/crash") && !p[0].shared);
	CHECK(p[1].kind == PTREC_PLACE_CORE && !strcmp(p[1].path, "/var/crash/core.srv.42"));
	CHECK(p[2].kind == PTREC_PLACE_STATE && !strcmp(p[2].path, "/var/lib/srv"));
	CHECK(p[3].kind == PTREC_PLACE_LOGS && !strcmp(p[3].path, "/var/log/srv"));
	CHECK(p[4].kind == PTREC_PLACE_CWD && !strcmp(p[4].path, "/"));
	CHECK(p[5].kind == PTREC_PLACE_HOME && !strcmp(p[5].path, "/home/u/.state/ptrec"));
	CHECK(p[6].kind == PTREC_PLACE_VAR_TMP && !strcmp(p[6].path, "/var/tmp") && p[6].shared);
	CHECK(p[7].kind == PTREC_PLACE_TMP && !strcmp(p[7].path, "/tmp") && p[7].shared);

	/* Unset variables drop their place; a relative XDG_STATE_HOME falls back to $HOME;
	 * HOME=/ (daemons) is no home. */
	struct ptrec_place_env bare = {.cwd = "/run", .xdg_state_home = "rel", .home = "/home/u"};
	n = ptrec_places(&bare, p);
	CHECK(n == 4);
	CHECK(p[0].kind == PTREC_PLACE_CWD);
	CHECK(p[1].kind == PTREC_PLACE_HOME && !strcmp(p[1].path, "/home/u/.local/state/ptrec"));
	bare.home = "/";
	CHECK(ptrec_places(&bare, p) == 3);
	CHECK_STR(ptrec_place_name(PTREC_PLACE_STATE), "STATE_DIRECTORY");
}

/* mountinfo lines (proc(5)): systemd's PrivateTmp= bind mounts, others, malformed ones. */
static void test_mountinfo(void)
{
	static const char priv[] = "812 790 254:0 /tmp/systemd-private-0123abcd-nginx.service-XyZ/tmp "
	                           "/var/tmp rw,nosuid,nodev shared:1 - ext4 /dev/vda rw\n";
	static const char host[] = "27 1 254:0 / /var/tmp rw,relatime - ext4 /dev/vda rw";
	static const char tmpfs[] = "30 27 0:40 / /tmp rw - tmpfs tmpfs rw";
	static const char other[] = "31 27 0:41 /systemd-private-x /srv rw - tmpfs tmpfs rw";

	CHECK(ptrec_mountinfo_private(priv, strlen(priv), "/var/tmp") == 1);
	CHECK(ptrec_mountinfo_private(priv, strlen(priv), "/tmp") == -1);
	CHECK(ptrec_mountinfo_private(host, strlen(host), "/var/tmp") == 0);
	CHECK(ptrec_mountinfo_private(tmpfs, strlen(tmpfs), "/tmp") == 0);
	CHECK(ptrec_mountinfo_private(other, strlen(other), "/tmp") == -1);
	/* The mount point must match whole; a line cut before it says nothing. */
	CHECK(ptrec_mountinfo_private("1 2 0:1 / /var/tmpx rw", 22, "/var/tmp") == -1);
	CHECK(ptrec_mountinfo_private("1 2 0:1 /systemd-private-a", 26, "/tmp") == -1);
	CHECK(ptrec_mountinfo_private("", 0, "/tmp") == -1);
	CHECK(ptrec_mountinfo_private("1 2 0:1 /systemd-private-a /tmp", 31, "/tmp") == 1);
}

int main(void)
{
	test_places();
	test_mountinfo();
	struct ptrec_core_info in;

	/* A plain relative pattern lands in the process's cwd. */
	in = base("core");
	CHECK_STR(expand(&in), "/home/u/run/core");
	/* core_uses_pid appends .PID when the pattern has no %p ... */
	in.uses_pid = 1;
	CHECK_STR(expand(&in), "/home/u/run/core.4242");
	/* ... and not when it has one. */
	in = base("/var/crash/core.%e.%p.%t");
	in.uses_pid = 1;
	CHECK_STR(expand(&in), "/var/crash/core.server.4242.1700000000");
	/* Every specifier. */
	in = base("/c/%p-%P-%i-%I-%u-%g-%s-%t-%h-%e-%E-%%");
	CHECK_STR(expand(&in), "/c/4242-4242-4250-4250-1000-100-11-1700000000-box1-server-"
	                       "!usr!bin!server-%");
	/* %c is the RLIMIT_CORE soft limit, RLIM_INFINITY printed as the kernel prints it. */
	in = base("/c/core.%c");
	in.core_limit = ~0ull;
	CHECK_STR(expand(&in), "/c/core.18446744073709551615");
	/* '/' in %e and %h becomes '!'. */
	in = base("/c/%e@%h");
	in.comm = "a/b";
	in.hostname = "h/x";
	CHECK_STR(expand(&in), "/c/a!b@h!x");
	/* Unknown specifiers and a lone trailing '%' vanish; the trailing newline of the proc
	 * file is not part of the name. */
	in = base("/c/core%z.%Q%\n");
	CHECK_STR(expand(&in), "/c/core.");
	/* Relative with a subdirectory, and a cwd of "/". */
	in = base("crashes/%e.core");
	CHECK_STR(expand(&in), "/home/u/run/crashes/server.core");
	in.cwd = "/";
	CHECK_STR(expand(&in), "/crashes/server.core");
	/* Pipes go to a program (systemd-coredump, apport): there is no file to sit next to. */
	in = base("|/usr/lib/systemd/systemd-coredump %P %u %g %s %t %c %h");
	CHECK(ptrec_core_expand(&in, (char[64]){0}, 64) == -PTREC_ENOSUPP);
	in = base("");
	CHECK(ptrec_core_expand(&in, (char[64]){0}, 64) == -PTREC_EINVAL);
	/* Too long for the buffer. */
	in = base("/a/very/long/pattern/%E/%E/%E");
	CHECK(ptrec_core_expand(&in, (char[32]){0}, 32) == -PTREC_EOVERFLOW);

	/* The fallback name: DIR/ptrec.COMM.PID.TIME, COMM made file-name safe. */
	char out[256];
	CHECK(ptrec_fallback_base("/tmp", "my server/x", 4242, 1700000000, out, sizeof(out)) == 0);
	CHECK_STR(out, "/tmp/ptrec.my_server_x.4242.1700000000");
	CHECK(ptrec_fallback_base("/var/crash/", "srv", 7, 5, out, sizeof(out)) == 0);
	CHECK_STR(out, "/var/crash/ptrec.srv.7.5");
	CHECK(ptrec_fallback_base("/tmp", "", 7, 5, out, sizeof(out)) == 0);
	CHECK_STR(out, "/tmp/ptrec.unknown.7.5");
	CHECK(ptrec_fallback_base("/tmp", "srv", 7, 5, out, 12) == -PTREC_EOVERFLOW);
	return check_done();
}
