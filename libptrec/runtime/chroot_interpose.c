/* chroot_interpose.c — the interposed chroot: before the process changes its root directory
 * (vsftpd, postfix, bind, OpenSSH's privilege separation), the crash path keeps what it will
 * not find inside the new root (crash/new_root.c: /proc/self/maps open, the program's path)
 * and learns the new root's path as the host sees it, so a crash there still leaves a dump
 * that places its code, and a line naming it where the operator finds it.
 *
 * Like sigaction (signal_interpose.c) it binds before libc's and calls libc's through
 * dlsym(RTLD_NEXT); weak, so a fully static link keeps libc's (and a raw chroot system call is
 * not seen: the crash line then only says the root changed).  Nothing is done before
 * ptrec_init or after ptrec_shutdown. */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/safe_str.h"
#include "runtime/recorder.h"

typedef int (*chroot_fn)(const char *);

/* The host's path of the directory path names now: realpath, under the root already noted. */
static void host_path(const char *path, char *out, size_t cap)
{
	char real[PATH_MAX];
	struct ptrec_sbuf b;

	out[0] = '\0';
	if (!realpath(path, real))
		return;
	ptrec_sbuf_init(&b, out, cap);
	if (ptrec_root_host()[0]) {
		ptrec_sbuf_str(&b, ptrec_root_host());
		if (strcmp(real, "/") == 0)
			return;
	}
	ptrec_sbuf_str(&b, real);
	if (b.overflow)
		out[0] = '\0';
}

PTREC_API __attribute__((weak)) int chroot(const char *path)
{
	static chroot_fn real;
	char host[PTREC_PATH_MAX];
	int armed = atomic_load(&ptrec_crash.armed);

	if (!real)
		real = (chroot_fn)dlsym(RTLD_NEXT, "chroot");
	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	if (!armed)
		return real(path);
	int e = errno;
	host_path(path, host, sizeof(host));
	ptrec_root_note(NULL, 0);
	errno = e;
	int r = real(path);
	if (r == 0) {
		e = errno;
		ptrec_root_note(host[0] ? host : NULL, 1);
		errno = e;
	}
	return r;
}
