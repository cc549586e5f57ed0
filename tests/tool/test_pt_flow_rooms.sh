#!/bin/sh
# test_pt_flow_rooms.sh — the PT flow decoder's rooms (libptrec/decode/pt_flow*, listed in
# pt_flow_state.h) as a test: dependencies run one way.  Each file belongs to a room with a
# rank; it may include the headers of rooms of a lower rank and its own room's header, never a
# room of its own rank or above (so no two rooms depend on each other).  Every pt_flow* file
# must be in the table (a new room says where it stands) and open with a comment that names
# it and says what it holds.
#
#   0 pt_flow.h          the interface
#   1 pt_flow_state      the state, its limits and the operations every room uses
#   1 pt_flow_errata     which errata a CPU model has
#   2 pt_flow_blk        the block cache
#   3 pt_flow_fast       the hot paths
#   3 pt_flow_query      event/query state: packets, look-ahead, held items, PSB+
#   4 pt_flow_resync     gaps, resync, the errata the walk asks about
#   5 pt_flow_walk       the slow path
#   6 pt_flow_chain      ptrec_pt_flow_count: chains and spans
#   7 pt_flow.c          the driver
set -u
dir="${top_srcdir:-.}/libptrec/decode"
[ -d "$dir" ] || { echo "FAIL: no libptrec/decode/ under top_srcdir=${top_srcdir:-.}"; exit 1; }

# rank ROOM (a file's name without .c/.h; pt_flow.h is "pt_flow.h", pt_flow.c "pt_flow.c")
rank() {
	case "$1" in
	pt_flow.h)      echo 0 ;;
	pt_flow_state)  echo 1 ;;
	pt_flow_errata) echo 1 ;;
	pt_flow_blk)    echo 2 ;;
	pt_flow_fast)   echo 3 ;;
	pt_flow_query)  echo 3 ;;
	pt_flow_resync) echo 4 ;;
	pt_flow_walk)   echo 5 ;;
	pt_flow_chain)  echo 6 ;;
	pt_flow.c)      echo 7 ;;
	*)              echo "?" ;;
	esac
}
room() {
	case "$1" in
	pt_flow.h|pt_flow.c) echo "$1" ;;
	*) echo "${1%.[ch]}" ;;
	esac
}

status=0
files=0
edges=0
for f in "$dir"/pt_flow*.c "$dir"/pt_flow*.h; do
	[ -f "$f" ] || continue
	name=$(basename "$f")
	me=$(room "$name")
	r=$(rank "$me")
	files=$((files + 1))
	if [ "$r" = "?" ]; then
		echo "FAIL: $name is not in the room table of $0"
		status=1
		continue
	fi
	if ! head -n 1 "$f" | grep -q "^/\* $name — ."; then
		echo "FAIL: $name does not open with '/* $name — what it holds'"
		status=1
	fi
	for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"decode\/\(pt_flow[a-z_]*\.h\)".*/\1/p' "$f"); do
		edges=$((edges + 1))
		other=$(room "$inc")
		[ "$other" = "$me" ] && continue
		[ "$inc" = pt_flow.h ] && other=pt_flow.h
		ro=$(rank "$other")
		if [ "$ro" = "?" ] || [ "$ro" -ge "$r" ]; then
			echo "FAIL: $name (rank $r) includes $inc (rank $ro): rooms may only include lower ones"
			status=1
		fi
	done
done
# A room's header declares only its own functions (defined in its .c): a header that declares
# those of a room above it would make a circle the includes do not show.
decls=0
for h in "$dir"/pt_flow_*.h; do
	[ -f "$h" ] || continue
	c="${h%.h}.c"
	for fn in $(sed -n 's/^PT_FLOW_HIDDEN [^(]*[ *]\([a-z_0-9]*\)(.*/\1/p' "$h"); do
		decls=$((decls + 1))
		if [ ! -f "$c" ] || ! grep -q "^[a-z].*[ *]$fn(" "$c"; then
			echo "FAIL: $(basename "$h") declares $fn, which $(basename "$c") does not define"
			status=1
		fi
	done
done
echo "$files files, $edges includes between rooms, $decls hidden functions checked"
[ "$files" -ge 10 ] || { echo "FAIL: only $files pt_flow files found"; status=1; }
[ $status -eq 0 ] && echo "PASS: the pt_flow rooms depend one way"

# The rule must be able to fail: the block cache including the walk, and a room not in the table.
if [ -z "${PTREC_ROOMS_INNER:-}" ]; then
	t=$(mktemp -d "${TMPDIR:-/tmp}/ptrec-rooms.XXXXXX")
	mkdir -p "$t/libptrec/decode"
	cp "$dir"/pt_flow*.[ch] "$t/libptrec/decode/"
	printf '#include "decode/pt_flow_walk.h"\n' >>"$t/libptrec/decode/pt_flow_blk.c"
	out=$(PTREC_ROOMS_INNER=1 top_srcdir="$t" sh "$0" 2>&1); r1=$?
	cp "$dir/pt_flow_blk.c" "$t/libptrec/decode/pt_flow_blk.c"
	printf '/* pt_flow_misc.c — nowhere */\n' >"$t/libptrec/decode/pt_flow_misc.c"
	out2=$(PTREC_ROOMS_INNER=1 top_srcdir="$t" sh "$0" 2>&1); r2=$?
	rm -rf "$t"
	if [ $r1 -eq 0 ] || ! echo "$out" | grep -q 'pt_flow_blk.c (rank 2) includes pt_flow_walk.h'; then
		echo "FAIL: the check accepted the block cache including the walk: $out"; status=1
	fi
	if [ $r2 -eq 0 ] || ! echo "$out2" | grep -q 'pt_flow_misc.c is not in the room table'; then
		echo "FAIL: the check accepted an unknown room: $out2"; status=1
	fi
fi
exit $status
