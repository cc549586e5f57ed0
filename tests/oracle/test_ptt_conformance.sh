#!/bin/sh
# test_ptt_conformance.sh — conformance with libipt's public .ptt test suite (doc/conformance.md).
# Always (when yasm is there): ptt_run's own cases in tests/oracle/ptt must all match, so the
# parser, the packet encoder and the ptxed-format printer are checked.  With PTT_DIR pointing
# at a directory of .ptt files from outside (libipt's test/src; they are not in this repo), the
# whole suite runs and at least PTT_MIN (default 0) comparable cases must match ptxed's
# expected listing; the per-case table is printed.  SKIPs without yasm.
: "${top_srcdir:?run me from make check (top_srcdir is not set)}"
: "${top_builddir:?run me from make check (top_builddir is not set)}"
run="$top_builddir/tests/oracle/ptt_run"
yasm=${YASM:-}
[ -n "$yasm" ] || yasm=$(command -v yasm 2>/dev/null)
if [ -z "$yasm" ] || [ ! -x "$yasm" ]; then
	echo "SKIP: yasm is not installed (configure found none): .ptt cases cannot be assembled"
	exit 77
fi
YASM=$yasm; export YASM

own=$(ls "$top_srcdir"/tests/oracle/ptt/*.ptt | wc -l)
"$run" --min "$own" "$top_srcdir/tests/oracle/ptt" || {
	echo "FAIL: ptt_run's own cases do not all match"; exit 1; }

if [ -z "${PTT_DIR:-}" ]; then
	echo "PTT_DIR is not set: libipt's suite not run (own cases only)"
	exit 0
fi
if [ ! -d "$PTT_DIR" ]; then
	echo "FAIL: PTT_DIR=$PTT_DIR is not a directory"; exit 1
fi
"$run" --min "${PTT_MIN:-0}" "$PTT_DIR"
