#!/bin/sh
# check_times.sh DIR [ENCODER OPTIONS...] — checks `ptrec decode`'s branch-event times on a ptgen
# recording: encodes DIR/run.xl with the options (add --timing ...), decodes it, and requires
# every branch event to carry a time that never goes back and stays within the synthetic clock's
# range (1% + 100 cycles allowed for estimates).  Exit 0 if so, 1 with the first offending
# line.  A tool for the timing work (not yet a make-check test: ptrec decode has no way to be
# told MTCFreq and the CPUID.15H ratio, and its estimates go back with MTC and frequent PSBs).
# Needs $PTREC_TOOL and $top_builddir.
d=${1:?usage: check_times.sh DIR [ENCODER OPTIONS...]}
shift
ptgen=${PTGEN:-$top_builddir/tests/ptgen/ptgen}
range=$("$ptgen" encode "$@" -o "$d/times.pt" "$d" | sed -n 's/.*tsc \([0-9]*\)\.\.\([0-9]*\)$/\1 \2/p')
[ -n "$range" ] || { echo "check_times: ptgen encode failed"; exit 2; }
# shellcheck disable=SC2046
"${PTREC_TOOL:?set PTREC_TOOL}" decode $(cat "$d/image.txt") "$d/times.pt" >"$d/times.events" 2>&1
bad=$(awk -v lo="${range% *}" -v hi="${range#* }" '
	{ ts = ""; for (i = 1; i <= NF; i++) if ($i ~ /^@/) ts = $i
	  if (ts == "") { print "line " NR ", no time: " $0; exit }
	  sub(/^@/, "", ts); sub(/c$/, "", ts); ts += 0
	  if (ts < prev) { print "line " NR ", time goes back: " $0; exit }
	  if (ts < lo || ts > hi + (hi - lo) / 100 + 100) {
		printf "line %d, time %.0f outside %.0f..%.0f: %s\n", NR, ts, lo, hi, $0; exit }
	  prev = ts }' "$d/times.events")
if [ -n "$bad" ]; then
	echo "check_times: $bad"
	exit 1
fi
echo "check_times: $(wc -l <"$d/times.events") branch events, times ok"
