#!/bin/sh
# test_decode_tail.sh — `ptrec decode --last N` decodes tail-first (the newest PSB segments
# only, joined at the PSBs between them) and must print exactly what a whole-trace decode keeps
# as its last N events (`--last N --whole`), event for event, times included: on ptgen traces
# of real programs with every encoder setting of ptgen_lib.sh (PSBs every 64 bytes to only at
# the start, timing packets, deferred TIPs), cut like a wrapped ring (the oldest bytes start in
# the middle of a packet, or the cut removes every PSB), with an internal overflow (OVF), with
# and without the clock parameters.  And it must cost what the answer needs: for a short tail
# of a long trace with frequent PSBs it decodes only part of the trace.  SKIPs only without
# ptrace.
. "$top_srcdir/tests/ptgen/ptgen_lib.sh"
: "${PTREC_TOOL:?run me from make check (PTREC_TOOL is not set)}"

work=$(ptgen_workdir) || exit 1
trap 'rm -rf "$work"' EXIT
fails=0 checks=0
clock="--tsc-ratio 2/1 --nom-freq 20"

# same PROG/NAME TRACE N [CLOCK...]: tail-first and whole agree.
same() {
	_what=$1 _t=$2 _n=$3
	shift 3
	checks=$((checks + 1))
	# shellcheck disable=SC2046
	"$PTREC_TOOL" decode "$@" --last "$_n" --tail-info $(cat "$d/image.txt") "$_t" \
		>"$_t.tail" 2>"$_t.info"
	_rt=$?
	# shellcheck disable=SC2046
	"$PTREC_TOOL" decode "$@" --last "$_n" --whole $(cat "$d/image.txt") "$_t" >"$_t.whole" 2>&1
	_rw=$?
	if [ $_rt -gt 1 ] || [ $_rw -gt 1 ]; then
		echo "FAIL: $_what: exit $_rt (tail) / $_rw (whole)"; head -n 3 "$_t.tail" "$_t.whole"
		fails=$((fails + 1))
		return 1
	fi
	if ! cmp -s "$_t.tail" "$_t.whole"; then
		echo "FAIL: $_what --last $_n $*: tail-first differs from the whole decode:"
		diff "$_t.tail" "$_t.whole" | head -n 6
		fails=$((fails + 1))
		return 1
	fi
	return 0
}

for p in loops signals; do
	d="$work/$p"
	ptgen_record "$p" "$d" || exit 1
	while IFS='|' read -r name opts; do
		t="$d/$name.pt"
		# shellcheck disable=SC2086
		"$PTGEN" encode $opts -o "$t" "$d" >/dev/null || { fails=$((fails + 1)); continue; }
		size=$(wc -c <"$t")
		for cut in 0 777 $((size / 2 + 3)); do
			c="$t.$cut"
			tail -c +$((cut + 1)) "$t" >"$c"
			for n in 1 64 2000; do
				same "$p/$name cut $cut" "$c" $n
				# shellcheck disable=SC2086
				same "$p/$name cut $cut" "$c" $n $clock
			done
		done
	done <<EOF2
$PTGEN_SETTINGS
ovf-psb200|--psb-period 200 --overflow 2000:100
EOF2
	# A long trace with frequent PSBs: the last 64 events need only its end.
	"$PTGEN" encode --repeat 20 --psb-period 256 -o "$d/long.pt" "$d" >/dev/null
	if same "$p/long" "$d/long.pt" 64; then
		size=$(wc -c <"$d/long.pt")
		read -r _ from _ bytes _ segs _ whole <"$d/long.pt.info"
		checks=$((checks + 1))
		if [ "$whole" != 0 ] || [ "$bytes" -ge $((size / 4)) ] || [ "$segs" -lt 2 ]; then
			echo "FAIL: $p/long: --last 64 decoded $bytes of $size bytes from $from in" \
				"$segs segments (whole: $whole); want under a quarter, tail-first"
			fails=$((fails + 1))
		fi
	fi
	echo "checked: $p"
done

echo "$checks checks, $fails failed"
[ $fails -eq 0 ]
