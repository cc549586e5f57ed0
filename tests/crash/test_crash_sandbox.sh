#!/bin/sh
# A process that is not dumpable and puts itself under a seccomp filter after ptrec_init, as
# OpenSSH's preauth child does (a short list of allowed system calls, any other kills), then
# faults.  The filter would kill libptrec's crash path at its first system call not on the
# list, turning the SIGSEGV into a SIGSYS (status 159): libptrec shuts down in the process
# before the filter goes on (it would write no dump there anyway), so it dies of the SIGSEGV
# (139) as without libptrec.  A dumpable process keeps libptrec (test_crash_sys: a filter that
# traps one call, whose SIGSYS is recorded).
. "$top_srcdir/tests/crash/hardening_common.sh"
if [ -n "${SAN_LDFLAGS:-}" ]; then
	# The sanitizer runtime intercepts prctl too and comes first in the link of the test
	# program, which takes libptrec from a static archive: libptrec's prctl is never called.
	echo "SKIP: sanitizer build (the sanitizer runtime's prctl binds before libptrec's)"
	exit 77
fi
hrun sandbox
[ "$status" -ne 77 ] || { echo "SKIP: the kernel refused the seccomp filter"; exit 77; }
[ "$status" -eq 139 ] ||
	fail "exit status $status, expected 139 (SIGSEGV; 159 is the filter's SIGSYS at libptrec's crash path)"
! grep -q '^ptrec: ' "$work/stderr" || fail "a ptrec line from the sandboxed process"
[ -z "$(ls -A "$PTREC_DIR")" ] || fail "files written by the sandboxed process: $(ls "$PTREC_DIR")"
echo "PASS: a process under a seccomp filter dies of its crash signal as without libptrec"
