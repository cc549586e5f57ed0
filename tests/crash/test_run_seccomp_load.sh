#!/bin/sh
# An unmodified program under `ptrec run` that is not dumpable (as after a setuid) and loads a
# seccomp filter through libseccomp's seccomp_load (chronyd -F 1 does), one that kills at any
# system call off a short list, then faults.  The filter would kill libptrec's crash path at
# its first system call, turning the SIGSEGV into a SIGSYS (status 159): libptrec shuts down
# in the process before the filter goes on (the interposed seccomp_load), so it dies of the
# SIGSEGV (139) as without libptrec, with nothing written.  The program declares the few
# libseccomp functions it calls (libseccomp's header is not needed) and links libseccomp.so.2.
. "$top_srcdir/tests/common/qemu_user.sh"
skip_under_qemu_user "no aarch64 libseccomp to build the test program with"
. "$top_srcdir/tests/crash/run_common.sh"
lib=
for d in /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu /usr/lib64 /lib64 /usr/lib /lib; do
	[ -f "$d/libseccomp.so.2" ] && { lib=$d/libseccomp.so.2; break; }
done
[ -n "$lib" ] || { echo "SKIP: no libseccomp.so.2 (Debian package libseccomp2)"; exit 77; }
cat >"$work/loader.c" <<'C'
#include <stdint.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

void *seccomp_init(uint32_t def_action);
int seccomp_rule_add(void *ctx, uint32_t action, int syscall, unsigned int arg_cnt, ...);
int seccomp_load(void *ctx);

static volatile int *volatile nowhere;

int main(void)
{
	static const int allowed[] = {SYS_read, SYS_write, SYS_exit, SYS_exit_group, SYS_brk,
	                              SYS_mmap, SYS_munmap, SYS_futex, SYS_rt_sigprocmask};
	void *ctx = seccomp_init(0x00000000U); /* SCMP_ACT_KILL */
	if (!ctx || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
		return 77;
	for (unsigned i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
		if (seccomp_rule_add(ctx, 0x7fff0000U /* SCMP_ACT_ALLOW */, allowed[i], 0) != 0)
			return 77;
	if (seccomp_load(ctx) != 0)
		return 77;
	*nowhere = 1;
	return 96;
}
C
# shellcheck disable=SC2086
${CC:-cc} -o "$work/loader" "$work/loader.c" "$lib" || fail "cannot build a program with libseccomp"
ptrec_run --dir "$work/dumps" -- "$work/loader"
[ "$status" -ne 77 ] || { echo "SKIP: libseccomp or the kernel refused the filter"; exit 77; }
[ "$status" -eq 139 ] ||
	fail "exit status $status, expected 139 (SIGSEGV; 159 is the filter's SIGSYS at libptrec's crash path)"
[ "$(ptrec_lines)" -eq 0 ] || fail "a ptrec line from the filtered process"
[ -z "$(ls "$work/dumps")" ] || fail "files written by the filtered process: $(ls "$work/dumps")"
echo "PASS: a process that loads a killing seccomp filter with libseccomp dies of its crash signal"
