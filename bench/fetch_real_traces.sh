#!/bin/sh
# bench/fetch_real_traces.sh DIR — the real PT trace of bench_decode's real-trace table and its
# peer, fetched at bench time (`make bench` runs it; never `make check`):
#
#  - DIR/qemu/{trace1,page_cache.addr,page_cache.dump}: a 2 MB Intel PT trace of a QEMU process
#    and the code pages it ran (a page cache: one 64-bit address per 4 KiB page), from
#    nyx-fuzz/libxdc_experiments, test_data/qemu.  That data is AGPL: it is fetched into DIR
#    (ignored by git, removed by `make clean`) and never committed.
#  - libxdc (nyx-fuzz/libxdc, the coverage-only decoder that repository benchmarks) built from its
#    fetched source in $PTREC_LIBXDC_DIR (default ${TMPDIR:-/tmp}/ptrec-bench-libxdc), with
#    bench/bench_libxdc.c compiled against it there (bench_libxdc): bench_decode runs it as a
#    separate program.  Nothing of libxdc is linked into libptrec or its tools.
#
# Sources: git clones of the two public repositories, or, without network, a copy:
# PTREC_REAL_TRACES_SRC and PTREC_LIBXDC_SRC may name a checkout or a bare git directory of
# each.  Whatever cannot be had is said on stdout and left out; bench_decode then says which
# rows are missing.  Exit status 0 either way (the other benches still run).
dir=${1:-bench/real-traces}
srcdir=${top_srcdir:-.}
xdc=${PTREC_LIBXDC_DIR:-${TMPDIR:-/tmp}/ptrec-bench-libxdc}
CC=${CC:-cc}
mkdir -p "$dir" || exit 0

# get_repo URL SRC DEST: DEST is a copy of the repository's tree (files of `paths` only when
# given), from SRC (a checkout or a bare git directory) or a shallow clone of URL.
get_repo() {
	url=$1 src=$2 dest=$3
	shift 3
	rm -rf "$dest.tmp" && mkdir -p "$dest.tmp" || return 1
	if [ -n "$src" ] && git --git-dir="$src" rev-parse HEAD >/dev/null 2>&1; then
		git --git-dir="$src" archive HEAD "$@" | tar -x -C "$dest.tmp" || return 1
	elif [ -n "$src" ] && [ -d "$src/.git" ]; then
		git -C "$src" archive HEAD "$@" | tar -x -C "$dest.tmp" || return 1
	elif [ -n "$src" ] && [ -d "$src" ]; then
		cp -R "$src/." "$dest.tmp/" || return 1
	else
		rm -rf "$dest.tmp" &&
		git clone -q --depth 1 --filter=blob:none --no-checkout "$url" "$dest.tmp" || return 1
		if [ $# -gt 0 ]; then
			git -C "$dest.tmp" sparse-checkout set --no-cone "$@" || return 1
		fi
		git -C "$dest.tmp" checkout -q || return 1
	fi
	rm -rf "$dest" && mv "$dest.tmp" "$dest"
}

q="$dir/qemu"
if [ -s "$q/trace1" ] && [ -s "$q/page_cache.addr" ] && [ -s "$q/page_cache.dump" ]; then
	echo "real traces: $q (kept from an earlier run)"
elif get_repo https://github.com/nyx-fuzz/libxdc_experiments "$PTREC_REAL_TRACES_SRC" \
		"$dir/libxdc_experiments" test_data/qemu &&
	mkdir -p "$q" &&
	cp "$dir/libxdc_experiments/test_data/qemu/trace1" \
	   "$dir/libxdc_experiments/test_data/qemu/page_cache.addr" \
	   "$dir/libxdc_experiments/test_data/qemu/page_cache.dump" "$q/"; then
	rm -rf "$dir/libxdc_experiments"
	echo "real traces: fetched nyx-fuzz/libxdc_experiments test_data/qemu into $q (AGPL data:" \
	     "not to be committed)"
else
	rm -rf "$dir/libxdc_experiments" "$dir/libxdc_experiments.tmp" "$q"
	echo "real traces: MISSING: could not fetch nyx-fuzz/libxdc_experiments (no network?);" \
	     "set PTREC_REAL_TRACES_SRC to a copy of it"
fi

if [ -x "$xdc/bench_libxdc" ] && [ "$xdc/bench_libxdc" -nt "$srcdir/bench/bench_libxdc.c" ]; then
	echo "libxdc: $xdc/bench_libxdc (kept from an earlier run)"
elif ! printf '#include <capstone/capstone.h>\n' | $CC -E - >/dev/null 2>&1; then
	echo "libxdc: MISSING: it needs capstone's headers (Debian: libcapstone-dev)"
elif get_repo https://github.com/nyx-fuzz/libxdc "$PTREC_LIBXDC_SRC" "$xdc/src" &&
	make -s -C "$xdc/src" libxdc.a CC="$CC" >"$xdc/build.log" 2>&1 &&
	$CC -std=gnu11 -O2 -I"$xdc/src" -o "$xdc/bench_libxdc" "$srcdir/bench/bench_libxdc.c" \
		"$xdc/src/libxdc.a" -lcapstone >>"$xdc/build.log" 2>&1; then
	echo "libxdc: built $xdc/bench_libxdc from nyx-fuzz/libxdc" \
	     "$(git -C "$xdc/src" rev-parse --short HEAD 2>/dev/null)"
else
	echo "libxdc: MISSING: could not fetch or build nyx-fuzz/libxdc (see $xdc/build.log;" \
	     "PTREC_LIBXDC_SRC may name a copy of its source)"
fi
exit 0
