#!/bin/sh
# test_minidump_tools.sh — our minidumps (doc/minidump.md) read by the real tools: Breakpad's
# minidump_stackwalk (with symbol files from Breakpad's dump_syms) and lldb (`target create EXE
# --core FILE`, `thread backtrace all`), against our own report of the same dump.  Crashes:
# a thread of unwind_crash.c built at -O2 -fomit-frame-pointer (ptrec minidump DUMP), abort() in
# its main thread (DUMP.dmp written at crash time with PTREC_MINIDUMP=1), and plain_crasher, an
# unmodified program stripped of debug information, under `ptrec run` (PTREC_MINIDUMP=1).  Spec:
# - the crashed thread's frames are our report's unwound frames, pc for pc, in each tool (our
#   tail-call and inline frames are synthesized from DWARF and are left out of the comparison:
#   both tools show physical frames); minidump_stackwalk may go on past the frame our report
#   calls outermost (dump_syms keeps no "return address undefined" rule for _start) only with
#   frames in no module, which are counted and printed;
# - the crash reason (signal and si_code) and the crash address are the report's;
# - every thread of the dump is listed by both tools;
# - every module has its build ID: minidump_stackwalk's debug identifier equals the one
#   dump_syms computes from the file, lldb's UUID equals the file's GNU build ID.
# - an aarch64 crash (the thread case, cross-built, run under qemu-user with the aarch64
#   libptrec of PTREC_A64_BUILDDIR, as .ci/run's arm64 phase sets it; left out, saying so,
#   without it): its minidump (ARM64 context and system info, written by this build's `ptrec
#   minidump`) holds to the same spec in minidump_stackwalk (lldb is not asked: it would need
#   the aarch64 libraries of the sysroot as its own).
# Each tool's part is left out, saying so, when the tool is missing (configure:
# MINIDUMP_STACKWALK, MINIDUMP_DUMP and DUMP_SYMS from the npm package minidump@0.26.0, LLDB);
# with neither, the test SKIPs.
set -u
: "${top_srcdir:?}" "${top_builddir:?}" "${PTREC_TOOL:?}"
walk=${MINIDUMP_STACKWALK:-}
syms=${DUMP_SYMS:-}
mdump=${MINIDUMP_DUMP:-}
lldb=${LLDB:-}
[ -n "$walk" ] && { [ -z "$syms" ] || [ -z "$mdump" ]; } &&
	{ echo "note: dump_syms or minidump_dump not found: minidump_stackwalk is not run"; walk=""; }
[ -n "$walk" ] || [ -n "$lldb" ] ||
	{ echo "SKIP: neither minidump_stackwalk (npm minidump@0.26.0) nor lldb (lldb-16) found (test oracles)"; exit 77; }
[ -n "$walk" ] || echo "note: minidump_stackwalk not found: its part is not run"
[ -n "$lldb" ] || echo "note: lldb not found: its part is not run"
READELF=${READELF:-$(command -v readelf || true)}

cc=${CC:-cc}
src=$top_srcdir/tests/unwind
lib=$top_builddir/libptrec/.libs
mkdir -p "$top_builddir/tests/tmp"
work=$(mktemp -d "$top_builddir/tests/tmp/minidump.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT
export ASAN_OPTIONS="handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:handle_abort=0:detect_leaks=0:allow_user_segv_handler=1"
export PTREC_BACKEND=none PTREC_SYSLOG=none PTREC_REPORT_TIMEOUT_MS=60000
unset PTREC_RING_SIZE PTREC_FLAGS PTREC_MINIDUMP PTREC_DIR PTREC_PRELOAD LD_PRELOAD
failed=0 cases=0 extra_total=0
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }

# ---- the crash programs -------------------------------------------------------------------
opt="-O2 -fomit-frame-pointer"
"$cc" $opt -g -shared -fPIC -o "$work/libunwind_lib.so" "$src/unwind_lib.c" || exit 99
"$cc" $opt -g -I"$top_srcdir/include" -o "$work/unwind_crash" "$src/unwind_crash.c" \
	-L"$work" -lunwind_lib -L"$lib" -lptrec -lpthread ${SAN_LDFLAGS:-} \
	-Wl,-rpath,"$work:$lib" || exit 99
plain="$work/plain_crasher"
"${OBJCOPY:-objcopy}" --strip-debug "$top_builddir/tests/crash/plain_crasher" "$plain" || exit 99
soname=$(sed -n 's/^#define PTREC_SONAME "\(.*\)"$/\1/p' "$top_builddir/config.h")
export PTREC_PRELOAD_LIB="$lib/$soname"

# The only dump in directory $1.
dump_in() { ls "$1"/*.ptrec 2>/dev/null | head -n 1; }

# Our crashed thread's physical frames (pc per line) from the text report $1.
our_frames() {
	awk '/^stack \(unwound/ { on = 1; next } on && /^  \(stops|^last / { exit }
	     on && /^  #[0-9]/ { if ($0 ~ /\[tail call\]/ || $0 ~ /\(inlined into/) next; print $2 }' "$1" |
		sed 's/^0x0*/0x/'
}

# Symbol files of every module of minidump $1 into directory $2 (dump_syms' layout).
symbol_store() {
	"$mdump" "$1" 2>/dev/null | sed -n 's/^  (code_file) *= "\(.*\)"$/\1/p' |
	while IFS= read -r f; do
		[ -f "$f" ] || continue
		"$syms" "$f" >"$2/tmp.sym" 2>/dev/null || continue
		set -- "$1" "$2" $(head -n 1 "$2/tmp.sym")
		[ "$3" = MODULE ] || continue
		mkdir -p "$2/$7/$6" && mv "$2/tmp.sym" "$2/$7/$6/$7.sym"
		echo "$f $6" >>"$2/ids"
	done
}

# check_case NAME EXE DUMP MINIDUMP [nolldb]: the spec above for one crash.
check_case() {
	name=$1 exe=$2 dump=$3 md=$4 ask_lldb=$lldb
	[ "${5:-}" != nolldb ] || ask_lldb=""
	cases=$((cases + 1))
	"$PTREC_TOOL" report "$dump" >"$work/$name.txt" 2>&1 || { fail "$name: ptrec report failed"; return; }
	our_frames "$work/$name.txt" >"$work/$name.ours"
	[ -s "$work/$name.ours" ] || { fail "$name: no unwound frames in our report"; cat "$work/$name.txt"; return; }
	nthreads=$(grep -c '^== Thread ' "$work/$name.txt")
	sig=$(sed -n 's/^event: .*signal \(SIG[A-Z0-9]*\) .*/\1/p' "$work/$name.txt")
	code=$(sed -n 's/^event: .*code \([A-Z_]*\) .*/\1/p' "$work/$name.txt")
	signum=$(sed -n 's/^event: .*signal SIG[A-Z0-9]* (\([0-9]*\)).*/\1/p' "$work/$name.txt")
	codenum=$(sed -n 's/^event: .*code [A-Z_]* (\(-*[0-9]*\)).*/\1/p' "$work/$name.txt")
	tid=$(sed -n 's/^pid: .*thread: *\([0-9]*\).*/\1/p' "$work/$name.txt")
	addr=$(sed -n 's/^fault address: \(0x[0-9a-f]*\).*/\1/p' "$work/$name.txt")
	stop=$(sed -n 's/^  (stops: \(.*\))$/\1/p' "$work/$name.txt" | head -n 1)
	echo "== $name: our report: $sig${code:+ /$code}, address ${addr:-none}, $nthreads thread(s)," \
		"$(wc -l <"$work/$name.ours") physical frame(s), stops: $stop"

	if [ -n "$walk" ]; then
		mkdir -p "$work/$name.sym"
		symbol_store "$md" "$work/$name.sym"
		"$walk" "$md" "$work/$name.sym" >"$work/$name.walk" 2>"$work/$name.walk.err" ||
			{ fail "$name: minidump_stackwalk failed"; tail "$work/$name.walk.err"; }
		"$walk" -m "$md" "$work/$name.sym" >"$work/$name.walkm" 2>/dev/null
		# crash reason and address
		# (Breakpad names si_code for the fault signals only: "SIGSEGV /SEGV_MAPERR", "SIGABRT")
		reason=$(sed -n 's/^Crash reason: *//p' "$work/$name.walk")
		case "$reason" in
		"$sig"|"$sig /$code") ;;
		*) fail "$name: minidump_stackwalk's crash reason '$reason', ours $sig /$code" ;;
		esac
		# the exception stream itself: signal, si_code (as 32 bits) and thread
		mflags=$("$mdump" "$md" 2>/dev/null | sed -n 's/^  exception_record.exception_flags *= //p')
		mcode=$("$mdump" "$md" 2>/dev/null | sed -n 's/^  exception_record.exception_code *= //p')
		mtid=$("$mdump" "$md" 2>/dev/null | sed -n '/^MDException/,/^$/s/^  thread_id *= //p')
		[ "$((mflags))" = "$((codenum & 0xffffffff))" ] ||
			fail "$name: the exception's flags are $mflags, our si_code $codenum"
		[ "$((mcode))" = "$signum" ] || fail "$name: the exception's code is $mcode, our signal $signum"
		[ "$((mtid))" = "$tid" ] || fail "$name: the exception's thread is $mtid, ours $tid"
		waddr=$(sed -n 's/^Crash address: *//p' "$work/$name.walk")
		[ "$waddr" = "${addr:-0x0}" ] || fail "$name: minidump_stackwalk's crash address $waddr, ours ${addr:-0x0 (none)}"
		# every thread
		wthreads=$(grep -c '^Thread [0-9]' "$work/$name.walk")
		[ "$wthreads" = "$nthreads" ] || fail "$name: minidump_stackwalk lists $wthreads thread(s), the dump $nthreads"
		# the crashed thread's frames: rip (pc on arm64) of each frame
		awk '/^Thread [0-9]+ \(crashed\)/ { on = 1; next } on && /^Thread / { exit }
		     on && /^ *[0-9]+  / { mod = ($2 ~ /!/) ? "m" : "-" }
		     on && /(rip|pc) = / { for (i = 1; i <= NF; i++) if ($i == "rip" || $i == "pc") print $(i + 2), mod }' \
			"$work/$name.walk" | sed 's/^0x0*/0x/' >"$work/$name.walkframes"
		cut -d' ' -f1 "$work/$name.walkframes" | head -n "$(wc -l <"$work/$name.ours")" >"$work/$name.walkhead"
		if cmp -s "$work/$name.ours" "$work/$name.walkhead"; then
			extra=$(tail -n +"$(($(wc -l <"$work/$name.ours") + 1))" "$work/$name.walkframes")
			n_extra=$(printf '%s' "$extra" | grep -c . || true)
			if [ "$n_extra" -gt 0 ]; then
				if printf '%s\n' "$extra" | grep -q ' m$' || [ "$stop" = "${stop#outermost frame}" ]; then
					fail "$name: minidump_stackwalk has $n_extra frame(s) past ours in a module, or ours did not reach the outermost frame"
					printf '%s\n' "$extra"
				else
					extra_total=$((extra_total + n_extra))
					echo "   minidump_stackwalk: equal frame for frame ($(wc -l <"$work/$name.ours")), then $n_extra frame(s) in no module past our outermost: $(printf '%s' "$extra" | tr '\n' ' ')"
				fi
			else
				echo "   minidump_stackwalk: equal frame for frame ($(wc -l <"$work/$name.ours"))"
			fi
		else
			fail "$name: minidump_stackwalk's crashed-thread frames differ from ours"
			echo "   ours:"; sed 's/^/     /' "$work/$name.ours"
			echo "   minidump_stackwalk:"; sed 's/^/     /' "$work/$name.walkframes"
		fi
		# every module has its build ID: the debug identifier dump_syms computes from the file
		nmods=0
		while IFS='|' read -r kind mname _ _ mid _; do
			[ "$kind" = Module ] || continue
			nmods=$((nmods + 1))
			fid=$(awk -v n="$mname" '{ f = $1; sub(/.*\//, "", f) } f == n { print $2; exit }' "$work/$name.sym/ids" 2>/dev/null)
			[ -n "$mid" ] || fail "$name: module $mname has no debug identifier in the minidump"
			[ -z "$fid" ] || [ "$fid" = "$mid" ] ||
				fail "$name: module $mname: minidump_stackwalk's identifier $mid, dump_syms' of the file $fid"
		done <"$work/$name.walkm"
		[ "$nmods" -gt 0 ] || fail "$name: minidump_stackwalk lists no module"
	fi

	if [ -n "$ask_lldb" ]; then
		timeout 300 "$lldb" --batch -o "target create \"$exe\" --core \"$md\"" \
			-o 'thread backtrace all' -o 'image list' >"$work/$name.lldb" 2>&1 ||
			{ fail "$name: lldb failed"; tail -n 20 "$work/$name.lldb"; }
		grep -q "stop reason = signal $sig" "$work/$name.lldb" ||
			fail "$name: lldb's stop reason is not signal $sig: $(grep 'stop reason' "$work/$name.lldb" | head -n 1)"
		lthreads=$(grep -c '^[* ] thread #[0-9]' "$work/$name.lldb")
		[ "$lthreads" = "$nthreads" ] || fail "$name: lldb lists $lthreads thread(s), the dump $nthreads"
		awk '/^\* thread #/ { on = 1; next } on && /^  [ *]? *thread #|^\(lldb\)/ { exit }
		     on && /frame #[0-9]+: 0x/ { if ($0 ~ /\[inlined\]/) next;
		        for (i = 1; i <= NF; i++) if ($i ~ /^0x/) { print $i; break } }' \
			"$work/$name.lldb" | sed 's/^0x0*/0x/' >"$work/$name.lldbframes"
		if cmp -s "$work/$name.ours" "$work/$name.lldbframes"; then
			echo "   lldb: equal frame for frame ($(wc -l <"$work/$name.ours"))"
		else
			fail "$name: lldb's crashed-thread frames differ from ours"
			echo "   ours:"; sed 's/^/     /' "$work/$name.ours"
			echo "   lldb:"; sed 's/^/     /' "$work/$name.lldbframes"
		fi
		# every image has a UUID equal to its file's GNU build ID
		if [ -n "$READELF" ]; then
			sed -n 's/^\[ *[0-9]*\] \([0-9A-F-]*\) 0x[0-9a-f]* \(.*[^ ]\) *$/\1 \2/p' "$work/$name.lldb" >"$work/$name.images"
			[ -s "$work/$name.images" ] || fail "$name: lldb lists no image"
			while read -r uuid path; do
				bid=$("$READELF" -n "$path" 2>/dev/null | sed -n 's/.*Build ID: *//p' | head -n 1)
				[ -n "$bid" ] || continue
				got=$(printf '%s' "$uuid" | tr -d '-' | tr 'A-F' 'a-f')
				[ "$got" = "$bid" ] || fail "$name: lldb's UUID of $path is $uuid, its build ID $bid"
			done <"$work/$name.images"
		fi
	fi
}

# ---- 1. a crash in a thread, at -O2 without frame pointers: `ptrec minidump DUMP` ------------
mkdir "$work/thread"
(cd "$work/thread" && PTREC_DIR="$work/thread" PTREC_REPORT_TIMEOUT_MS=0 \
	"$work/unwind_crash" thread >/dev/null 2>&1)
d=$(dump_in "$work/thread")
[ -n "$d" ] || { echo "FAIL: the thread crash left no dump"; exit 1; }
"$PTREC_TOOL" minidump "$d" -o "$work/thread.dmp" || fail "ptrec minidump failed"
check_case thread "$work/unwind_crash" "$d" "$work/thread.dmp"

# ---- 2. abort(): DUMP.dmp written at crash time by the report child (PTREC_MINIDUMP=1) -------
mkdir "$work/abort"
(cd "$work/abort" && PTREC_DIR="$work/abort" PTREC_MINIDUMP=1 \
	"$work/unwind_crash" abort >/dev/null 2>"$work/abort.err")
d=$(dump_in "$work/abort")
[ -n "$d" ] || { echo "FAIL: abort left no dump"; cat "$work/abort.err"; exit 1; }
[ -f "$d.dmp" ] || { fail "PTREC_MINIDUMP=1 wrote no $d.dmp"; cat "$work/abort.err"; }
grep -q "minidump $d.dmp" "$work/abort.err" || fail "the crash line does not name the minidump: $(cat "$work/abort.err")"
[ ! -f "$d.dmp" ] || check_case abort "$work/unwind_crash" "$d" "$d.dmp"

# ---- 3. an unmodified, stripped program under `ptrec run` (PTREC_MINIDUMP=1) ------------------
mkdir "$work/run"
# A sanitizer build's libptrec.so needs the ASan runtime first in the initial library list,
# which an unsanitized program only gets from LD_PRELOAD (as in tests/crash/run_common.sh).
san_preload=""
if [ -n "${SAN_LDFLAGS:-}" ]; then
	san_preload=$(${CC:-cc} -print-file-name=libasan.so)
	[ -f "$san_preload" ] || fail "sanitizer build but no libasan.so from ${CC:-cc}"
fi
(cd "$work/run" && [ -z "$san_preload" ] || export LD_PRELOAD="$san_preload"
	PTREC_MINIDUMP=1 "$PTREC_TOOL" run --dir "$work/run" -- "$plain" segv \
	>/dev/null 2>"$work/run.err")
d=$(dump_in "$work/run")
[ -n "$d" ] || { echo "FAIL: ptrec run left no dump"; cat "$work/run.err"; exit 1; }
[ -f "$d.dmp" ] || { fail "PTREC_MINIDUMP=1 under ptrec run wrote no $d.dmp"; cat "$work/run.err"; }
[ ! -f "$d.dmp" ] || check_case run "$plain" "$d" "$d.dmp"

# ---- 4. an aarch64 crash (qemu-user), its minidump written here: ARM64 context ------------------
a64=${PTREC_A64_BUILDDIR:-}
xcc=$(command -v aarch64-linux-gnu-gcc || true)
if [ -z "$walk" ]; then
	echo "note: aarch64 case not run: it is checked with minidump_stackwalk"
elif [ -z "$a64" ] || [ ! -e "$a64/libptrec/.libs/libptrec.so" ] || [ -z "$xcc" ]; then
	echo "note: aarch64 case not run: needs PTREC_A64_BUILDDIR (an aarch64 build tree: .ci/run's" \
		"arm64 phase) and aarch64-linux-gnu-gcc"
else
	mkdir "$work/a64"
	"$xcc" $opt -g -shared -fPIC -o "$work/a64/libunwind_lib.so" "$src/unwind_lib.c" &&
	"$xcc" $opt -g -I"$top_srcdir/include" -o "$work/a64/unwind_crash" "$src/unwind_crash.c" \
		-L"$work/a64" -lunwind_lib -L"$a64/libptrec/.libs" -lptrec -lpthread \
		-Wl,-rpath,"$work/a64:$a64/libptrec/.libs" || exit 99
	(cd "$work/a64" && PTREC_DIR="$work/a64" PTREC_REPORT_TIMEOUT_MS=0 timeout 120 \
		"$work/a64/unwind_crash" thread >/dev/null 2>&1)
	d=$(dump_in "$work/a64")
	if [ -z "$d" ]; then
		fail "aarch64: the thread crash under qemu-user left no dump"
	else
		"$PTREC_TOOL" minidump "$d" -o "$work/a64.dmp" || fail "aarch64: ptrec minidump failed"
		cpu=$("$walk" -m "$work/a64.dmp" 2>/dev/null | sed -n 's/^CPU|\([^|]*\)|.*/\1/p')
		[ "$cpu" = arm64 ] || fail "aarch64: minidump_stackwalk reads the CPU as '$cpu', not arm64"
		check_case a64 "$work/a64/unwind_crash" "$d" "$work/a64.dmp" nolldb
	fi
fi

echo "cases: $cases; frames minidump_stackwalk shows past our outermost (in no module): $extra_total"
[ "$failed" = 0 ] || { echo "FAIL: $failed check(s) failed"; exit 1; }
echo "PASS"
