#!/bin/sh
# `ptrec cflags` prints the recommended instrumentation for $CC (GCC: entry hooks named
# __ptrec_fentry; Clang: -finstrument-functions-after-inlining), refuses a compiler it cannot
# identify; and a program built with those flags and linked as `pkg-config --libs libptrec`
# says (-lptrec_hooks -lptrec) calls its hooks directly, not through the PLT, and runs.
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
tried=0
for cc in "${CC:-cc}" clang; do
	command -v "${cc%% *}" >/dev/null 2>&1 || continue
	if [ -n "$san" ] && [ "$cc" = clang ]; then
		echo "note: clang not tried: this libptrec.so is built with GCC's sanitizers"
		continue
	fi
	flags=$(CC="$cc" "$PTREC_TOOL" cflags) || fail "ptrec cflags failed for $cc"
	case "$flags" in
	*-finstrument-functions-after-inlining*) hook=__cyg_profile_func_enter ;;
	*-mfentry-name=__ptrec_fentry*) hook=__ptrec_fentry ;;
	*) fail "unexpected flags for $cc: $flags" ;;
	esac
	# shellcheck disable=SC2086
	$cc -O2 $flags -I"$top_srcdir/include" -c "$work/prog.c" -o "$work/prog.o" ||
		fail "$cc cannot compile with: $flags"
	# Linked without the compile flags (-pg must not reach the link), as pkg-config says.
	# shellcheck disable=SC2086
	$cc $san -o "$work/prog" "$work/prog.o" -L"$top_builddir/libptrec" -L"$libs" -lptrec_hooks -lptrec ||
		fail "$cc cannot link with -lptrec_hooks -lptrec"
	"$OBJDUMP" -d "$work/prog" >"$work/dis.txt"
	sed -n '/<work>:/,/^$/p' "$work/dis.txt" >"$work/work.txt"
	grep -q "call.*<$hook>" "$work/work.txt" || fail "$cc: work() does not call $hook directly: $(cat "$work/work.txt")"
	grep -q "call.*<$hook@plt>" "$work/work.txt" && fail "$cc: work() calls $hook through the PLT"
	sed -n '/<quiet>:/,/^$/p' "$work/dis.txt" | grep -q "$hook" && fail "$cc: PTREC_NO_TRACE function is instrumented"
	LD_LIBRARY_PATH="$libs" "$work/prog" || fail "$cc: the instrumented program failed"
	tried=$((tried + 1))
	echo "ok: $cc -> $flags"
done
[ "$tried" -gt 0 ] || { echo "SKIP: no compiler found"; exit 77; }
echo "PASS"
