# ptgen_lib.sh — shared by the ptgen end-to-end tests (sourced, POSIX sh).
# Needs $top_builddir (set by `make check`).

: "${top_builddir:?run me from make check (top_builddir is not set)}"
PTGEN="$top_builddir/tests/ptgen/ptgen"
PTGEN_PROGDIR="$top_builddir/tests/progs"
PTGEN_ORACLE="$top_builddir/tests/ipt_oracle"

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
