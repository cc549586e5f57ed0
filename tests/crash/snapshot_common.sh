# snapshot_common.sh — shared setup of the tests of a running process's dumps (snapshots and
# watches; sourced by tests/crash/test_snapshot*.sh and test_watch.sh).
#
# snapshot_setup NAME
#   $work: a fresh directory under tests/ (removed at exit) that is PTREC_DIR; the
#   instrumented backend on every machine; no inherited PTREC_FLAGS or snapshot limits
#   (PTREC_SNAPSHOT_INTERVAL_MS, PTREC_SNAPSHOT_MAX): each test exports what it tests.
set -u

fail() { echo "FAIL: $*"; exit 1; }

: "${top_builddir:?}"

snapshot_setup() {
	work=$(mktemp -d "$top_builddir/tests/$1.XXXXXX") || exit 99
	trap 'rm -rf "$work"' EXIT
	export PTREC_DIR="$work"
	export ASAN_OPTIONS="detect_leaks=0"
	export PTREC_BACKEND=instrumented
	unset PTREC_FLAGS PTREC_SNAPSHOT_INTERVAL_MS PTREC_SNAPSHOT_MAX
}
