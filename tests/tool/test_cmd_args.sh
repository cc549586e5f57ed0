#!/bin/sh
# test_cmd_args.sh — one command-line convention for every `ptrec` subcommand (tool/tool.h):
#  - every subcommand listed by `ptrec --help` takes --help and -h: its usage on stdout, exit 0;
#  - an unknown option: a message naming it and the usage on stderr, nothing on stdout, exit 2;
#  - an option that wants a value and is the last argument: "--OPT needs a value", exit 2;
#  - a value given to an option that takes none: "--OPT takes no value", exit 2;
#  - a bad value: a message naming the option, the value and what it wants, exit 2;
#  - "--opt=value" means the same as "--opt value"; numbers may be decimal or 0x hex;
#  - options and operands may come in any order; "--" ends the options, so an operand may
#    start with '-';
#  - a missing or extra operand: a message and the usage on stderr, exit 2.
. "$top_srcdir/tests/tool/tool_common.sh"

# run WANT_EXIT ARGS...: runs ptrec ARGS with stdout in $tmp/out, stderr in $tmp/err.
run() {
	want=$1
	shift
	checks=$((checks + 1))
	"$tool" "$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	[ "$got" -eq "$want" ] || fail "ptrec $*: exit $got, expected $want ($(head -c 300 "$tmp/err"))"
}
# says FILE TEXT: FILE ($tmp/out or $tmp/err) holds TEXT (a fixed string).
says() {
	grep -qF -- "$2" "$tmp/$1" || fail "ptrec $args: $1 does not say '$2': $(head -c 300 "$tmp/$1")"
}
silent() {
	[ -s "$tmp/$1" ] && fail "ptrec $args: unexpected $1: $(head -c 300 "$tmp/$1")"
}
# value_error CMD TEXT ARGS...: exit 2, "ptrec: CMD: TEXT" on stderr, nothing on stdout.
value_error() {
	cmd=$1 text=$2
	shift 2
	args="$cmd $*"
	run 2 "$cmd" "$@"
	says err "ptrec: $cmd: $text"
	silent out
}
# usage_error CMD TEXT ARGS...: the same, then CMD's usage on stderr.
usage_error() {
	value_error "$@"
	says err "usage: ptrec $1"
}
# ---- every subcommand: --help, -h, an unknown option ---------------------------------------
cmds=$("$tool" --help | sed -n '/^commands:/,/^$/s/^  \([a-z]*\) .*/\1/p')
[ -n "$cmds" ] || fail "ptrec --help lists no commands"
for cmd in $cmds; do
	args="$cmd --help"
	run 0 "$cmd" --help
	says out "usage: ptrec $cmd"
	silent err
	cp "$tmp/out" "$tmp/help"
	args="$cmd -h"
	run 0 "$cmd" -h
	cmp -s "$tmp/out" "$tmp/help" || fail "ptrec $cmd -h differs from --help"
	usage_error "$cmd" "unknown option '--no-such-option'" --no-such-option
	usage_error "$cmd" "unknown option '-Z'" -Z
done

# ---- options that want a value, given none -------------------------------------------------
for opt in format branches threads debug-dir; do
	usage_error report "--$opt needs a value" --"$opt"
done
for opt in raw elf cpu last mtc-freq tsc-ratio nom-freq; do
	usage_error decode "--$opt needs a value" --"$opt"
done
usage_error info "--root needs a value" --root
usage_error info "--ring-size needs a value" --ring-size
usage_error selftest "--trips needs a value" --trips

# ---- options that take no value, given one -------------------------------------------------
usage_error info "--json takes no value" --json=yes
usage_error packets "--sync takes no value" --sync=1 x.pt
usage_error decode "--insn takes no value" --insn=1 x.pt

# ---- bad values name the option, the value and what is wanted ------------------------------
value_error report "--format 'xml': expected text, json or trace" --format=xml d.ptrec
value_error report "--branches 'many': expected a number 0..1000000" --branches many d.ptrec
value_error report "--branches '-1': expected a number 0..1000000" --branches=-1 d.ptrec
value_error report "--threads 'some': expected all or crashed" --threads some d.ptrec
value_error decode "--last '0': expected a number 1..16777216" --last 0 t.pt
value_error decode "--mtc-freq '16': expected a number 0..15" --mtc-freq=16 t.pt
value_error decode "--tsc-ratio '3/0': expected NUM/DEN" --tsc-ratio 3/0 t.pt
value_error decode "--cpu 'six': expected FAMILY/MODEL[/STEPPING]" --cpu six t.pt
value_error info "--ring-size '3K': expected a power of two between 4K and 128M" --ring-size 3K
value_error info "--root '': expected a directory" --root=
value_error selftest "--trips '1001': expected a number 0..1000" --trips=1001

# ---- operands: missing, extra ---------------------------------------------------------------
usage_error packets "no TRACE file given"
usage_error decode "no TRACE file given" --insn
usage_error report "no DUMP given" --format json
usage_error info "unexpected argument 'extra'" --json extra
usage_error selftest "unexpected argument 'extra'" extra
value_error packets "one TRACE file only ('a.pt' and 'b.pt')" a.pt b.pt

# ---- --opt=value is --opt value; options and operands in any order; 0x numbers -------------
loop_trace
same_output() { # NAME: $tmp/out equals $tmp/NAME
	cmp -s "$tmp/out" "$tmp/$1" || fail "ptrec $args: output differs from $1"
}
args="decode --raw X --last 2 TRACE"
run 0 decode --raw "$tmp/code.bin:0x1000" --last 2 "$tmp/loop.pt"
[ "$(wc -l <"$tmp/out")" -eq 2 ] || fail "decode --last 2 printed $(wc -l <"$tmp/out") lines"
cp "$tmp/out" "$tmp/last2"
args="decode --raw=X --last=2 TRACE"
run 0 decode --raw="$tmp/code.bin:0x1000" --last=2 "$tmp/loop.pt"
same_output last2
args="decode TRACE --last=0x2 --raw X"
run 0 decode "$tmp/loop.pt" --last=0x2 --raw "$tmp/code.bin:0x1000"
same_output last2

mkdir "$tmp/root"
args="info --root DIR --ring-size 1M --json"
run 0 info --root "$tmp/root" --ring-size 1M --json
says out '"ring_size": 1048576'
cp "$tmp/out" "$tmp/info"
args="info --json --ring-size=1M --root=DIR"
run 0 info --json --ring-size=1M --root="$tmp/root"
same_output info

# A dump to report on: a snapshot of the test program of tests/crash/test_snapshot.sh.
snap=${top_builddir:-.}/tests/crash/snapshotter
if [ -x "$snap" ]; then
	mkdir "$tmp/dumps"
	PTREC_DIR="$tmp/dumps" PTREC_BACKEND=instrumented ASAN_OPTIONS=detect_leaks=0 \
		"$snap" >/dev/null 2>"$tmp/snap.err" || fail "snapshotter failed: $(cat "$tmp/snap.err")"
	set -- "$tmp"/dumps/*.snapshot.ptrec
	if [ -f "$1" ]; then
		dump=$1
		args="report DUMP --format json --threads crashed --branches 4"
		run 0 report "$dump" --format json --threads crashed --branches 4
		says out '"threads"'
		cp "$tmp/out" "$tmp/report"
		args="report --format=json --threads=crashed --branches=0x4 DUMP"
		run 0 report --format=json --threads=crashed --branches=0x4 "$dump"
		same_output report
		args="report --format text DUMP"
		run 0 report --format text "$dump"
		cmp -s "$tmp/out" "$tmp/report" && fail "report --format text printed the JSON report"
	else
		fail "the snapshotter wrote no dump in $tmp/dumps"
	fi
else
	echo "note: $snap not built; report's --opt=value not checked"
fi

# ---- "--" ends the options ---------------------------------------------------------------------
cp "$tmp/loop.pt" "$tmp/-loop.pt"
cd "$tmp" || exit 99
usage_error packets "unknown option '-l'" -loop.pt
args="packets --sync -- -loop.pt"
run 0 packets --sync -- -loop.pt
says out "psb"
cp "$tmp/out" "$tmp/packets"
args="packets -- --sync"
run 3 packets -- --sync
says err "ptrec: --sync: cannot open"
args="packets --sync loop.pt"
run 0 packets --sync loop.pt
same_output packets
args="decode --raw X --last 2 -- -loop.pt"
run 0 decode --raw "code.bin:0x1000" --last 2 -- -loop.pt
same_output last2
mkdir -- "-dumps"
args="list -- -dumps"
run 0 list -- -dumps
says err "no dumps found"
usage_error list "unknown option '-d'" -dumps

finish
