# qemu_user.sh — sourced by the shell tests: whether the programs under test run under
# qemu-user (a cross build, --host=aarch64-linux-gnu, whose programs binfmt_misc hands to
# qemu-aarch64 on an x86-64 machine; .ci/run's arm64 phase).  The Makefile exports the host
# cpu the tests were built for (PTREC_HOST_CPU); the machine they run on is `uname -m` of this
# shell, which qemu does not emulate.
#
# under_qemu_user: 0 (true) when the tests' programs are emulated.
# skip_under_qemu_user REASON: exits 77 (SKIP) with REASON when they are.
under_qemu_user() {
	[ -n "${PTREC_HOST_CPU:-}" ] && [ "$PTREC_HOST_CPU" != "$(uname -m)" ]
}
skip_under_qemu_user() {
	if under_qemu_user; then
		echo "SKIP: under qemu-user ($PTREC_HOST_CPU programs on $(uname -m)): $*"
		exit 77
	fi
}
# skip_on_aarch64 REASON: exits 77 (SKIP) with REASON when the tests were built for aarch64.
skip_on_aarch64() {
	if [ "${PTREC_HOST_CPU:-}" = aarch64 ]; then
		echo "SKIP: aarch64: $*"
		exit 77
	fi
}
