#!/bin/sh
# `ptrec cflags` prints the recommended instrumentation for $CC (GCC and Clang: patchable
# function entries, made calls of __ptrec_fentry at ptrec_init: five bytes on x86-64, two NOPs
# on aarch64), refuses a compiler it cannot identify; and a program built with those flags
# and linked as `pkg-config --libs libptrec` says (-Wl,-u,__ptrec_patch_module -lptrec_hooks
# -lptrec) carries the NOPs, has every entry patched at ptrec_init, and runs.
# (tests/crash/test_recipe_*.sh build it every other way.)
set -u
fail() { echo "FAIL: $*"; exit 1; }
: "${top_builddir:?}" "${PTREC_TOOL:?}"
[ -n "${OBJDUMP:-}" ] || { echo "SKIP: objdump not found (test oracle)"; exit 77; }
libs="$top_builddir/libptrec/.libs"
[ -f "$libs/libptrec.so" ] || { echo "SKIP: no shared library built"; exit 77; }
work=$(mktemp -d "$top_builddir/tests/cflags.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT

out=$(CC=/bin/false "$PTREC_TOOL" cflags 2>"$work/err"); st=$?
[ "$st" -eq 3 ] && [ -z "$out" ] || fail "an unknown compiler gave status $st, output '$out'"
grep -q "cannot tell which compiler '/bin/false' is" "$work/err" || fail "no clear error: $(cat "$work/err")"

cat >"$work/prog.c" <<'C'
#include <stdio.h>
#include <ptrec.h>
__attribute__((noinline)) int work(int x) { return x * 3 + 1; }
PTREC_NO_TRACE __attribute__((noinline)) int quiet(int x) { return x + 2; }
int main(void)
{
	struct ptrec_config cfg;
	ptrec_config_init(&cfg);
	cfg.backend = PTREC_BACKEND_INSTRUMENTED;
	cfg.flags |= PTREC_F_NO_SIGNALS;
	if (ptrec_init(&cfg) != 0)
		return 2;
	int s = 0;
	for (int i = 0; i < 1000; i++)
		s += work(i) + quiet(i);
	struct ptrec_status st = {.struct_size = sizeof(st)};
	ptrec_status(&st);
	printf("patched_entries: %s\n", st.patched_entries);
	ptrec_shutdown();
	return s == 0;
}
C
# A sanitizer build's libptrec.so needs GCC's sanitizer runtimes first in the program, as an
# application built with the same sanitizers has them (Clang's runtimes are other ones).
san=""
if "$OBJDUMP" -p "$libs/libptrec.so" | grep -q 'NEEDED.*libasan'; then
	san="-fsanitize=address,undefined"
	export ASAN_OPTIONS="detect_leaks=0"
fi
. "$top_srcdir/tests/common/qemu_user.sh"
others=clang
under_qemu_user && others="" # cross-built: only $CC makes programs for this libptrec
tried=0
for cc in "${CC:-cc}" $others; do
	command -v "${cc%% *}" >/dev/null 2>&1 || continue
	if [ -n "$san" ] && [ "$cc" = clang ]; then
		echo "note: clang not tried: this libptrec.so is built with GCC's sanitizers"
		continue
	fi
	flags=$(CC="$cc" "$PTREC_TOOL" cflags) || fail "ptrec cflags failed for $cc"
	case "$flags" in
	*-fpatchable-function-entry=5*) nops=5 ;;
	*-fpatchable-function-entry=2*) nops=2 ;; # aarch64
	*) fail "unexpected flags for $cc: $flags" ;;
	esac
	# shellcheck disable=SC2086
	$cc -O2 $flags -I"$top_srcdir/include" -c "$work/prog.c" -o "$work/prog.o" ||
		fail "$cc cannot compile with: $flags"
	# Linked with the compile flags too, as Autotools and CMake do: they must be harmless there.
	# shellcheck disable=SC2086
	$cc $san -O2 $flags -o "$work/prog" "$work/prog.o" -L"$top_builddir/libptrec" -L"$libs" \
		-Wl,-u,__ptrec_patch_module -lptrec_hooks -lptrec ||
		fail "$cc cannot link with -Wl,-u,__ptrec_patch_module -lptrec_hooks -lptrec"
	"$OBJDUMP" -d "$work/prog" >"$work/dis.txt"
	sed -n '/<work>:/,/^$/p' "$work/dis.txt" >"$work/work.txt"
	sed -n '/<quiet>:/,/^$/p' "$work/dis.txt" >"$work/quiet.txt"
	# Five bytes of NOPs (x86-64) or two NOPs (aarch64) at the entry, after the endbr64 or
	# BTI c when there is one, listed in the section; none in the PTREC_NO_TRACE function.
	"$OBJDUMP" -h "$work/prog" | grep -q '__patchable_function_entries' ||
		fail "$cc: no __patchable_function_entries section"
	# (GCC: five one-byte NOPs; Clang: one five-byte NOP, 0f 1f 44 00 xx)
	{ grep -v 'endbr64\|bti' "$work/work.txt" | sed -n "2,$((nops + 1))p" | grep -c 'nop$' | grep -qx $nops ||
	  grep -v endbr64 "$work/work.txt" | sed -n 2p | grep -q ':[[:space:]]*0f 1f 44 00 [0-9a-f][0-9a-f][[:space:]]*nop'; } ||
		fail "$cc: work() does not start with $nops NOPs: $(cat "$work/work.txt")"
	grep -v 'endbr64\|bti' "$work/quiet.txt" | sed -n 2p | grep -q 'nop' &&
		fail "$cc: the PTREC_NO_TRACE function has a patchable entry: $(cat "$work/quiet.txt")"
	(cd "$work" && LD_LIBRARY_PATH="$libs" exec ./prog) >"$work/out" || fail "$cc: the instrumented program failed"
	grep -Eq '^patched_entries: ([0-9]+) of \1 patchable function entries in 1 module call __ptrec_fentry$' "$work/out" ||
		fail "$cc: the entries were not all patched: $(cat "$work/out")"
	[ ! -e "$work/gmon.out" ] || fail "$cc: a gmon.out appeared"
	if [ "${PTREC_HOST_CPU:-}" = aarch64 ]; then
		# pointer authentication and BTI: PAC-signed return addresses must not break the
		# hooks, and patched entries sit after a BTI c (4 bytes into the function)
		# shellcheck disable=SC2086
		$cc -O2 $flags -mbranch-protection=standard -I"$top_srcdir/include" -c "$work/prog.c" \
			-o "$work/prog.o" && $cc $san -o "$work/prog" "$work/prog.o" \
			-L"$top_builddir/libptrec" -L"$libs" -Wl,-u,__ptrec_patch_module -lptrec_hooks -lptrec ||
			fail "$cc cannot build with -mbranch-protection=standard"
		"$OBJDUMP" -d "$work/prog" | grep -q -E 'paciasp|hint[[:space:]]+#0x19' ||
			fail "$cc: -mbranch-protection=standard signs no return address"
		(cd "$work" && LD_LIBRARY_PATH="$libs" exec ./prog) >"$work/out" ||
			fail "$cc: the PAC build failed"
		grep -Eq '^patched_entries: ([0-9]+) of \1 patchable function entries in 1 module call __ptrec_fentry$' "$work/out" ||
			fail "$cc: the PAC build's entries were not all patched: $(cat "$work/out")"
	fi
	tried=$((tried + 1))
	echo "ok: $cc -> $flags"
done
[ "$tried" -gt 0 ] || { echo "SKIP: no compiler found"; exit 77; }
echo "PASS"
