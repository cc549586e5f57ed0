# recipe_common.sh — builds small programs the way the README says (`ptrec cflags` on the compile
# line, ptrec_init(NULL) first in main, `pkg-config --libs libptrec` on the link line) in every
# way a distribution or a build system builds them, crashes each and checks the report
# (sourced by tests/crash/test_recipe_*.sh; issue 27).
#
# recipe_matrix COMPILER LTO_MODE...
#   For each LTO mode (quoted flags, "" for none) x -O2/-O3 x PIE/non-PIE x `ptrec cflags` on
#   the link line too (as Autotools and CMake's CMAKE_C_FLAGS put them) or not (optimization
#   and LTO flags are always there): a shared library (lib_entry > lib_step > lib_leaf, which
#   dereferences NULL) and an executable (main > app_one > app_two > lib_entry) are built with
#   the same flags and run twice: to a normal exit, which must leave no gmon.out (gprof's start
#   files write it at exit), then into the crash: it must die of SIGSEGV with a dump whose
#   report's last branches hold the calls app_one, app_two, lib_entry, lib_step, lib_leaf in
#   this order (GCC's .isra/.constprop suffixes dropped).  Every cell is reported; the test
#   fails if any cell fails.
set -u

fail() { echo "FAIL: $*"; exit 1; }

: "${top_builddir:?}" "${PTREC_TOOL:?}"
command -v pkg-config >/dev/null 2>&1 || { echo "SKIP: pkg-config not found"; exit 77; }
libs="$top_builddir/libptrec/.libs"
[ -f "$libs/libptrec.so" ] || { echo "SKIP: no shared library built ($libs)"; exit 77; }
[ -f "$top_builddir/libptrec/libptrec_hooks.a" ] || { echo "SKIP: no hook archive built"; exit 77; }
if "${OBJDUMP:-objdump}" -p "$libs/libptrec.so" 2>/dev/null | grep -q 'NEEDED.*libasan'; then
	echo "SKIP: this libptrec.so is built with the sanitizers; programs built the README's way"
	echo "      (no sanitizer runtime of their own) cannot load it"
	exit 77
fi

work=$(mktemp -d "$top_builddir/tests/recipe.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT

# The README's link flags, with the build tree in place of the installed libdir.
PKG_CONFIG_PATH="$top_builddir/libptrec" pkg-config --define-variable=libdir="$libs" \
	--libs libptrec >"$work/libs" 2>"$work/pcerr" || fail "pkg-config: $(cat "$work/pcerr")"
link_libs="-L$top_builddir/libptrec $(cat "$work/libs")"

cat >"$work/lib.c" <<'C'
#if defined(__clang__)
#define NOINL __attribute__((noinline))
#else
#define NOINL __attribute__((noinline, noclone))
#endif
volatile int lib_sink;
NOINL void lib_leaf(int *p) { lib_sink = *p; }
NOINL void lib_step(int *p) { lib_leaf(p); lib_sink++; }
NOINL void lib_entry(int *p) { lib_step(p); lib_sink++; }
C
cat >"$work/main.c" <<'C'
#include <stdio.h>
#include <ptrec.h>
#if defined(__clang__)
#define NOINL __attribute__((noinline))
#else
#define NOINL __attribute__((noinline, noclone))
#endif
void lib_entry(int *p);
volatile int app_sink;
int *volatile app_null;
NOINL void app_two(int *p) { lib_entry(p); app_sink++; }
NOINL void app_one(int *p) { app_two(p); app_sink++; }
int main(int argc, char **argv)
{
	int r = ptrec_init(NULL), x = 1;
	if (r != 0) {
		fprintf(stderr, "ptrec_init: %d\n", r);
		return 3;
	}
	(void)argv;
	app_one(argc > 1 ? &x : app_null);
	return 0;
}
C
want="app_one app_two lib_entry lib_step lib_leaf"

# The callees of the call records in a report's last branches, oldest first, one line.
report_calls() {
	awk '/^last [0-9]+ of [0-9]+ branches/ {on = 1; next}
	     on && /^  #[0-9]+ +call / {
	         for (i = 1; i < NF; i++) if ($i == "->") { s = $(i + 2); break }
	         sub(/\+0x[0-9a-f]+$/, "", s); sub(/\..*$/, "", s); print s }
	     on && /^$/ {on = 0}' "$1" | tac | tr '\n' ' ' | sed 's/ $//'
}

# patch_test_setup: what the tests of GCC's patchable entries (test_patch_*.sh) need: SKIPs
# without GCC, or where PT or BTS would be chosen (nothing is patched then); sets $gcc (the
# host's gcc, or the cross build's own GCC under qemu-user) and $instr to `ptrec cflags` for it
# (patchable entries).
patch_test_setup() {
	gcc=gcc
	under_qemu_user && gcc=$CC
	command -v "${gcc%% *}" >/dev/null 2>&1 || { echo "SKIP: $gcc not found"; exit 77; }
	[ ! -e /sys/bus/event_source/devices/intel_pt ] && [ ! -e /sys/bus/event_source/devices/intel_bts ] ||
		{ echo "SKIP: this machine has PT or BTS: the automatic choice would not patch"; exit 77; }
	instr=$(CC=$gcc "$PTREC_TOOL" cflags) || fail "ptrec cflags failed for $gcc"
	case "$instr" in
	*-fpatchable-function-entry=*) ;;
	*) fail "gcc flags are not patchable entries: $instr" ;;
	esac
}

cells=0
failed=0
# One cell: recipe_cell COMPILER CELL_NAME LTO OPT PIE LINKFLAGS(yes|no)
recipe_cell() {
	local cc=$1 name=$2 lto=$3 opt=$4 pie=$5 onlink=$6 d cflags extra
	d="$work/$name"
	mkdir "$d"
	cells=$((cells + 1))
	cflags="$opt $lto $instr"
	# The link line always has the optimization and LTO flags (LTO needs them there).
	extra="$opt $lto"
	[ "$onlink" = yes ] && extra="$cflags"
	case $pie in pie) pflags="-fPIE" lpie="-pie" ;; *) pflags="-fno-pie" lpie="-no-pie" ;; esac
	# shellcheck disable=SC2086
	if ! (cd "$d" &&
	      $cc $cflags -fPIC -c "$work/lib.c" -o lib.o &&
	      $cc $extra -shared -o libcell.so lib.o $link_libs &&
	      $cc $cflags $pflags -I"$top_srcdir/include" -c "$work/main.c" -o main.o &&
	      $cc $extra $lpie -o prog main.o -L. -lcell -Wl,-rpath,"$d" $link_libs) >"$d/build.log" 2>&1
	then
		echo "FAIL $name: the build failed:"; sed 's/^/  /' "$d/build.log"
		failed=$((failed + 1)); return
	fi
	recipe_check "$name" "$d" "$d/prog"
}

# recipe_check NAME DIR PROG: runs PROG (built from main.c and lib.c) in DIR to a normal exit
# and then into the crash, and checks as described at the top; counts a failure in $failed.
recipe_check() {
	local name=$1 d=$2 prog=$3 got dump st
	# A normal exit first: gprof's start files (-pg on the link line) would write gmon.out.
	(cd "$d" && PTREC_DIR="$d" PTREC_SYSLOG=none PTREC_BACKEND=${cell_backend:-instrumented} \
	 LD_LIBRARY_PATH="$libs" exec "$prog" exit) >"$d/out" 2>&1 || {
		echo "FAIL $name: the program failed when it should exit normally:"; sed 's/^/  /' "$d/out"
		failed=$((failed + 1)); return; }
	if [ -e "$d/gmon.out" ]; then
		echo "FAIL $name: a gmon.out appeared (gprof's start files were linked)"
		failed=$((failed + 1)); return
	fi
	# (the outer subshell keeps the shell's "Segmentation fault" line out of the log)
	( (cd "$d" && PTREC_DIR="$d" PTREC_REPORT_TIMEOUT_MS=0 PTREC_SYSLOG=none \
	   PTREC_BACKEND=${cell_backend:-instrumented} LD_LIBRARY_PATH="$libs" exec "$prog") \
	  >"$d/out" 2>&1; echo $? >"$d/status" ) 2>/dev/null
	st=$(cat "$d/status")
	dump=$(ls "$d"/ptrec.prog.*.ptrec 2>/dev/null | head -1)
	if [ "$st" -ne 139 ] || [ -z "$dump" ]; then
		echo "FAIL $name: status $st (139 expected), dump '${dump}':"; sed 's/^/  /' "$d/out"
		failed=$((failed + 1)); return
	fi
	"$PTREC_TOOL" report "$dump" >"$d/report.txt" 2>&1 || {
		echo "FAIL $name: ptrec report failed:"; sed 's/^/  /' "$d/report.txt"
		failed=$((failed + 1)); return; }
	got=$(report_calls "$d/report.txt")
	if [ "$got" != "$want" ]; then
		echo "FAIL $name: calls in the history '$got', expected '$want'"
		grep -A12 '^last [0-9]* of' "$d/report.txt" | sed 's/^/  /'
		grep 'patched_entries\|refused instrumented' "$d/report.txt" | sed 's/^/  /'
		failed=$((failed + 1)); return
	fi
	echo "ok   $name: $got"
	rm -rf "$d"
}

recipe_matrix() {
	local cc=$1 lto opt pie onlink tag
	shift
	command -v "${cc%% *}" >/dev/null 2>&1 || { echo "SKIP: $cc not found"; exit 77; }
	instr=$(CC="$cc" "$PTREC_TOOL" cflags) || fail "ptrec cflags failed for $cc"
	echo "$cc: ptrec cflags -> $instr; link: $link_libs"
	for lto in "$@"; do
		tag=$(printf '%s' "${lto:-nolto}" | tr -d ' ' | tr '=' '-')
		for opt in -O2 -O3; do
			for pie in pie nopie; do
				for onlink in no yes; do
					recipe_cell "$cc" "$tag$opt-$pie-link_$onlink" "$lto" "$opt" "$pie" "$onlink"
				done
			done
		done
	done
	# ptrec_init(NULL) as the README has it, backend auto: on a machine without PT or BTS it
	# must choose the instrumented backend by itself for such a program.
	if [ ! -e /sys/bus/event_source/devices/intel_pt ] &&
	   [ ! -e /sys/bus/event_source/devices/intel_bts ]; then
		cell_backend=auto recipe_cell "$cc" "auto-backend" "$1" -O2 pie yes
	fi
	echo "$cc: $((cells - failed)) of $cells cells record the expected history"
	[ "$failed" -eq 0 ] || exit 1
	echo PASS
}
