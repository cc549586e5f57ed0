#!/bin/sh
# Symbols from where fleets keep them (tool/debuginfod.h, doc/report-format.md): a fully
# stripped program crashes under `ptrec run`; Debian's debuginfod serves its debug file and
# executable on 127.0.0.1.
# - The crash-time report never goes to the network by itself (DEBUGINFOD_URLS is set in the
#   program's environment: the report child does not get it), unless PTREC_REPORT_DEBUGINFOD=1.
# - `ptrec report` later fetches the debug file by build-id (debuginfod-find, and curl when
#   debuginfod-find is not on PATH) into elfutils' cache ($XDG_CACHE_HOME/debuginfod_client/
#   BUILDID/debuginfo), names the functions with file:line, says so in its warnings, and uses
#   the cache offline after.
# - An unreachable server costs the report nothing but its names.
# - The file on disk replaced since the crash: refused as before; `--binary FILE` with the
#   dump's build-id is used, one with another build-id is refused; with debuginfod the
#   executable itself is fetched.
. "$top_srcdir/tests/crash/run_common.sh"

command -v debuginfod >/dev/null 2>&1 || { echo "SKIP: debuginfod (Debian package debuginfod) is not installed"; exit 77; }
command -v curl >/dev/null 2>&1 || { echo "SKIP: curl is not installed"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 (to find a free port) is not installed"; exit 77; }
command -v readelf >/dev/null 2>&1 || { echo "SKIP: readelf (binutils) is not installed"; exit 77; }

orig="$top_builddir/tests/crash/plain_crasher"
id=$(readelf -n "$orig" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
[ -n "$id" ] || fail "plain_crasher has no build-id"
"${OBJDUMP:-objdump}" -h "$orig" | grep -q '\.debug_info' || fail "plain_crasher has no debug information to serve"
stripped="$work/bin/stripped"
"${OBJCOPY:-objcopy}" --strip-all "$orig" "$stripped" || fail "objcopy --strip-all failed"
"${NM:-nm}" "$stripped" 2>&1 | grep -q 'no symbols' || fail "the stripped copy still has symbols"
mkdir "$work/srv"
"${OBJCOPY:-objcopy}" --only-keep-debug "$orig" "$work/srv/plain_crasher.debug" || fail "objcopy --only-keep-debug failed"
cp "$stripped" "$work/srv/plain_crasher"

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
(cd "$work" && exec env -u LD_PRELOAD debuginfod -F -p "$port" -d "$work/db.sqlite" "$work/srv") >"$work/debuginfod.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
url="http://127.0.0.1:$port"
i=0
until env -u LD_PRELOAD curl -sf --max-time 10 -o /dev/null "$url/buildid/$id/debuginfo"; do
	i=$((i + 1))
	kill -0 $server 2>/dev/null || { cat "$work/debuginfod.log"; fail "debuginfod exited"; }
	[ $i -lt 120 ] || { cat "$work/debuginfod.log"; fail "debuginfod did not serve $id within 60 s"; }
	sleep 0.5
done
echo "--- debuginfod on $url serves $id"

named() { # named FILE: the report names the faulting function and its caller, with file:line
	# (GCC may name them parse_header.constprop.0 at -O2)
	grep -q '^symbol: *parse_header[.a-z0-9]*+0x' "$1" &&
		grep -q ' handle_request[.a-z0-9]*+0x[0-9a-f]* (.*plain_crasher\.c:[0-9]*)' "$1"
}
crash() { # crash CACHE_HOME [VAR=VALUE]: crashes the stripped program, DEBUGINFOD_URLS set; $dump
	env XDG_CACHE_HOME="$1" DEBUGINFOD_URLS="$url" ${2:+"$2"} \
		sh -c 'cd "$1" && exec "$2" run --dir "$1/dumps" -- "$3" segv' sh "$work" "$PTREC_TOOL" "$stripped" \
		>"$work/out" 2>"$work/err"
	status=$?
	cat "$work/err"
	[ "$status" -eq 139 ] || fail "exit status $status, expected 139"
	pid=$(sed -n 's/^ptrec: SIGSEGV in pid \([0-9]*\) .*/\1/p' "$work/err")
	dump=$(dumps_of "$pid")
	[ -n "$dump" ] && [ -f "$dump.txt" ] || fail "no dump and report of pid $pid"
}
report() { # report OUT [ARGS...]: ptrec report ARGS $dump into OUT, its stderr in OUT.err
	out=$1; shift
	# the tool (linked with the sanitizers in that build) runs without run_common.sh's
	# LD_PRELOAD of libasan, which the curl it starts would inherit and then hang in
	(unset LD_PRELOAD; exec "$PTREC_TOOL" report "$@" "$dump") >"$out" 2>"$out.err"
	rc=$?
	echo "--- ptrec report $* (status $rc)"; cat "$out.err"
	[ "$rc" -eq 0 ] || fail "ptrec report $* failed with status $rc"
}

# 1. at crash time: no network, although the program's environment has DEBUGINFOD_URLS
crash "$work/c0"
named "$dump.txt" && fail "the crash-time report has names: it went to the network"
grep -q '^symbol:' "$dump.txt" && fail "the crash-time report names a symbol of a stripped program"
[ ! -e "$work/c0/debuginfod_client/$id" ] || fail "the crash-time report fetched into the cache"
first=$dump
# ... unless asked for
crash "$work/c1" PTREC_REPORT_DEBUGINFOD=1
named "$dump.txt" || { cat "$dump.txt"; fail "PTREC_REPORT_DEBUGINFOD=1: the crash-time report did not fetch the debug file"; }
[ -s "$work/c1/debuginfod_client/$id/debuginfo" ] || fail "PTREC_REPORT_DEBUGINFOD=1: nothing in the cache"
dump=$first

# 2. later, through debuginfod-find when it is installed (else curl)
export XDG_CACHE_HOME="$work/c2"
DEBUGINFOD_URLS= report "$work/r0.txt"
named "$work/r0.txt" && fail "names without DEBUGINFOD_URLS and with an empty cache"
DEBUGINFOD_URLS=$url report "$work/r1.txt"
named "$work/r1.txt" || { cat "$work/r1.txt"; fail "ptrec report did not name the functions from the fetched debug file"; }
cmp -s "$work/c2/debuginfod_client/$id/debuginfo" "$work/srv/plain_crasher.debug" ||
	fail "the cache does not hold the served debug file at \$XDG_CACHE_HOME/debuginfod_client/$id/debuginfo"
grep -q "^- debuginfod: fetched the debuginfo of $stripped (build-id $id)" "$work/r1.txt" || fail "the report's warnings do not say what was fetched"
# offline now: the cache is enough
DEBUGINFOD_URLS= report "$work/r2.txt"
named "$work/r2.txt" || fail "the cached debug file is not used offline"

# 3. through curl (no debuginfod-find on PATH), into another cache
mkdir "$work/curlbin"
ln -s "$(command -v curl)" "$work/curlbin/curl"
XDG_CACHE_HOME="$work/c3" DEBUGINFOD_URLS="$url/" PATH="$work/curlbin" report "$work/r3.txt"
named "$work/r3.txt" || { cat "$work/r3.txt"; fail "curl: ptrec report did not name the functions"; }
cmp -s "$work/c3/debuginfod_client/$id/debuginfo" "$work/srv/plain_crasher.debug" || fail "curl: the cache does not hold the debug file"
ls -A "$work/c3/debuginfod_client/$id" | grep -q '^\.' && fail "curl: a temporary file was left in the cache"

# 4. an unreachable server: the report is written all the same, without names
XDG_CACHE_HOME="$work/c4" DEBUGINFOD_URLS="http://127.0.0.1:1" DEBUGINFOD_TIMEOUT=5 report "$work/r4.txt"
named "$work/r4.txt" && fail "names from an unreachable server"
grep -q "^- debuginfod: no server of DEBUGINFOD_URLS has the debuginfo of $stripped" "$work/r4.txt" || fail "the report's warnings do not say that no server had the debug file"

# 5. the file on disk replaced since the crash
other="$top_builddir/tests/crash/dump_check" # another program: another build-id
cp "$other" "$stripped"
XDG_CACHE_HOME="$work/c5" DEBUGINFOD_URLS= report "$work/r5.txt"
grep -q "$stripped: build-id mismatch" "$work/r5.txt" || fail "no build-id mismatch warning"
named "$work/r5.txt" && fail "names from a file with another build-id"
XDG_CACHE_HOME="$work/c5" DEBUGINFOD_URLS= report "$work/r6.txt" --binary "$other"
grep -q -- "--binary: its build-id is not the one of any module of the dump; not used" "$work/r6.txt.err" ||
	fail "a --binary with another build-id is not refused"
named "$work/r6.txt" && fail "names from a --binary with another build-id"
XDG_CACHE_HOME="$work/c5" DEBUGINFOD_URLS= report "$work/r7.txt" --binary "$orig"
named "$work/r7.txt" || { cat "$work/r7.txt"; fail "--binary with the dump's build-id is not used"; }
grep -q "$stripped: using $orig instead (--binary" "$work/r7.txt" || fail "the report does not say it used the --binary file"
# ... or fetched: the executable and its debug file
XDG_CACHE_HOME="$work/c6" DEBUGINFOD_URLS=$url report "$work/r8.txt"
named "$work/r8.txt" || { cat "$work/r8.txt"; fail "the fetched executable and debug file are not used"; }
cmp -s "$work/c6/debuginfod_client/$id/executable" "$work/srv/plain_crasher" || fail "the executable is not in the cache"
grep -q "using $work/c6/debuginfod_client/$id/executable instead" "$work/r8.txt" || fail "the report does not say it used the fetched executable"
echo "PASS: debug files and executables come from debuginfod by build-id, never at crash time unless asked"
