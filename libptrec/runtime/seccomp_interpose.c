/* seccomp_interpose.c — the interposed prctl: a process that puts itself under a seccomp
 * filter (prctl PR_SET_SECCOMP: OpenSSH's preauth sandbox) may forbid the system calls of
 * libptrec's crash path, and a filter that kills on them (OpenSSH's kills on any call not on
 * its short list, even rt_sigaction and rt_sigreturn) would turn the process's crash into a
 * SIGSYS, at the path's first system call.  A process that is not dumpable then (OpenSSH's
 * [net] child: setuid, and its own PR_SET_DUMPABLE 0) would get no dump anyway: before its
 * filter goes on, libptrec shuts down in it (ptrec_shutdown: the application's crash-signal
 * dispositions and masks back in the kernel), so its crash is the kernel's and the
 * application's, as without libptrec.  A dumpable process keeps libptrec: its filter may be
 * one that traps a few calls (SECCOMP_RET_TRAP) and wants their SIGSYS recorded.
 *
 * Every other option goes to the kernel as glibc's prctl passes it (one system call, no dlsym:
 * libptrec's own prctl calls, some on the crash path, bind here and stay async-signal-safe).
 * Weak like chroot (chroot_interpose.c), so a fully static link keeps libc's; the seccomp(2)
 * system call (libseccomp's seccomp_load, systemd's SystemCallFilter= set before exec) is not
 * seen. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/recorder.h"

PTREC_API __attribute__((weak)) int prctl(int option, ...)
{
	unsigned long a[4];
	va_list ap;

	va_start(ap, option);
	for (int i = 0; i < 4; i++)
		a[i] = va_arg(ap, unsigned long); /* what glibc's prctl reads too */
	va_end(ap);
	if (option == PR_SET_SECCOMP && atomic_load(&ptrec_crash.armed) &&
	    syscall(SYS_prctl, PR_GET_DUMPABLE, 0L, 0L, 0L, 0L) == 0) {
		int e = errno;
		ptrec_shutdown();
		errno = e;
	}
	return (int)syscall(SYS_prctl, option, a[0], a[1], a[2], a[3]);
}
