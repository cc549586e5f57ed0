#!/bin/sh
# test_unwind_a64.sh — the unwound stack of an aarch64 dump against gdb-multiarch's backtrace
# of the same crash, on the aarch64 reader and on this machine's: unwind_crash.c (with the
# shared library unwind_lib.c) cross-built at -O2 -fomit-frame-pointer with pointer
# authentication (-mbranch-protection=standard: signed return addresses) crashes under
# qemu-user, which writes a core (ulimit -c; qemu_*.core) after libptrec wrote its dump.
# gdb-multiarch reads the core (gdb_core_a64.py); the report of the dump by the aarch64 `ptrec`
# (under qemu-user) and by the `ptrec` of this build (x86-64: the read side reads both
# machines) must each show gdb's frames, frame for frame, in every scenario (a call chain, a
# crash inside a shared library and frames of one, frames in libc, deep recursion, tail calls, a
# tail call through an ELF alias, a .cold part, a return address in a register, another
# thread).  Spec as in test_unwind_gdb.sh: no frame gdb does not show; the physical frames
# equal pc for pc; the tail-call frames as gdb's.  Not compared: the crashes whose core stack
# holds a signal frame (a crash inside a signal handler; abort(), whose core qemu writes at
# libptrec's re-raise inside its handler): gdb-multiarch 13 does not finish unwinding qemu
# 7.2's signal trampoline (killed after minutes); tests/unit/test_unwind.c checks the aarch64
# signal frame.  The report of the chain crash shows the faulting instruction as a 4-byte word
# and names its class (a load).
#
# The aarch64 library and tool: this build's when it is an aarch64 one (.ci/run's arm64 phase),
# else PTREC_A64_BUILDDIR when set (a --host=aarch64-linux-gnu build tree), else the test
# cross-builds them from `make distdir` (a few minutes).  Programs are linked -no-pie: gdb
# cannot place a PIE from a qemu core (its text pages are not in the core).  Nothing is
# committed: the dump is made here.  SKIP without the cross compiler, aarch64 programs that run
# (qemu-user and its binfmt_misc entry: .ci/run's arm64_binfmt), or gdb-multiarch with Python.
set -u
: "${top_srcdir:?}" "${top_builddir:?}" "${PTREC_TOOL:?}"
src=$top_srcdir/tests/unwind
gdbm=$(command -v gdb-multiarch) || { echo "SKIP: gdb-multiarch not found (test oracle)"; exit 77; }
"$gdbm" -batch -nx -ex 'python print("py-ok")' 2>/dev/null | grep -q py-ok ||
	{ echo "SKIP: gdb-multiarch has no Python (needed by gdb_core_a64.py)"; exit 77; }
if [ "${PTREC_HOST_CPU:-}" = aarch64 ]; then
	xcc=${CC:-cc}
else
	xcc=$(command -v aarch64-linux-gnu-gcc) ||
		{ echo "SKIP: no aarch64 cross compiler (gcc-aarch64-linux-gnu)"; exit 77; }
fi
sysroot=$("$xcc" -print-sysroot 2>/dev/null)
[ -n "$sysroot" ] && [ "$sysroot" != / ] || sysroot=/usr/aarch64-linux-gnu
[ -d "$sysroot/lib" ] || { echo "SKIP: no aarch64 sysroot at $sysroot (libc6-dev-arm64-cross)"; exit 77; }
mkdir -p "$top_builddir/tests/tmp"
work=$(mktemp -d "$top_builddir/tests/tmp/unwind_a64.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT

printf 'int main(void) { return 7; }\n' >"$work/hello.c"
"$xcc" -o "$work/hello" "$work/hello.c" || exit 99
"$work/hello" 2>/dev/null
[ $? = 7 ] || { echo "SKIP: aarch64 programs do not run here (qemu-user-static and its binfmt_misc entry: .ci/run's arm64_binfmt)"; exit 77; }

# The aarch64 libptrec and ptrec.
if [ "${PTREC_HOST_CPU:-}" = aarch64 ]; then
	a64=$top_builddir
	tools="aarch64=$PTREC_TOOL"
else
	a64=${PTREC_A64_BUILDDIR:-}
	if [ -z "$a64" ]; then
		a64=$work/build
		mkdir "$a64"
		echo "cross-building the aarch64 libptrec and ptrec (make distdir, configure --host=aarch64-linux-gnu)"
		if ! { ${MAKE:-make} -s -C "$top_builddir" distdir distdir="$work/src" >"$work/build.log" 2>&1 &&
			# without the host's tools that make check exports (CC=gcc would build for x86-64)
			(cd "$a64" && env -u CC -u NM -u OBJDUMP -u READELF -u OBJCOPY -u STRIP -u ADDR2LINE \
				"$work/src/configure" --host=aarch64-linux-gnu >>"$work/build.log" 2>&1 &&
			 ${MAKE:-make} -j2 libptrec/libptrec.la libptrec/tool/ptrec >>"$work/build.log" 2>&1); }; then
			tail -n 30 "$work/build.log"
			echo "FAIL: the aarch64 cross build failed"
			exit 1
		fi
	fi
	tools="aarch64=$a64/libptrec/tool/ptrec,host=$PTREC_TOOL"
fi
lib=$a64/libptrec/.libs
[ -e "$lib/libptrec.so" ] || { echo "FAIL: no aarch64 libptrec.so in $lib"; exit 1; }

flags="-O2 -fomit-frame-pointer -mbranch-protection=standard -g"
"$xcc" $flags -shared -fPIC -o "$work/libunwind_lib.so" "$src/unwind_lib.c" || exit 99
"$xcc" $flags -no-pie -I"$top_srcdir/include" -o "$work/unwind_crash" "$src/unwind_crash.c" \
	-L"$work" -lunwind_lib -L"$lib" -lptrec -lpthread -Wl,-rpath,"$work:$lib" || exit 99
# Pointer authentication is in the code: the functions that save the link register sign it.
if command -v aarch64-linux-gnu-objdump >/dev/null; then
	aarch64-linux-gnu-objdump -d "$work/unwind_crash" | grep -q paciasp ||
		{ echo "FAIL: -mbranch-protection=standard gave no paciasp"; exit 1; }
fi

export PTREC_BACKEND=none PTREC_FLAGS=4
unset PTREC_RING_SIZE
total=0 equal=0 failed=0 extra=0
for s in chain inlib shlib libc deep tail alias cold rareg thread; do
	d=$work/d
	rm -rf "$d" && mkdir "$d"
	(cd "$d" && ulimit -c unlimited && PTREC_DIR="$d" timeout 120 "$work/unwind_crash" "$s" \
		>/dev/null 2>&1)
	rm -f "$d/core" "$d"/core.[0-9]* # the core of qemu itself, where core_pattern puts one here
	dump=$(ls "$d"/*.ptrec 2>/dev/null | head -n 1)
	core=$(ls "$d"/qemu_*.core 2>/dev/null | head -n 1)
	if [ -z "$dump" ] || [ -z "$core" ]; then
		echo "FAIL: $s: no dump ($dump) or no qemu core ($core)"
		failed=$((failed + 1))
		continue
	fi
	if [ "$s" = chain ]; then
		# The faulting instruction as aarch64 shows it: a 4-byte word, a load.
		"$PTREC_TOOL" report "$dump" >"$work/chain.txt" 2>&1
		grep -q '^words:    [0-9a-f]\{8\} .*(aarch64, little-endian)' "$work/chain.txt" &&
			grep -q '^insn:     [0-9a-f]\{8\}: a load or store' "$work/chain.txt" ||
			{ echo "FAIL: chain: the faulting instruction is not shown as aarch64 words:"
			  sed -n '/== Faulting/,/^$/p' "$work/chain.txt"; failed=$((failed + 1)); }
	fi
	out=$(A64_PROGRAM="$work/unwind_crash" A64_CORE="$core" A64_SYSROOT="$sysroot" \
		A64_SOLIB_PATH="$work:$lib" A64_DUMP="$dump" A64_TOOLS="$tools" \
		timeout 300 "$gdbm" -batch -nx -x "$src/gdb_core_a64.py" 2>&1 </dev/null)
	printf '%s\n' "$out" | grep -q '^core:' ||
		{ echo "FAIL: $s: gdb did not read the core: $out"; failed=$((failed + 1)); continue; }
	for t in $(printf '%s' "$tools" | tr ',' ' '); do
		label=${t%%=*}
		line=$(printf '%s\n' "$out" | grep "^$label RESULT")
		total=$((total + 1))
		case "$line" in
		"$label RESULT equal"*) equal=$((equal + 1)) ;;
		"$label RESULT differ"*) printf '%s (%s reader): %s\n%s\n' "$s" "$label" "$line" \
			"$(printf '%s\n' "$out" | grep "^$label   " | head -60)" ;;
		*) echo "FAIL: $s ($label reader): no comparison: $out"; failed=$((failed + 1)) ;;
		esac
		e=$(printf '%s' "$line" | sed -n 's/.*extra=\([0-9]*\).*/\1/p')
		extra=$((extra + ${e:-0}))
	done
done
echo "aarch64 dumps: $total reports compared with gdb-multiarch; equal frame for frame: $equal;" \
	"frames gdb does not show: $extra"
[ "$failed" = 0 ] || { echo "FAIL: $failed scenario(s) gave no comparison"; exit 1; }
[ "$extra" = 0 ] || { echo "FAIL: the reports showed $extra frame(s) gdb does not show"; exit 1; }
[ "$equal" = "$total" ] || { echo "FAIL: $((total - equal)) report(s) differ from gdb"; exit 1; }
echo "PASS"
