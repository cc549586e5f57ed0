/* seccomp_interpose.c — the interposed prctl and libseccomp's seccomp_load: a process that
 * puts itself under a seccomp filter (prctl PR_SET_SECCOMP: OpenSSH's preauth sandbox;
 * seccomp_load: chronyd -F 1, Debian's default) may forbid the system calls of libptrec's
 * crash path, and a filter that kills on them (OpenSSH's kills on any call not on its short
 * list, even rt_sigaction and rt_sigreturn) would turn the process's crash into a SIGSYS, at
 * the path's first system call.  A process that is not dumpable then (OpenSSH's [net] child,
 * chronyd: setuid) would get no dump anyway: before its filter goes on, libptrec shuts down
 * in it (ptrec_shutdown: the application's crash-signal
 * dispositions and masks back in the kernel), so its crash is the kernel's and the
 * application's, as without libptrec.  A dumpable process keeps libptrec: its filter may be
 * one that traps a few calls (SECCOMP_RET_TRAP) and wants their SIGSYS recorded.
 *
 * Every other option goes to the kernel as glibc's prctl passes it (one system call, no dlsym:
 * libptrec's own prctl calls, some on the crash path, bind here and stay async-signal-safe).
 * Weak like chroot (chroot_interpose.c), so a fully static link keeps libc's.  seccomp_load
 * calls libseccomp's through dlsym(RTLD_NEXT) (normal context; a program without libseccomp
 * never calls it).  Not seen: the seccomp(2) system call made otherwise, and filters set before
 * ptrec_init (systemd's SystemCallFilter=). */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/recorder.h"

/* Before a seccomp filter goes on: shuts libptrec down when the process is not dumpable. */
static void before_filter(void)
{
	if (atomic_load(&ptrec_crash.armed) &&
	    syscall(SYS_prctl, PR_GET_DUMPABLE, 0L, 0L, 0L, 0L) == 0) {
		int e = errno;
		ptrec_shutdown();
		errno = e;
	}
}

PTREC_API __attribute__((weak)) int prctl(int option, ...)
{
	unsigned long a[4];
	va_list ap;

	va_start(ap, option);
	for (int i = 0; i < 4; i++)
		a[i] = va_arg(ap, unsigned long); /* what glibc's prctl reads too */
	va_end(ap);
	if (option == PR_SET_SECCOMP)
		before_filter();
	return (int)syscall(SYS_prctl, option, a[0], a[1], a[2], a[3]);
}

/* libseccomp's (seccomp.h, not a dependency): loads the filter CTX into the kernel. */
int seccomp_load(void *ctx);
typedef int (*seccomp_load_fn)(void *);

PTREC_API __attribute__((weak)) int seccomp_load(void *ctx)
{
	static seccomp_load_fn real;

	if (!real)
		real = (seccomp_load_fn)dlsym(RTLD_NEXT, "seccomp_load");
	if (!real)
		return -ENOSYS; /* libseccomp's way: a negative errno */
	before_filter();
	return real(ctx);
}
