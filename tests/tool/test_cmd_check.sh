#!/bin/sh
# `ptrec check FILE...` (issue 27): for programs and libraries built each way, the verdict a
# person needs before deploying: records (which hooks, in how many functions) or records
# nothing and why (LTO dropped the flags, built without `ptrec cflags`), whether it links
# libptrec, a stripped build still recognised, and exit status 0 / 1 / 3.  For an aarch64 $CC
# (the arm64 build): no -mfentry there, so the entry/exit build stands in for the fentry one,
# and patchable entries record nothing (the patcher is x86-64 code).
. "$top_srcdir/tests/tool/tool_common.sh"
cc=${CC:-cc}
libs="$top_builddir/libptrec/.libs"
[ -f "$libs/libptrec.so" ] || { echo "SKIP: no shared library built"; exit 77; }
[ -n "${OBJDUMP:-}" ] || { echo "SKIP: objdump not found (test oracle)"; exit 77; }
command -v "${cc%% *}" >/dev/null 2>&1 || { echo "SKIP: no compiler ($cc)"; exit 77; }
"$cc" -dM -E -x c /dev/null 2>/dev/null | grep -q '__clang__' && {
	echo "SKIP: CC is clang; the cases below use GCC's -pg -mfentry"; exit 77; }
# the build's strip (the cross one for an aarch64 build), else the host's
strip_cmd=${STRIP:-$(command -v strip || true)}
command -v "${strip_cmd:-strip}" >/dev/null 2>&1 || strip_cmd=""
a64=""
"$cc" -dM -E -x c /dev/null 2>/dev/null | grep -q '__aarch64__' && a64=yes

cat >"$tmp/prog.c" <<'C'
#include <ptrec.h>
__attribute__((noinline)) int work(int x) { return x * 3 + 1; }
__attribute__((noinline)) int work2(int x) { return work(x) * 5 + 1; }
int main(int argc, char **argv)
{
	(void)argv;
	ptrec_init(NULL);
	return work2(argc) == 21 ? 0 : 1;
}
C
cat >"$tmp/lib.c" <<'C'
__attribute__((noinline)) int lib_a(int x) { return x * 7; }
int lib_b(int x) { return lib_a(x) + 1; }
C
fentry="-pg -mfentry -mfentry-name=__ptrec_fentry"
# The link line `pkg-config --libs libptrec` gives (libptrec.pc.in), against the build tree.
pclibs=$(sed -n 's/^Libs: -L${libdir} //p' "$top_srcdir/libptrec/libptrec.pc.in")
# build NAME COMPILE-FLAGS LINK-FLAGS [LIBS]: prog.c compiled and linked as a person would.
build() {
	# shellcheck disable=SC2086
	"$cc" -O2 -g $2 -I"$top_srcdir/include" -c "$tmp/prog.c" -o "$tmp/$1.o" &&
		"$cc" -O2 $3 -o "$tmp/$1" "$tmp/$1.o" -L"$top_builddir/libptrec" -L"$libs" \
			${4:-$pclibs} || fail "cannot build $1"
}
# expect STATUS FILE PATTERN...: `ptrec check FILE` exits STATUS and its line has each PATTERN.
expect() {
	local want=$1 file=$2 out st
	shift 2
	checks=$((checks + 1))
	out=$("$tool" check "$file" 2>"$tmp/err"); st=$?
	echo "check $(basename "$file"): status $st: $out$(cat "$tmp/err")"
	[ "$st" -eq "$want" ] || fail "$(basename "$file"): status $st, expected $want"
	for p in "$@"; do
		case "$out$(cat "$tmp/err")" in *"$p"*) ;; *) fail "$(basename "$file"): no '$p'" ;; esac
	done
}

# rec: the recording build the cases below share (fentry; aarch64: entry/exit)
if [ -z "$a64" ]; then
	rec=fentry kind=fentry
	build fentry "$fentry" ""
else
	echo "note: aarch64: GCC has no -mfentry; the fentry cases are x86-64's"
	rec=inst kind=entry/exit
	build inst "-finstrument-functions" ""
fi
expect 0 "$tmp/$rec" "$tmp/$rec: records: $kind hooks in " "links libptrec.so"
# the hooks are in work, work2 and main: at least 3 of the functions
n=$("$tool" check "$tmp/$rec" | sed -n "s|.*$kind hooks in \([0-9]*\) of.*|\1|p")
checks=$((checks + 1))
[ "${n:-0}" -ge 3 ] || fail "$rec: $n instrumented functions, expected at least work, work2, main"

build plain "" ""
expect 1 "$tmp/plain" "$tmp/plain: records nothing: not built with \`ptrec cflags\`" \
	"links libptrec.so"

# GCC's LTO drops -pg: compiled with the flags, linked with -flto without them.
[ -z "$a64" ] && build lto "-flto $fentry" "-flto"
if [ -n "$a64" ]; then
	:
elif "$OBJDUMP" -d "$tmp/lto" 2>/dev/null | grep -q 'call.*__ptrec_fentry'; then
	echo "note: this GCC keeps -pg under LTO; the LTO-dropped case is not shown here"
else
	expect 1 "$tmp/lto" "records nothing: built with -pg -mfentry -mfentry-name=__ptrec_fentry and -flto" \
		"link-time optimization dropped the flags"
fi

# GCC's recipe: patchable entries (work, work2, main; five bytes on x86-64, two NOPs on
# aarch64), kept by LTO, registered by the hook archive's module.
pfe="-fpatchable-function-entry=5"
[ -n "$a64" ] && pfe="-fpatchable-function-entry=2"
build patch "$pfe" ""
expect 0 "$tmp/patch" "records: 3 patchable function entries (calls written in at ptrec_init)" \
	"links libptrec.so"
build patch_lto "-flto $pfe" "-flto"
expect 0 "$tmp/patch_lto" "records: " "patchable function entries (calls written in at ptrec_init)"
# ... but linked with -lptrec alone nothing registers the entries: nothing is written in.
build patch_nolink "$pfe" "" "-lptrec"
expect 1 "$tmp/patch_nolink" "records nothing: it has " \
	"but was not linked with \`pkg-config --libs libptrec\`"

[ -n "$a64" ] || build inst "-finstrument-functions" ""
expect 0 "$tmp/inst" "records: entry/exit hooks in "

build tracepc "-fsanitize-coverage=trace-pc" ""
expect 0 "$tmp/tracepc" "records: trace-pc hooks in "

# A shared library built instrumented, not linking libptrec: the program that loads it must.
"$cc" -O2 -fPIC -shared -finstrument-functions -o "$tmp/libinst.so" "$tmp/lib.c" || fail "cannot build libinst.so"
expect 0 "$tmp/libinst.so" "records: entry/exit hooks in " "the program that loads it must"
"$cc" -O2 -fPIC -shared -o "$tmp/libplain.so" "$tmp/lib.c" || fail "cannot build libplain.so"
expect 1 "$tmp/libplain.so" "records nothing: not built with"
# An x86-64 ptrec reads aarch64 files too: the same library cross-built for aarch64, whose
# hook calls go through its PLT (lib_a and lib_b instrumented).
if [ -z "$a64" ] && command -v aarch64-linux-gnu-gcc >/dev/null 2>&1; then
	aarch64-linux-gnu-gcc -O2 -fPIC -shared -finstrument-functions -o "$tmp/liba64.so" \
		"$tmp/lib.c" || fail "cannot cross-build liba64.so"
	expect 0 "$tmp/liba64.so" "records: entry/exit hooks in 2 of " "the program that loads it must"
	aarch64-linux-gnu-gcc -O2 -fPIC -shared -o "$tmp/liba64plain.so" "$tmp/lib.c" ||
		fail "cannot cross-build liba64plain.so"
	expect 1 "$tmp/liba64plain.so" "records nothing: not built with"
else
	echo "note: no aarch64-linux-gnu-gcc (or an aarch64 build): the cross-read case is not run"
fi

if [ -n "$strip_cmd" ]; then
	# Stripped, linked with libptrec.so: the hooks keep their names in .dynsym.
	cp "$tmp/$rec" "$tmp/${rec}_stripped" && "$strip_cmd" "$tmp/${rec}_stripped"
	expect 0 "$tmp/${rec}_stripped" "records: $kind hooks in " "links libptrec.so"
	# Stripped, libptrec linked in statically: the hook has no name left; it is the one
	# target the functions call first.
	if [ -n "$a64" ]; then
		echo "note: aarch64: the static stripped case guesses -mfentry's hook: x86-64 only"
	elif [ -f "$libs/libptrec.a" ] && ! "$OBJDUMP" -p "$libs/libptrec.so" | grep -q 'NEEDED.*libasan'; then
		"$cc" -o "$tmp/fentry_static" "$tmp/fentry.o" "$top_builddir/libptrec/libptrec_hooks.a" \
			"$libs/libptrec.a" -pthread -ldl && "$strip_cmd" "$tmp/fentry_static" ||
			fail "cannot link fentry.o with libptrec.a"
		expect 0 "$tmp/fentry_static" "records: fentry hooks in " \
			"(stripped: a call first in each function, to one target)" "libptrec is linked in"
	else
		echo "note: no libptrec.a (or a sanitizer build): the static stripped case is not run"
	fi
	cp "$tmp/plain" "$tmp/plain_stripped" && "$strip_cmd" "$tmp/plain_stripped"
	expect 1 "$tmp/plain_stripped" "records nothing: not built with" "(stripped: functions from .eh_frame_hdr)"
else
	echo "note: strip not found; the stripped cases are not run"
fi

# Several files: the worst verdict; a file that is no ELF: status 3 naming it.
checks=$((checks + 1))
"$tool" check "$tmp/$rec" "$tmp/plain" >/dev/null 2>&1; st=$?
[ "$st" -eq 1 ] || fail "a recording and a non-recording file: status $st, expected 1"
echo "not elf" >"$tmp/text"
expect 3 "$tmp/text" "ptrec: $tmp/text: cannot read it as an x86-64 or aarch64 ELF file"
expect 3 "$tmp/$rec.o" "an object file: check the program or library linked from it"
checks=$((checks + 1))
"$tool" check >/dev/null 2>&1; st=$?
[ "$st" -eq 2 ] || fail "no FILE: status $st, expected 2"
finish
