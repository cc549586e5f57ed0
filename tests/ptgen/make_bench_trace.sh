#!/bin/sh
# make_bench_trace.sh OUTDIR [MIN_BYTES [ENCODER OPTIONS...]] — a PT trace of real code for
# decoder benchmarks: records tests/progs/workload under ptgen once (kept in OUTDIR/run.xl, reused
# by later calls), then encodes it repeated as many times as it takes to reach MIN_BYTES
# (default 16 MiB) into OUTDIR/trace.pt.  Prints "TRACE REPEAT BYTES INSNS": the trace, how many
# times the run is in it, its size and the instructions it holds.  The expected instruction
# sequence is OUTDIR/truth.txt repeated REPEAT times; OUTDIR/image.txt holds the --elf arguments.
# Needs $top_builddir (the build tree) or $PTGEN and $PTGEN_WORKLOAD.
set -e
out=${1:?usage: make_bench_trace.sh OUTDIR [MIN_BYTES [ENCODER OPTIONS...]]}
min=${2:-16777216}
[ $# -ge 2 ] && shift 2 || shift $#
ptgen=${PTGEN:-$top_builddir/tests/ptgen/ptgen}
prog=${PTGEN_WORKLOAD:-$top_builddir/tests/progs/workload}
mkdir -p "$out"
if [ ! -f "$out/run.xl" ] || [ "$prog" -nt "$out/run.xl" ]; then
	"$ptgen" record -o "$out" -- "$prog" >"$out/record.txt"
fi
"$ptgen" encode "$@" -o "$out/once.pt" "$out" >/dev/null
one=$(wc -c <"$out/once.pt")
n=$(( (min + one - 1) / one ))
"$ptgen" encode "$@" --repeat "$n" -o "$out/trace.pt" "$out" >/dev/null
rm -f "$out/once.pt"
echo "$out/trace.pt $n $(wc -c <"$out/trace.pt") $(( $(wc -l <"$out/truth.txt") * n ))"
