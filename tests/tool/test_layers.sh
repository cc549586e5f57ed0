#!/bin/sh
# test_layers.sh — the layer rule of libptrec/ as a test: a file may include headers of its own
# folder and of the folders below it, never above.  Two stacks share the bottom:
#
#   server side (libptrec_rt, runs inside the server):  core < platform < dump < capture < crash < runtime
#   read side (libptrec_read, the tool and tests only): core < platform < dump < decode < symbols < report
#   tool (the `ptrec` command) may include everything; helper (ptrec-helper) the server side's
#   bottom and capture.
#
# So the read side never includes capture/, crash/ or runtime/, and nothing that runs in the
# server includes the decoders.  Headers without a folder ("ptrec.h", "config.h") are the public
# API and the generated configuration: allowed everywhere.  A folder not in the table fails the
# test, so a new layer has to say where it stands.
set -u
src="${top_srcdir:-.}/libptrec"
[ -d "$src" ] || { echo "FAIL: no libptrec/ under top_srcdir=${top_srcdir:-.}"; exit 1; }

# allowed LAYER -> the folders its files may include
allowed() {
	case "$1" in
	core)     echo "core" ;;
	platform) echo "core platform" ;;
	dump)     echo "core platform dump" ;;
	capture)  echo "core platform dump capture" ;;
	crash)    echo "core platform dump capture crash" ;;
	runtime)  echo "core platform dump capture crash runtime" ;;
	decode)   echo "core platform dump decode" ;;
	symbols)  echo "core platform dump decode symbols" ;;
	report)   echo "core platform dump decode symbols report" ;;
	helper)   echo "core platform dump capture helper" ;;
	tool)     echo "core platform dump capture crash runtime decode symbols report helper tool" ;;
	*)        echo "?" ;;
	esac
}

status=0
files=0
edges=0
for dir in "$src"/*/; do
	layer=$(basename "$dir")
	ok=$(allowed "$layer")
	if [ "$ok" = "?" ]; then
		echo "FAIL: libptrec/$layer/ is not in the layer table of $0"
		status=1
		continue
	fi
	for f in "$dir"*.c "$dir"*.h; do
		[ -f "$f" ] || continue
		files=$((files + 1))
		# every quoted include that names a folder: '#include "decode/pt_flow.h"' -> decode
		for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([a-z_]*\)\/[^"]*".*/\1/p' "$f"); do
			edges=$((edges + 1))
			case " $ok " in
			*" $inc "*) ;;
			*) echo "FAIL: libptrec/$layer/$(basename "$f") includes $inc/ (a $layer file may include: $ok)"
			   status=1 ;;
			esac
		done
		# a quoted include without a folder must be the public API or the generated config
		for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"/]*\)".*/\1/p' "$f"); do
			case "$inc" in
			ptrec.h|config.h) ;;
			*) echo "FAIL: libptrec/$layer/$(basename "$f") includes \"$inc\" without its folder"
			   status=1 ;;
			esac
		done
	done
done
echo "$files files, $edges includes between folders checked"
[ $status -eq 0 ] && echo "PASS: every include points down the layers"

# The rule must be able to fail: a decoder that includes the runtime, and an unknown folder.
if [ -z "${PTREC_LAYERS_INNER:-}" ]; then
	t=$(mktemp -d "${TMPDIR:-/tmp}/ptrec-layers.XXXXXX")
	mkdir -p "$t/libptrec/decode" "$t/libptrec/core"
	printf '#include "runtime/recorder.h"\n' >"$t/libptrec/decode/bad.c"
	printf '#include "core/ok.h"\n' >"$t/libptrec/core/ok.c"
	out=$(PTREC_LAYERS_INNER=1 top_srcdir="$t" sh "$0" 2>&1); r1=$?
	mkdir -p "$t/libptrec/misc"; rm "$t/libptrec/decode/bad.c"
	out2=$(PTREC_LAYERS_INNER=1 top_srcdir="$t" sh "$0" 2>&1); r2=$?
	rm -rf "$t"
	if [ $r1 -eq 0 ] || ! echo "$out" | grep -q 'decode/bad.c includes runtime/'; then
		echo "FAIL: the check accepted decode/ including runtime/: $out"; status=1
	fi
	if [ $r2 -eq 0 ] || ! echo "$out2" | grep -q 'misc/ is not in the layer table'; then
		echo "FAIL: the check accepted an unknown folder: $out2"; status=1
	fi
fi
exit $status
