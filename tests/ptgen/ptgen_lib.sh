# ptgen_lib.sh — shared by the ptgen end-to-end tests (sourced, POSIX sh).
# Needs $top_builddir (set by `make check`).

: "${top_builddir:?run me from make check (top_builddir is not set)}"
PTGEN="$top_builddir/tests/ptgen/ptgen"
PTGEN_PROGDIR="$top_builddir/tests/progs"
PTGEN_ORACLE="$top_builddir/tests/oracle/ipt_oracle"

# The traced programs (tests/progs/*.c).
PTGEN_PROGS="loops recursion indirect switch longjmp signals shared"

# Encoder settings every end-to-end test decodes, one per line: NAME|ptgen encode options.
# Between them they cover return compression on and off, PSB+ every 64 bytes to only at the
# start, short and long TNT, deferred TIPs, every IP compression, and every timing packet.
PTGEN_SETTINGS='default|
nocomp-psb64|--no-retcomp --psb-period 64
short-mix-psb300|--tnt short --ip mix --seed 3 --psb-period 300
full-timing-psb128|--ip full --timing all --psb-period 128 --defer-tip
defer-tip-psb512|--defer-tip --psb-period 512
sext-tsc-cyc-cbr|--ip sext --timing tsc,cyc,cbr --psb-period 1024
mix-mtc1-start-only|--ip mix --seed 11 --timing mtc,cyc --mtc-freq 1 --psb-period 0'

# ptgen_workdir: prints a new empty directory under $top_builddir/tests (removed by the
# caller's trap).
ptgen_workdir() {
	mkdir -p "$top_builddir/tests" && mktemp -d "$top_builddir/tests/ptgen-work.XXXXXX"
}

# ptgen_record PROG DIR: records tests/progs/PROG into DIR.  Exits the test with 77 (and the
# reason) if ptrace is not permitted, with 1 if recording fails or the program did not exit 0
# (each program checks its own results).
ptgen_record() {
	_out=$("$PTGEN" record -o "$2" -- "$PTGEN_PROGDIR/$1" 2>"$2.err")
	_rc=$?
	if [ $_rc -eq 77 ]; then
		echo "SKIP: $(cat "$2.err")"
		exit 77
	fi
	if [ $_rc -ne 0 ]; then
		echo "FAIL: ptgen record $1 exited $_rc:"; cat "$2.err"
		exit 1
	fi
	case $_out in
	*"exit status 0") ;;
	*) echo "FAIL: $1 under ptgen: $_out"; exit 1 ;;
	esac
	echo "$_out" | grep '^ptgen:'
}

# ptgen_addresses FILE: the instruction lines of a decoder's --insn output (events in
# [brackets] removed).
ptgen_addresses() {
	grep -v '^\[' "$1"
}

# ptgen_same_insns WHAT EXPECTED ACTUAL: compares two address lists; on a difference prints
# where they part and returns 1.
ptgen_same_insns() {
	if cmp -s "$2" "$3"; then
		return 0
	fi
	echo "FAIL: $1: instruction sequences differ ($(wc -l <"$2") expected, $(wc -l <"$3") decoded)"
	diff "$2" "$3" | head -n 8
	return 1
}

# ptgen_overflow_trace DIR: encodes DIR's run with an internal buffer overflow halfway: the
# packets of PTGEN_OVF_LEN instructions from instruction PTGEN_OVF_AT on are lost (OVF, FUP).
# Sets PTGEN_OVF_AT and PTGEN_OVF_LEN; writes DIR/overflow.pt.
PTGEN_OVF_LEN=300
ptgen_overflow_trace() {
	PTGEN_OVF_AT=$(( $(wc -l <"$1/truth.txt") / 2 ))
	"$PTGEN" encode --overflow "$PTGEN_OVF_AT:$PTGEN_OVF_LEN" --psb-period 1024 \
		-o "$1/overflow.pt" "$1" >/dev/null
}

# ptgen_check_overflow WHAT OUTPUT TRUTH MIN_BEFORE: a decode of ptgen_overflow_trace's trace
# must show exactly one [overflow]; before it a prefix of the ground truth at least MIN_BEFORE
# instructions long (a decoder cannot show the instructions after the last packet it got); after
# it exactly the ground truth from the first instruction after the lost ones.
ptgen_check_overflow() {
	awk '/^\[overflow/ { exit } !/^\[/' "$2" >"$2.before"
	awk 'seen && !/^\[/; /^\[overflow/ { seen = 1 }' "$2" >"$2.after"
	_n=$(grep -c '^\[overflow' "$2")
	_nb=$(wc -l <"$2.before")
	if [ "$_n" -eq 1 ] && [ "$_nb" -ge "$4" ] && head -n "$_nb" "$3" | cmp -s - "$2.before" &&
	   tail -n +$((PTGEN_OVF_AT + PTGEN_OVF_LEN + 1)) "$3" | cmp -s - "$2.after"; then
		return 0
	fi
	echo "FAIL: $1: $_n [overflow] lines, $_nb instructions before (want a prefix of the" \
		"ground truth of >= $4), then $(wc -l <"$2.after") (want the ground truth from" \
		"instruction $((PTGEN_OVF_AT + PTGEN_OVF_LEN)))"
	return 1
}

# ptgen_ring_cuts TRACE: writes TRACE.0 (all of it) and two copies cut like a wrapped ring, the
# oldest bytes starting mid-packet (TRACE.777, TRACE.HALF+3), and prints their names.
ptgen_ring_cuts() {
	_size=$(wc -c <"$1")
	for _cut in 0 777 $((_size / 2 + 3)); do
		tail -c +$((_cut + 1)) "$1" >"$1.$_cut"
		echo "$1.$_cut"
	done
}
