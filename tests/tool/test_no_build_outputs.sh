#!/bin/sh
# test_no_build_outputs.sh — nothing build-generated is committed: no tracked file is an ELF
# object, archive or program, and no tracked path is a build product by name (objects,
# libraries, Automake/libtool outputs, test logs, crash dumps, scratch folders, and the leftovers
# of patch and editors: *.orig, *.rej, *~).
set -u
cd "${top_srcdir:-.}" || exit 1
command -v git >/dev/null 2>&1 || { echo "SKIP: git not installed"; exit 77; }
git rev-parse --is-inside-work-tree >/dev/null 2>&1 ||
	{ echo "SKIP: not a git checkout (a release tarball has no history to check)"; exit 77; }

status=0
n=0
for f in $(git ls-files); do
	n=$((n + 1))
	[ -f "$f" ] || continue
	case "$f" in
	*.o|*.lo|*.la|*.a|*.so|*.so.*|*.log|*.trs|*.ptrec|*.ptrec.txt|Makefile.in|configure|config.status|tests/tmp*|*.orig|*.rej|*~)
		echo "FAIL: tracked build product $f"; status=1; continue ;;
	esac
	magic=$(head -c 4 "$f" | od -An -tx1 | tr -d ' \n')
	case "$magic" in
	7f454c46) echo "FAIL: tracked ELF file $f"; status=1 ;;
	213c6172) echo "FAIL: tracked ar archive $f"; status=1 ;;
	esac
done
echo "$n tracked files checked"
[ $status -eq 0 ] && echo "PASS: no tracked build output"
exit $status
