#!/bin/sh
# bench_redis.sh — what recording costs a real server: Redis 7.0.15 (Debian's source package,
# fetched at bench time, never committed) built plain and with the README's recipe, with GCC
# and with Clang, LTO on as Redis's Makefile builds from 7.2 on (-O3, GCC -flto=auto, Clang
# -flto; 7.0.15's own default is -O2 without LTO), then `redis-benchmark -t
# set,get,incr,lpush` pipelined (-P 16) and not, alternating plain and recording runs; prints
# one table of medians, with the server's CPU time per request beside the requests per
# second (see cpu_ns).  Run by `make bench-redis`, never by
# `make check` or `make bench` (it downloads Redis and builds it four times: about 10 minutes
# on a quiet 2-core machine, much longer on a busy one).
#
# The recipe, as an operator follows it: `ptrec cflags` on the compile line (REDIS_CFLAGS),
# `ptrec_init(NULL)` first in main (server.c patched here), `pkg-config --libs libptrec` on the
# link line (appended to Redis's FINAL_LIBS), against this build tree's libptrec installed into
# a scratch DESTDIR.  Each recording server is crashed once (DEBUG SEGFAULT) before the table
# counts: its report must show branches of the main thread, else its row says it recorded
# nothing.
#
# Environment: REDIS_RUNS (alternating runs, default 5), REDIS_REQUESTS (-n, default 200000;
# pipelined runs make ten times as many, so that they last about as long: a run of 0.3 s
# measures the connections' set-up and the machine's hiccups as much as the requests),
# REDIS_BENCH_DIR (scratch, default $top_builddir/bench/redis-work; the Redis builds are kept
# there and reused while the recipe and libptrec are unchanged), REDIS_COMPILERS (default
# "gcc clang"), REDIS_BASELINE (a build tree of another libptrec, e.g. main before a change:
# adds a recording build against it, "rec_base", run in the same alternation), REDIS_LTO=no
# (build without LTO), REDIS_PIN=no (do not pin: by default, with two CPUs or more, the server
# runs on CPU 0 and redis-benchmark on CPU 1, so that the two do not take turns on one CPU and
# the server's CPU time is its own work).  Two runs at once take turns for their measurements
# (a lock file).
set -u
: "${top_srcdir:?}" "${top_builddir:?}"
tool="$top_builddir/libptrec/tool/ptrec"
runs=${REDIS_RUNS:-5}
requests=${REDIS_REQUESTS:-200000}
dir=${REDIS_BENCH_DIR:-$top_builddir/bench/redis-work}
compilers=${REDIS_COMPILERS:-gcc clang}
baseline=${REDIS_BASELINE:-}
use_lto=${REDIS_LTO:-yes}
tests=set,get,incr,lpush
# on_cpu N: the command prefix that pins to CPU N (empty when not pinning).
on_cpu() { :; }
if [ "${REDIS_PIN:-yes}" = yes ] && command -v taskset >/dev/null 2>&1 && [ "$(nproc)" -ge 2 ]; then
	on_cpu() { echo "taskset -c $1"; }
fi
skip() { echo "bench_redis: SKIP: $*"; exit 0; }
die() { echo "bench_redis: $*" >&2; exit 1; }
log() { echo "bench_redis: $*" >&2; }
# cname CC: the compiler's short name (builds and table rows are named by it).
cname() { basename "${1%% *}"; }

command -v redis-benchmark >/dev/null 2>&1 || skip "no redis-benchmark (Debian package redis-tools)"
command -v redis-cli >/dev/null 2>&1 || skip "no redis-cli (Debian package redis-tools)"
mkdir -p "$dir" || die "cannot make $dir"
dir=$(cd "$dir" && pwd)

# --- Redis's source: Debian's source package (upstream tarball), downloaded once.
src="$dir/redis-7.0.15"
if [ ! -f "$src/src/server.c" ]; then
	if ! ls "$dir"/redis_7.0.15.orig.tar.gz >/dev/null 2>&1; then
		log "fetching Debian's source package redis (7.0.15) with apt-get source"
		(cd "$dir" && apt-get source --download-only redis) >"$dir/fetch.log" 2>&1 &&
			ls "$dir"/redis_7.0.15.orig.tar.gz >/dev/null 2>&1 ||
			skip "apt-get source redis failed (needs a deb-src entry in /etc/apt/sources.list.d/debian.sources: 'Types: deb deb-src', then apt-get update); see $dir/fetch.log"
	fi
	(cd "$dir" && tar xzf redis_7.0.15.orig.tar.gz) || die "cannot unpack $dir/redis_7.0.15.orig.tar.gz"
fi

# --- libptrec as the operator links it: installed (into a scratch DESTDIR), found by pkg-config.
# install_ptrec BUILDTREE DEST: installs BUILDTREE's libptrec into DEST.
install_ptrec() {
	rm -rf "$2"
	make -s -C "$1" install DESTDIR="$2" >"$2.log" 2>&1 || die "make install of $1 failed: see $2.log"
}
# ptrec_prefix DEST: the installed prefix under DEST (where lib/pkgconfig/libptrec.pc is).
ptrec_prefix() {
	pc=$(find "$1" -name libptrec.pc | head -1)
	[ -n "$pc" ] || die "no libptrec.pc under $1"
	dirname "$(dirname "$(dirname "$pc")")"
}
install_ptrec "$top_builddir" "$dir/ptrec-new"
[ -z "$baseline" ] || install_ptrec "$baseline" "$dir/ptrec-base"

# --- The builds.  build CC VARIANT: Redis's tree in $dir/CC-VARIANT with redis-server built.
# VARIANT plain: Redis as it is; rec / rec_base: the recipe against ptrec-new / ptrec-base.
build() {
	cc=$1 variant=$2 b="$dir/$(cname "$1")-$2"
	case $cc in
	*clang*) lto=-flto ldlto="-flto -fuse-ld=lld" ;;
	*) lto=-flto=auto ldlto="-flto=auto" ;;
	esac
	[ "$use_lto" = yes ] || lto="" ldlto=""
	cflags="$lto" libs=""
	if [ "$variant" != plain ]; then
		inst="$dir/ptrec-new"
		[ "$variant" = rec_base ] && inst="$dir/ptrec-base"
		prefix=$(ptrec_prefix "$inst")
		pcdir="$prefix/lib/pkgconfig"
		ptrec_cflags=$(CC="$cc" "$prefix/bin/ptrec" cflags) || die "ptrec cflags failed for $cc"
		cflags="$cflags $ptrec_cflags $(PKG_CONFIG_PATH=$pcdir pkg-config --define-variable=prefix="$prefix" --cflags libptrec)"
		libs="$(PKG_CONFIG_PATH=$pcdir pkg-config --define-variable=prefix="$prefix" --libs libptrec) -Wl,-rpath,$prefix/lib"
	fi
	# A tree built with the same flags is reused: plain as it is, a recording build relinked
	# (the hook archive is linked statically, and may have changed).  A recording tree starts
	# as a copy of the built plain tree, so Redis's bundled libraries (jemalloc, Lua, hiredis),
	# built alike, are not built again: Redis's Makefile would rebuild them on new flags.
	stamp="$cc|$variant|$cflags|$libs"
	if [ -f "$b/src/redis-server" ] && [ "$(cat "$b/.stamp" 2>/dev/null)" = "$stamp" ]; then
		[ "$variant" = plain ] && return 0
		rm -f "$b/src/redis-server"
	elif [ "$variant" = plain ]; then
		rm -rf "$b"
		cp -a "$src" "$b" || die "cannot copy $src"
	else
		rm -rf "$b"
		cp -a "$dir/$(cname "$cc")-plain" "$b" || die "cannot copy the plain build"
		rm -rf "$b/run" "$b/.stamp" "$b/src/redis-server" "$b/src/Makefile.dep"
		rm -f "$b/src/"*.o
		sed -i '/^\.make-prerequisites: persist-settings$/d' "$b/src/Makefile"
		# ptrec_init(NULL) first in main; the libraries at the end of the link line.
		sed -i -e '0,/^int main(int argc, char \*\*argv) {$/s//#include <ptrec.h>\nint main(int argc, char **argv) {\n    ptrec_init(NULL);/' \
			"$b/src/server.c"
		grep -q '^    ptrec_init(NULL);$' "$b/src/server.c" || die "cannot find main in $b/src/server.c"
		sed -i 's/^FINAL_LIBS=-lm$/FINAL_LIBS=-lm $(PTREC_LIBS)/' "$b/src/Makefile"
		grep -q 'PTREC_LIBS' "$b/src/Makefile" || die "cannot find FINAL_LIBS in $b/src/Makefile"
	fi
	log "building Redis: $cc, $variant (log: $b/build.log)"
	(cd "$b/src" && nice make -j2 CC="$cc" OPTIMIZATION=-O3 REDIS_CFLAGS="$cflags" \
		REDIS_LDFLAGS="-O3 $ldlto" PTREC_LIBS="$libs" redis-server) >"$b/build.log" 2>&1 ||
		die "building Redis ($cc, $variant) failed: see $b/build.log"
	echo "$stamp" >"$b/.stamp"
}

port=$((20000 + $$ % 20000))
# start CC-VARIANT: starts that redis-server on a free port; sets $srv_pid and $srv_port.
start() {
	b="$dir/$1"
	for _ in 1 2 3 4 5 6 7 8; do
		port=$((port + 1))
		rm -rf "$b/run"; mkdir -p "$b/run/dumps"
		(cd "$b/run" && PTREC_DIR="$b/run/dumps" PTREC_TOOL="$dir/tool" PTREC_SYSLOG=none \
			exec $(on_cpu 0) "$b/src/redis-server" --port "$port" --bind 127.0.0.1 --save "" \
			--appendonly no --daemonize no --enable-debug-command local \
			--logfile "$b/run/redis.log" --dir "$b/run") >"$b/run/err" 2>&1 &
		srv_pid=$! srv_port=$port
		for _ in $(seq 1 50); do
			[ "$(redis-cli -p "$port" ping 2>/dev/null)" = PONG ] && return 0
			kill -0 "$srv_pid" 2>/dev/null || break
			sleep 0.2
		done
		kill "$srv_pid" 2>/dev/null; wait "$srv_pid" 2>/dev/null
	done
	die "redis-server $1 does not start: $(cat "$b/run/err" "$b/run/redis.log")"
}
stop() { kill "$srv_pid" 2>/dev/null; wait "$srv_pid" 2>/dev/null; srv_pid=; }
# cpu_ns PID: the CPU time all threads of PID have run, in ns (/proc/PID/task/*/schedstat:
# the kernel's sum_exec_runtime).  Unlike requests per second, the server's CPU time per
# request hardly depends on what else the machine runs: it is the cost of the work itself.
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%d\n", s }'; }
srv_pid=
trap 'stop' EXIT

# recorded CC-VARIANT: crashes the server after some traffic; prints M of the crashed (main)
# thread's "last N of M branches" in its report (0 when it recorded nothing).
recorded() {
	start "$1"
	redis-benchmark -p "$srv_port" -t "$tests" -n 2000 -q >/dev/null 2>&1
	redis-cli -p "$srv_port" debug segfault >/dev/null 2>&1
	for _ in $(seq 1 600); do kill -0 "$srv_pid" 2>/dev/null || break; sleep 0.2; done
	stop
	for _ in $(seq 1 150); do
		ls "$dir/$1/run/dumps/"*.ptrec.txt >/dev/null 2>&1 && break
		sleep 0.2
	done
	rep=$(ls "$dir/$1/run/dumps/"*.ptrec.txt 2>/dev/null | head -1)
	[ -n "$rep" ] || { log "$1: no report in $dir/$1/run/dumps: $(cat "$dir/$1/run/err")"; echo 0; return; }
	cp "$rep" "$dir/$1.report"
	n=$(sed -n 's/^last [0-9]* of \([0-9]*\) branches.*/\1/p' "$rep" | head -1)
	echo "${n:-0}"
}

# The crash-time tool: this build tree's (the DESTDIR copy's baked-in paths are not installed).
ln -sf "$(cd "$(dirname "$tool")" && pwd)/ptrec" "$dir/tool"

variants="plain rec"
[ -z "$baseline" ] || variants="plain rec rec_base"
for cc in $compilers; do
	command -v "$cc" >/dev/null 2>&1 || { log "no $cc: skipped"; continue; }
	for v in $variants; do build "$cc" "$v"; done
done

# --- Recording verified, then the alternating runs, one bench at a time.
exec 9>"${TMPDIR:-/tmp}/ptrec-bench-redis.lock"
flock 9
: >"$dir/results"
verified=""
for cc in $compilers; do
	command -v "$cc" >/dev/null 2>&1 || continue
	for v in $variants; do
		[ "$v" = plain ] && continue
		n=$(recorded "$(cname "$cc")-$v")
		log "$(cname "$cc")-$v: the crash report shows $n branches of the main thread's history"
		verified="$verified $(cname "$cc")-$v=$n"
	done
done
for r in $(seq 1 "$runs"); do
	for cc in $compilers; do
		command -v "$cc" >/dev/null 2>&1 || continue
		for v in $variants; do
			start "$(cname "$cc")-$v"
			for p in 1 16; do
				for t in $(echo "$tests" | tr , ' '); do
					c0=$(cpu_ns "$srv_pid")
					n=$requests
					[ "$p" = 1 ] || n=$((requests * 10))
					rps=$($(on_cpu 1) redis-benchmark -p "$srv_port" -t "$t" -n "$n" -P "$p" --csv 2>/dev/null |
						sed -n 's/^"[A-Z_]*[^"]*","\([0-9.]*\)".*/\1/p' | head -1)
					c1=$(cpu_ns "$srv_pid")
					echo "$(cname "$cc") $v $p $(echo "$t" | tr a-z A-Z) ${rps:-0} $r $(((c1 - c0) / n))" >>"$dir/results"
				done
			done
			stop
		done
	done
	log "run $r of $runs done"
done

# --- The table: medians per compiler, test and pipelining.
# spread: (max - min) / median of the numbers on stdin.
spread() { sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) { print 0; exit } m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; print (m > 0 ? (v[NR] - v[1]) / m : 0) }'; }
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print 0; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
lto_note="-O3, LTO"
[ "$use_lto" = yes ] || lto_note="-O3, no LTO"
echo "Redis 7.0.15 ($lto_note), redis-benchmark -t $tests -n $requests (pipelined: -n $((requests * 10))), median of $runs alternating runs"
echo "machine: $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end, $(date -u +%Y-%m-%d)"
echo "spread: (slowest - fastest) / median of each build's runs, the larger of plain's and rec's"
echo "ns/req: the server's CPU time per request (all its threads; median); cpu ratio = plain ns/req / rec ns/req,"
echo "  the throughput ratio a CPU-bound server gets, and far less sensitive to other load than req/s;"
echo "  paired: the median over runs of that run's plain ns/req / rec ns/req (plain and rec ran back to back)"
echo "pinned: $( [ -n "$(on_cpu 0)" ] && echo "server on CPU 0, redis-benchmark on CPU 1" || echo no)"
echo "recording verified (branches in the main thread's crash report):$verified"
hdr="compiler  test   pipeline     plain req/s      rec req/s  rec/plain  spread  plain ns/req  rec ns/req  cpu ratio  paired"
[ -z "$baseline" ] || hdr="$hdr   base req/s  base/plain"
echo "$hdr"
for cc in $compilers; do
	command -v "$cc" >/dev/null 2>&1 || continue
	cc=$(cname "$cc")
	for p in 1 16; do
		for t in SET GET INCR LPUSH; do
			pl=$(awk -v c="$cc" -v p="$p" -v t="$t" '$1 == c && $2 == "plain" && $3 == p && $4 == t { print $5 }' "$dir/results" | median)
			rc=$(awk -v c="$cc" -v p="$p" -v t="$t" '$1 == c && $2 == "rec" && $3 == p && $4 == t { print $5 }' "$dir/results" | median)
			sp=$(awk -v c="$cc" -v p="$p" -v t="$t" '$1 == c && $2 == "plain" && $3 == p && $4 == t { print $5 }' "$dir/results" | spread)
			sr=$(awk -v c="$cc" -v p="$p" -v t="$t" '$1 == c && $2 == "rec" && $3 == p && $4 == t { print $5 }' "$dir/results" | spread)
			cp=$(awk -v c="$cc" -v p="$p" -v t="$t" '$1 == c && $2 == "plain" && $3 == p && $4 == t { print $7 }' "$dir/results" | median)
			cr=$(awk -v c="$cc" -v p="$p" -v t="$t" '$1 == c && $2 == "rec" && $3 == p && $4 == t { print $7 }' "$dir/results" | median)
			pr=$(awk -v c="$cc" -v p="$p" -v t="$t" '$1 == c && $3 == p && $4 == t && ($2 == "plain" || $2 == "rec") { v[$2, $6] = $7 }
				END { for (k in v) { split(k, f, SUBSEP); if (f[1] == "plain" && v["rec", f[2]] > 0) print v[k] / v["rec", f[2]] } }' "$dir/results" | median)
			line=$(awk -v c="$cc" -v t="$t" -v p="$p" -v a="$pl" -v b="$rc" -v x="$sp" -v y="$sr" -v u="$cp" -v w="$cr" -v q="$pr" 'BEGIN { printf "%-9s %-6s %8s %15.0f %14.0f %10.2f %6.0f%% %13.0f %11.0f %10.2f %7.2f", c, t, (p == 1 ? "none" : "-P " p), a, b, (a > 0 ? b / a : 0), 100 * (x > y ? x : y), u, w, (w > 0 ? u / w : 0), q }')
			if [ -n "$baseline" ]; then
				bs=$(awk -v c="$cc" -v p="$p" -v t="$t" '$1 == c && $2 == "rec_base" && $3 == p && $4 == t { print $5 }' "$dir/results" | median)
				line="$line$(awk -v a="$pl" -v b="$bs" 'BEGIN { printf " %12.0f %11.2f", b, (a > 0 ? b / a : 0) }')"
			fi
			echo "$line"
		done
	done
done
