#!/bin/sh
# A real interpreter's server with its own fatal-signal handler: Debian's CPython (a test-only
# peer configure finds; .ci/run installs python3) running http.server's ThreadingHTTPServer
# with faulthandler on (-X faulthandler, as PYTHONFAULTHANDLER=1 in a unit's environment): its
# SIGSEGV handler prints the Python traceback of every thread, then restores the previous
# handler and raises the signal again.  A request whose handler reads address 0 through ctypes
# faults for real in its own thread.  Run once without libptrec and once under `ptrec run`:
# both end with status 139 and the same faulthandler output (the crashed thread's traceback),
# and under ptrec run exactly one
# 0600 dump and report of the request's thread, with the fault at 0 and the C stack from
# ctypes' libffi call through the interpreter to start_thread.
if [ -z "${PYTHON3_BIN:-}" ]; then
	echo "SKIP: configure found no python3 (Debian package python3)"
	exit 77
fi
"$PYTHON3_BIN" -c 'import ctypes, http.server' 2>/dev/null ||
	{ echo "SKIP: $PYTHON3_BIN has no ctypes or http.server"; exit 77; }
command -v bash >/dev/null || { echo "SKIP: no bash for the HTTP requests"; exit 77; }
. "$top_srcdir/tests/servers/server_common.sh"

free_port
cat >"$work/server.py" <<'PY'
import ctypes, http.server, sys

class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/crash":
            ctypes.string_at(0)
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"ok\n")

http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
PY

# request PATH: one HTTP request; its status line into $work/response
request() {
	bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" && printf "GET %s HTTP/1.0\r\n\r\n" "$2" >&3 &&
		head -n 1 <&3' request "$port" "$1" >"$work/response" 2>/dev/null
}
# serve NAME [PTREC...]: the server (under `ptrec run` when PTREC is given), its output in
# $work/NAME.err; serves /ok, then faults in /crash; sets $victim and $status.
serve() {
	name=$1
	shift
	(cd "$work" && exec "$@" "$PYTHON3_BIN" -X faulthandler "$work/server.py" "$port") \
		>"$work/$name.out" 2>"$work/$name.err" &
	pid=$!
	for _ in $(seq 1 100); do
		request /ok && grep -q '^HTTP/1.0 200 ' "$work/response" && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.2
	done
	grep -q '^HTTP/1.0 200 ' "$work/response" || { cat "$work/$name.err"; fail "python did not serve /ok"; }
	victim=$pid
	request /crash
	wait_server 60 "did not die of the fault"
	echo "--- python $name (status $status), stderr:"; cat "$work/$name.err"
	[ "$status" -eq 139 ] || fail "python $name ended with status $status, expected 139"
}
# traceback NAME: faulthandler's output in NAME.err up to the end of the crashed thread's
# traceback (where the main thread was then is a matter of timing), its id left out
traceback() {
	awk '/^Fatal Python error/ { on = 1 } on { print } on && /^$/ && ++blank == 2 { exit }' \
		"$work/$1.err" | sed 's/hread 0x[0-9a-f]*/hread ID/'
}

serve plain env
serve ptrec "$PTREC_TOOL" run --dir "$work/dumps" --report-timeout 30000 --
traceback plain >"$work/plain.tb"
traceback ptrec >"$work/ptrec.tb"
grep -q '^Fatal Python error: Segmentation fault$' "$work/plain.tb" ||
	fail "faulthandler did not report the fault without libptrec"
grep -q 'in do_GET$' "$work/plain.tb" || fail "faulthandler's traceback does not show do_GET"
diff "$work/plain.tb" "$work/ptrec.tb" || fail "faulthandler's output differs under ptrec run"

one_dump "$victim" "$work/ptrec.err"
grep -q "^pid: *$victim  thread: " "$report" && ! grep -q "^pid: *$victim  thread: $victim\$" "$report" ||
	fail "the crashed thread is not the request's thread"
grep -q '^event: *crash, signal SIGSEGV (11), code SEGV_MAPERR (1)$' "$report" || fail "not a SEGV_MAPERR"
grep -q '^fault address: 0x0$' "$report" || fail "the fault address is not 0"
grep -q '^dump: *complete, 2 thread(s)$' "$report" || fail "the dump does not hold both threads"
case "$stack" in
*"ffi_call "*"_PyEval_EvalFrameDefault "*"start_thread "*) ;;
*) fail "the crashed thread's stack is not ctypes' call from the interpreter in a thread: $stack" ;;
esac
echo "PASS: python with faulthandler under ptrec run: a request thread's fault dumped, the same traceback and status"
