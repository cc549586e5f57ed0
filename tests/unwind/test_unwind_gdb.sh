#!/bin/sh
# test_unwind_gdb.sh — the report's unwound stack against gdb's backtrace of the same process.
# unwind_crash.c (C and C++, with the shared library unwind_lib.c) is built at
# -O2 -fomit-frame-pointer (and with UNWIND_MATRIX=full also at -O0 and -O2); each scenario (a
# call chain, frames in libc and in a shared library, a crash inside a signal handler, deep
# recursion, tail calls, a tail call from a function called by an ELF alias of it, one to a
# function with a .cold part (DW_AT_ranges) and one from a .cold part, a crash in a shared
# library whose file is also mapped whole for reading, a fault where the return address is in a
# register and the frame is 0 bytes, a call
# through a wild pointer and one through a null pointer, abort(), another thread, a virtual
# call and std::sort in C++) runs under gdb, which
# stops at the fatal signal, prints its backtrace and lets the signal through to libptrec
# (gdb_unwind.py).  Spec:
# - the report never shows a frame gdb does not show;
# - the physical frames (gdb's normal and signal-trampoline frames: pc for pc) are equal in
#   every thread;
# - the tail-call frames (gdb's, synthesized from DWARF call sites: a function that jumped to
#   the frame below instead of calling it) are as many as gdb's in every thread, pc for pc
#   where they stand;
# - "equal frame for frame" (also gdb's inline frames) is counted and printed: the agreement
#   figure.
set -u
: "${top_srcdir:?}" "${top_builddir:?}" "${PTREC_TOOL:?}"
[ -n "${GDB:-}" ] || { echo "SKIP: gdb not found (test oracle)"; exit 77; }
"$GDB" -batch -nx -ex 'python print("py-ok")' 2>/dev/null | grep -q py-ok ||
	{ echo "SKIP: $GDB has no Python (needed by gdb_unwind.py)"; exit 77; }
cc=${CC:-cc}
cxx=${CXX:-}
[ -n "$cxx" ] || cxx=$(command -v g++ || command -v clang++ || true)
src=$top_srcdir/tests/unwind
lib=$top_builddir/libptrec/.libs
mkdir -p "$top_builddir/tests/tmp"
work=$(mktemp -d "$top_builddir/tests/tmp/unwind.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT
export ASAN_OPTIONS="handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:handle_abort=0:detect_leaks=0:allow_user_segv_handler=1"
export PTREC_BACKEND=none PTREC_FLAGS=4
unset PTREC_RING_SIZE

total=0 equal=0 phys=0 extra=0 failed=0 tails=0
run_one() { # VARIANT PROGRAM SCENARIO
	rm -rf "$work/d" && mkdir "$work/d"
	# The dump goes next to the core (core_pattern, relative to the cwd) or to PTREC_DIR.
	out=$(cd "$work/d" && PTREC_DIR="$work/d" timeout 120 "$GDB" -batch -nx \
		-x "$src/gdb_unwind.py" --args "$2" "$3" 2>&1 </dev/null | grep -E '^(RESULT|  gdb|  ours)')
	line=$(printf '%s\n' "$out" | grep '^RESULT')
	total=$((total + 1))
	case "$line" in
	"RESULT equal"*) equal=$((equal + 1)) ;;
	"RESULT differ"*) printf '%s %s: %s\n%s\n' "$1" "$3" "$line" \
		"$(printf '%s\n' "$out" | grep -v '^RESULT' | head -60)" ;;
	*) echo "FAIL: $1 $3: no comparison: $out"; failed=$((failed + 1)); return ;;
	esac
	p=$(printf '%s' "$line" | sed -n 's/.*physical=\([0-9]*\)\/\([0-9]*\).*/\1 \2/p')
	set -- "$1" "$2" "$3" $p
	[ "$4" = "$5" ] && phys=$((phys + 1))
	e=$(printf '%s' "$line" | sed -n 's/.*extra=\([0-9]*\).*/\1/p')
	extra=$((extra + e))
	t=$(printf '%s' "$line" | sed -n 's/.*tailcall=\([0-9]*\)\/\([0-9]*\).*/\1 \2/p')
	set -- $t
	[ "$1" = "$2" ] && tails=$((tails + 1))
}

# `make check` runs the -O2 -fomit-frame-pointer column (the issue's criterion; each gdb run
# loads libc's debug info, seconds each); UNWIND_MATRIX=full adds -O0 and -O2.
opts="-O2 -fomit-frame-pointer"
[ "${UNWIND_MATRIX:-}" = full ] && opts="-O0
-O2
-O2 -fomit-frame-pointer"
printf '%s\n' "$opts" >"$work/opts"
while IFS= read -r opt; do
	v=$(printf '%s' "$opt" | tr -d ' ')
	d="$work/$v"
	mkdir -p "$d"
	"$cc" $opt -g -shared -fPIC -o "$d/libunwind_lib.so" "$src/unwind_lib.c" || exit 99
	"$cc" $opt -g -I"$top_srcdir/include" -o "$d/unwind_crash" "$src/unwind_crash.c" \
		-L"$d" -lunwind_lib -L"$lib" -lptrec -lpthread ${SAN_LDFLAGS:-} \
		-Wl,-rpath,"$d:$lib" || exit 99
	for s in chain libc deep handler tail wild null shlib inlib alias cold coldtail mapped rareg abort thread; do
		run_one "C $opt" "$d/unwind_crash" "$s"
	done
	[ -n "$cxx" ] || continue
	"$cxx" $opt -g -I"$top_srcdir/include" -I"$src" -o "$d/unwind_crash_cxx" \
		"$src/unwind_crash_cxx.cc" -L"$d" -lunwind_lib -L"$lib" -lptrec -lpthread \
		${SAN_LDFLAGS:-} -Wl,-rpath,"$d:$lib" || exit 99
	for s in chain virtual stl handler libc; do
		run_one "C++ $opt" "$d/unwind_crash_cxx" "$s"
	done
done <"$work/opts"
[ -n "$cxx" ] || echo "note: no C++ compiler: the C++ scenarios were not run"
echo "threads: $total; equal frame for frame (with inline and tail-call frames): $equal;" \
	"physical frames equal: $phys; tail-call frames equal: $tails; frames gdb does not show: $extra"
[ "$failed" = 0 ] || { echo "FAIL: $failed scenario(s) gave no comparison"; exit 1; }
[ "$extra" = 0 ] || { echo "FAIL: the report showed $extra frame(s) gdb does not show"; exit 1; }
[ "$phys" = "$total" ] || { echo "FAIL: physical frames differ in $((total - phys)) thread(s)"; exit 1; }
[ "$tails" = "$total" ] || { echo "FAIL: tail-call frames differ in $((total - tails)) thread(s)"; exit 1; }
echo "PASS"
