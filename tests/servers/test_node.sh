#!/bin/sh
# A language runtime: Node.js (a test-only peer configure finds) run unmodified under
# `ptrec run`.  V8 bounds-checks WebAssembly memory with guard pages: an out-of-bounds load
# faults (SIGSEGV), and V8's trap handler moves the thread to a landing pad that throws
# WebAssembly.RuntimeError.  Expected: (1) 100 such traps in the main thread and 100 in a
# worker thread leave no dump, no ptrec line and the program's own exit status 3; (2) then
# process.kill(process.pid, 'SIGSEGV'): killed by SIGSEGV as without libptrec (139), exactly one
# dump and report naming the signal node sent itself.
if [ -z "${NODE_BIN:-}" ]; then
	echo "SKIP: configure found no node (Debian package nodejs)"
	exit 77
fi
. "$top_srcdir/tests/servers/server_common.sh"

cat >"$work/wasm.js" <<'JS'
const { Worker, isMainThread, parentPort } = require('worker_threads');
// (module (memory 1) (func (export "load") (param i32) (result i32) local.get 0 i32.load))
const bytes = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 6, 1, 96, 1, 127, 1, 127, 3, 2, 1,
	0, 5, 3, 1, 0, 1, 7, 8, 1, 4, 108, 111, 97, 100, 0, 0, 10, 9, 1, 7, 0, 32, 0, 40, 2, 0, 11]);
function traps() {
	const m = new WebAssembly.Instance(new WebAssembly.Module(bytes));
	let n = 0;
	for (let i = 0; i < 100; i++) {
		try { m.exports.load(0x7ffffff0 - 64 * i); } catch (e) {
			if (!(e instanceof WebAssembly.RuntimeError)) throw e;
			n++;
		}
	}
	return n + (m.exports.load(0) === 0 ? 0 : 1000);
}
if (!isMainThread) {
	parentPort.postMessage(traps());
} else {
	const main = traps();
	const w = new Worker(__filename);
	w.on('message', (n) => {
		console.log('traps: main ' + main + ', worker ' + n);
		if (process.argv[2] === 'kill') process.kill(process.pid, 'SIGSEGV');
		process.exitCode = 3;
	});
}
JS

# (1) WebAssembly traps
(cd "$work" && exec "$PTREC_TOOL" run --dir "$work/dumps" -- "$NODE_BIN" "$work/wasm.js") \
	>"$work/out" 2>"$work/err"
status=$?
echo "--- traps (status $status), stdout:"; cat "$work/out"; echo "--- stderr:"; cat "$work/err"
[ "$status" -eq 3 ] || fail "exit status $status, expected the program's own 3"
grep -q '^traps: main 100, worker 100$' "$work/out" || fail "the out-of-bounds loads did not all throw RuntimeError"
nothing_for "WebAssembly traps"

# (2) the same, then node sends itself SIGSEGV
(cd "$work" && exec "$PTREC_TOOL" run --dir "$work/dumps" --report-timeout 30000 -- \
	"$NODE_BIN" "$work/wasm.js" kill) >"$work/out" 2>"$work/err" &
pid=$!
wait_server 60 "did not end"
echo "--- kill (status $status), stderr:"; cat "$work/err"
[ "$status" -eq 139 ] || fail "exit status $status, expected 139 (killed by SIGSEGV)"
grep -q '^traps: main 100, worker 100$' "$work/out" || fail "the traps before the kill were not all caught"
one_dump "$(sed -n 's/^ptrec: SIGSEGV in pid \([0-9]*\) .*/\1/p' "$work/err")" "$work/err"
grep -q '^event: *crash, signal SIGSEGV (11), code SI_USER (0)$' "$report" || fail "the report does not name the kill"
grep -q '^sent by: *pid [0-9]*, uid [0-9]* (this process)$' "$report" || fail "the report does not name node as the sender"
echo "PASS: node under ptrec run: WebAssembly traps left nothing, its SIGSEGV to itself one dump"
