#!/bin/sh
# A crash test (see tests/crash/crash_common.sh): ud2 in an anonymous executable mapping (JIT code).
# The dump keeps that mapping's bytes (a MEMORY record of kind 1 = code holding the faulting
# RIP, whose bytes there are the ud2 0f 0b).
. "$top_srcdir/tests/common/qemu_user.sh"
skip_under_qemu_user "qemu-user has no process_vm_readv: the writer copies no JIT code"
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run jit ILL 'handle_request > crash_jit'
grep -q '^memory kind 1 .* covers_rip 1 rip_bytes 0f0b$' "$work/check.txt" ||
	fail "the JIT code at the faulting RIP is not in the dump"
