#!/bin/sh
# test_cmd_upload.sh — `ptrec upload` against a crash server's minidump endpoint written for the
# test (upload_receiver.py: Python's http.server on 127.0.0.1, checking every body against
# RFC 7578 and answering 200, 429 with Retry-After, 500 or 413 as told), with real crash dumps
# of tests/crash/crasher:
#  - what is posted: upload_file_minidump (the dump's minidump), the text report (DUMP.txt as
#    it is) and the JSON report as files, release, host, tags, breadcrumbs; a Sentry DSN posts
#    to /api/PROJECT/minidump/?sentry_key=KEY; a configuration file and the environment work;
#  - nothing is lost: --pending leaves a dump written in the last minute; after 429 and 500 the dump stays pending, --pending waits (Retry-After,
#    a backoff that doubles) and then sends it exactly once; an uploaded dump is never sent
#    again by --pending; a named dump is tried at once; 413 is reported with the server's
#    message; an unreachable server, a missing curl and --max-size post nothing and keep it
#    pending; a dump another run is sending is left to it; no dump or report is ever changed
#    or removed;
#  - each minidump posted goes through Breakpad's minidump_stackwalk when it is installed.
. "$top_srcdir/tests/tool/tool_common.sh"

command -v curl >/dev/null 2>&1 || { echo "SKIP: curl not found (ptrec upload posts with it)"; exit 77; }
py=${PYTHON3_BIN:-$(command -v python3 || true)}
[ -n "$py" ] && [ -x "$py" ] || { echo "SKIP: python3 not found (the test's HTTP receiver)"; exit 77; }
crasher="$top_builddir/tests/crash/crasher"
[ -x "$crasher" ] || { echo "crasher not built: $crasher"; exit 99; }

mkdir "$tmp/dumps" "$tmp/recv" "$tmp/bin"
trap 'kill ${recv_pid:-} 2>/dev/null; rm -rf "$tmp"' EXIT HUP INT TERM

# ---- two real crash dumps with their reports --------------------------------------------------
for c in segv_null abort; do
	(cd "$tmp" && exec env PTREC_DIR="$tmp/dumps" PTREC_BACKEND=instrumented PTREC_SYSLOG=none \
		PTREC_REPORT_TIMEOUT_MS=20000 ASAN_OPTIONS="handle_segv=0:handle_abort=0:detect_leaks=0:allow_user_segv_handler=1" \
		"$crasher" $c) >/dev/null 2>&1
done
set -- "$tmp"/dumps/*.ptrec
[ $# -eq 2 ] || { echo "expected 2 dumps, found: $*"; exit 99; }
d1=$1 d2=$2
for d in "$d1" "$d2"; do
	[ -f "$d.txt" ] || { echo "no report beside $d"; exit 99; }
done
# The minidumps `ptrec minidump` writes: what each post must carry.
m1=$tmp/1.dmp m2=$tmp/2.dmp
"$tool" minidump "$d1" -o "$m1" && "$tool" minidump "$d2" -o "$m2" || { echo "ptrec minidump failed"; exit 99; }
snapshot() { (cd "$tmp/dumps" && ls -l --time-style=+%s | sed 1d && sha256sum *); }

# ---- the receiver ------------------------------------------------------------------------------
start_receiver() {
	rm -f "$tmp/recv/port"
	"$py" "$top_srcdir/tests/tool/upload_receiver.py" "$tmp/recv" 2>>"$tmp/recv.log" &
	recv_pid=$!
	for i in $(seq 50); do [ -s "$tmp/recv/port" ] && break; sleep 0.1; done
	[ -s "$tmp/recv/port" ] || { cat "$tmp/recv.log"; echo "the receiver did not start"; exit 99; }
	port=$(cat "$tmp/recv/port")
	url="http://127.0.0.1:$port/api/7/minidump/"
}
start_receiver
answers() { printf '%s\n' "$@" >>"$tmp/recv/answers"; }
posts() { ls "$tmp/recv" | grep -c '^req-[0-9]*\.json$'; }

# up WANT_EXIT ARGS...: runs ptrec upload ARGS (with an empty configuration: never the host's
# /etc/ptrec/upload.conf), output in $tmp/out and $tmp/err.
: >"$tmp/empty.conf"
up() {
	want=$1
	shift
	checks=$((checks + 1))
	"$tool" upload --config "$tmp/empty.conf" "$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	[ "$got" -eq "$want" ] || fail "ptrec upload $*: exit $got, expected $want: $(cat "$tmp/out" "$tmp/err" | head -c 600)"
}
says() {
	checks=$((checks + 1))
	grep -qF -- "$2" "$tmp/$1" || fail "$3: $1 does not say '$2': $(head -c 600 "$tmp/$1")"
}
# nposts N WHY: the receiver got N posts so far.
nposts() {
	checks=$((checks + 1))
	[ "$(posts)" -eq "$1" ] || fail "$2: $(posts) posts, expected $1"
}
# state DUMP KEY: a value of the dump's upload state.
state() { sed -n "s/^$2 //p" "$1.upload"; }
# req N EXPR: a Python expression over the N-th request's record r (parts by name in p).
req() {
	"$py" -c 'import json,sys; r=json.load(open(sys.argv[1])); p={x["name"]: x for x in r["parts"]}; print(eval(sys.argv[2]))' \
		"$tmp/recv/req-$1.json" "$2"
}
# is N EXPR WANT WHAT
is() {
	checks=$((checks + 1))
	v=$(req "$1" "$2" 2>&1)
	[ "$v" = "$3" ] || fail "$4: request $1: $2 is '$v', expected '$3'"
}
sha() { sha256sum <"$1" | cut -d' ' -f1; }

# ---- --pending leaves dumps written in the last minute (their report may be being written) ------
up 0 --url "$url" --pending "$tmp/dumps"
nposts 0 "--pending on dumps just written"
says out "$d1: written less than 60 s ago" "--pending on a dump just written"
says out "$d2: written less than 60 s ago" "--pending on a dump just written"
touch -d '2 minutes ago' "$d1" "$d1.txt" "$d2" "$d2.txt"
snapshot >"$tmp/before"

# ---- named dump, 200: what is posted ----------------------------------------------------------
answers 200
up 0 --url "$url" --release "srv@1.2.3" --tag team=storage --tag "dc=eu west" --host web-7 \
	--breadcrumbs 3 "$d1"
nposts 1 "a named dump"
says out "$d1: uploaded to $url (HTTP 200, event " "the upload line"
is 1 'r["violations"]' "[]" "RFC 7578"
is 1 'r["path"]' "/api/7/minidump/" "the path"
is 1 'r["headers"]["content-type"].split(";")[0]' "multipart/form-data" "the content type"
is 1 'p["upload_file_minidump"]["sha256"]' "$(sha "$m1")" "the minidump posted (ptrec minidump's)"
is 1 'p["upload_file_minidump"]["filename"]' "$(basename "$d1").dmp" "the minidump's filename"
is 1 'p["upload_file_minidump"]["type"]' "application/octet-stream" "the minidump's type"
is 1 'p["ptrec_report"]["sha256"]' "$(sha "$d1.txt")" "the text report posted (DUMP.txt as is)"
is 1 'p["ptrec_report"]["type"]' "text/plain" "the text report's type"
is 1 'p["ptrec_report_json"]["type"]' "application/json" "the JSON report's type"
is 1 'json.load(open(sys.argv[1].replace(".json", ".ptrec_report_json")))["process"]["pid"]' \
	"$(basename "$d1" | cut -d. -f3)" "the JSON report's pid"
is 1 'p["release"]["value"], p["sentry[release]"]["value"]' "('srv@1.2.3', 'srv@1.2.3')" "release"
is 1 'p["host"]["value"], p["sentry[server_name]"]["value"]' "('web-7', 'web-7')" "host"
is 1 'p["sentry[tags][team]"]["value"], p["sentry[tags][dc]"]["value"]' "('storage', 'eu west')" "tags"
is 1 'p["sentry[tags][ptrec.signal]"]["value"], p["sentry[tags][ptrec.program]"]["value"], p["sentry[tags][ptrec.event]"]["value"]' \
	"('SIGSEGV', 'crasher', 'crash')" "the dump's tags"
is 1 'len(json.loads(p["sentry"]["value"])["breadcrumbs"]["values"]) == min(3, len(json.load(open(sys.argv[1].replace(".json", ".ptrec_report_json")))["threads"][0]["branches"])) > 0' \
	True "breadcrumbs: the last 3 branches (or all there are)"
is 1 'all(b["category"] == "ptrec.branch" and " -> " in b["message"] for b in json.loads(p["sentry"]["value"])["breadcrumbs"]["values"])' \
	True "breadcrumbs name branches"
# The signature, once the report has one (issue 28 item 4).
if "$tool" report --format json "$d1" | grep -q '"signature"'; then
	sig=$("$tool" report --format json "$d1" | "$py" -c 'import json,sys; print(json.load(sys.stdin)["signature"])')
	is 1 'p["signature"]["value"]' "$sig" "the signature field"
else
	is 1 '"signature" in p' False "no signature field without one in the report"
fi
checks=$((checks + 1))
[ "$(state "$d1" uploaded)" = 1 ] && [ "$(state "$d1" event_id)" = "$(req 1 'r["id"]')" ] ||
	fail "the state does not keep the upload and the server's event id: $(cat "$d1.upload")"
checks=$((checks + 1))
[ "$(stat -c %a "$d1.upload")" = 600 ] || fail "the state file is not 0600"

# ---- --pending: the other dump; the uploaded one is never sent again ---------------------------
answers "429 4"
up 1 --url "$url" --pending "$tmp/dumps"
nposts 2 "--pending after one upload"
is 2 'p["upload_file_minidump"]["sha256"]' "$(sha "$m2")" "--pending posts the other dump"
says err "HTTP 429 Too Many Requests: retry after 4 s (Retry-After)" "a 429"
checks=$((checks + 1))
[ "$(state "$d2" uploaded)" = 0 ] && [ "$(state "$d2" next_try)" -ge "$(( $(state "$d2" last_try) + 4 ))" ] ||
	fail "after 429 the state is not pending until Retry-After: $(cat "$d2.upload")"
up 0 --url "$url" --pending "$tmp/dumps"
nposts 2 "--pending during Retry-After"
says out "$d2: waiting until " "--pending during Retry-After"
sleep 5
answers 200
up 0 --url "$url" --pending "$tmp/dumps"
nposts 3 "--pending after Retry-After"
says out "$d2: uploaded to $url" "--pending after Retry-After"
is 3 'p["upload_file_minidump"]["sha256"]' "$(sha "$m2")" "the 429'd dump, sent again"
up 0 --url "$url" --pending "$tmp/dumps"
nposts 3 "--pending once all are uploaded"
up 0 --url "$url" "$d2"
nposts 3 "a named dump already uploaded"
says out "already uploaded" "a named dump already uploaded"

# ---- 500: backoff that doubles, then exactly once ---------------------------------------------
rm "$d1.upload" "$d2.upload"
answers 500 500
up 1 --url "$url" --backoff 3 "$d1"
says err "HTTP 500: internal error 4; next try in 3 s" "the first 500"
up 1 --url "$url" --backoff 3 "$d1"
says err "HTTP 500: internal error 5; next try in 6 s" "the second 500 (the wait doubles)"
nposts 5 "two 500s (a named dump is tried at once)"
checks=$((checks + 1))
[ "$(state "$d1" failures)" = 2 ] && [ "$(state "$d1" uploaded)" = 0 ] ||
	fail "after two 500s: $(cat "$d1.upload")"
answers 200 200
up 0 --url "$url" --backoff 3 --pending "$tmp/dumps"   # d2 has no state: sent; d1 waits
nposts 6 "--pending while d1 waits"
says out "$d1: waiting until " "--pending during the backoff"
sleep 7
up 0 --url "$url" --backoff 3 --pending "$tmp/dumps"
nposts 7 "--pending after the backoff"
is 7 'p["upload_file_minidump"]["sha256"]' "$(sha "$m1")" "the 500'd dump, sent once more"
up 0 --url "$url" --pending "$tmp/dumps"
nposts 7 "nothing sent twice"

# ---- 413 and other 4xx: the server's message, the dump stays -----------------------------------
rm "$d1.upload"
answers 413
up 1 --url "$url" "$d1"
says err "HTTP 413: {\"detail\": \"envelope exceeded size limits\"}" "a 413"
checks=$((checks + 1))
[ "$(state "$d1" uploaded)" = 0 ] || fail "uploaded after a 413"

# ---- one sender per dump: another run holding the dump's lock has it -----------------------------
rm "$d1.upload"
if command -v flock >/dev/null 2>&1; then
	checks=$((checks + 1))
	flock "$d1" "$tool" upload --config "$tmp/empty.conf" --url "$url" "$d1" >"$tmp/out" 2>&1 ||
		fail "a locked dump: $(cat "$tmp/out")"
	says out "$d1: being sent by another ptrec upload" "a locked dump"
	nposts 8 "a dump another run is sending"
	checks=$((checks + 1))
	[ ! -e "$d1.upload" ] || fail "a state was written for a locked dump"
else
	echo "SKIP (part): flock(1) not found: the one-sender lock is not tried"
fi

# ---- a Sentry DSN, the environment and a configuration file ------------------------------------
answers 200 200 200
up 0 --dsn "http://0123456789abcdef@127.0.0.1:$port/42" "$d1"
is 9 'r["path"], r["query"]' "('/api/42/minidump/', {'sentry_key': ['0123456789abcdef']})" "a DSN"
checks=$((checks + 1))
[ "$(state "$d1" server)" = "http://127.0.0.1:$port/api/42/minidump/" ] ||
	fail "the state keeps the key: $(state "$d1" server)"
rm "$d1.upload"
checks=$((checks + 1))
PTREC_UPLOAD_DSN="http://00ff@127.0.0.1:$port/5" "$tool" upload --config "$tmp/empty.conf" "$d1" >/dev/null 2>&1 ||
	fail "PTREC_UPLOAD_DSN"
is 10 'r["path"], r["query"]' "('/api/5/minidump/', {'sentry_key': ['00ff']})" "PTREC_UPLOAD_DSN"
rm "$d1.upload"
cat >"$tmp/upload.conf" <<EOF
# a configuration
url = $url
release  cfg-rel
tag = from=config
max-size = 30M
EOF
checks=$((checks + 1))
"$tool" upload --config "$tmp/upload.conf" "$d1" >/dev/null 2>"$tmp/err" || fail "--config: $(cat "$tmp/err")"
is 11 'p["release"]["value"], p["sentry[tags][from]"]["value"]' "('cfg-rel', 'config')" "the configuration's values"
up 2 "$d1"
says err "no server: give --url URL or --dsn DSN" "no server"
up 2 --url "ftp://127.0.0.1:$port/x" "$d1"
says err "URL from the command line: expected http:// or https://" "an ftp URL"
up 2 --url "http://127.0.0.1:$port/x
y" "$d1"
says err "URL from the command line: expected http:// or https:// and no space" "a URL with a newline"
up 2 --dsn "http://127.0.0.1:$port/42" "$d1"
says err "expected https://KEY@HOST[:PORT]/PROJECT" "a DSN without a key"
up 2 --url "$url" --dsn "http://00ff@127.0.0.1:$port/5" "$d1"
says err "give --url or --dsn, not both" "both --url and --dsn"
nposts 11 "bad command lines post nothing"
printf 'bogus = 1\n' >"$tmp/bad.conf"
checks=$((checks + 1))
"$tool" upload --config "$tmp/bad.conf" --url "$url" "$d1" >/dev/null 2>"$tmp/err" && fail "a bad configuration was taken"
says err "bad.conf:1: bogus: unknown setting 'bogus'" "a bad configuration"

# ---- nothing lost: an unreachable server, a missing curl, --max-size ---------------------------
rm "$d1.upload"
kill $recv_pid
wait $recv_pid 2>/dev/null
up 1 --url "$url" "$d1"
says err "not uploaded to $url: no answer: curl: (7)" "an unreachable server"
checks=$((checks + 1))
[ "$(state "$d1" uploaded)" = 0 ] && [ "$(state "$d1" http)" = 0 ] || fail "unreachable: $(cat "$d1.upload")"
rm "$d1.upload"
checks=$((checks + 1))
PATH="$tmp/bin" "$tool" upload --config "$tmp/empty.conf" --url "$url" "$d1" >/dev/null 2>"$tmp/err" &&
	fail "uploaded without curl"
says err "curl(1) is not installed" "without curl"
checks=$((checks + 1))
[ ! -e "$d1.upload" ] || fail "a state was written though nothing was posted"
up 1 --url "$url" --max-size 1K "$d1"
says err "over --max-size 1024" "--max-size"
start_receiver
up 1 --url "$url" --max-size 1K "$d1"
nposts 11 "--max-size posts nothing"
checks=$((checks + 1))
ls "$tmp/dumps" | grep -q '\.upload\.' && fail "temporary state files left: $(ls "$tmp/dumps")"

# ---- named dumps go in the order given -----------------------------------------------------------
rm -f "$d1.upload" "$d2.upload"
up 0 --url "$url" "$d2" "$d1"
is 12 'p["upload_file_minidump"]["sha256"]' "$(sha "$m2")" "the first dump named"
is 13 'p["upload_file_minidump"]["sha256"]' "$(sha "$m1")" "the second dump named"

# ---- the dumps, reports and minidumps are as they were ------------------------------------------
snapshot | grep -v '\.upload' >"$tmp/after"
grep -v '\.upload' "$tmp/before" >"$tmp/before.kept"
checks=$((checks + 1))
cmp -s "$tmp/before.kept" "$tmp/after" || fail "the dumps changed: $(diff "$tmp/before.kept" "$tmp/after")"

# ---- every minidump posted, through Breakpad's minidump_stackwalk --------------------------------
walk=${MINIDUMP_STACKWALK:-$(command -v minidump_stackwalk || true)}
if [ -z "$walk" ] || [ ! -x "$walk" ]; then
	echo "SKIP (part): minidump_stackwalk not found (npm install --ignore-scripts minidump@0.26.0)"
else
	for f in "$tmp"/recv/req-*.upload_file_minidump; do
		case $(sha "$f") in
		"$(sha "$m1")") reason="SIGSEGV /SEGV_MAPERR" ;;
		"$(sha "$m2")") reason="SIGABRT" ;;
		*) fail "$f is neither dump's minidump"; continue ;;
		esac
		checks=$((checks + 1))
		"$walk" "$f" >"$tmp/walk" 2>"$tmp/walk.err" || fail "minidump_stackwalk $f: $(tail -5 "$tmp/walk.err")"
		grep -q "^Crash reason: *$reason" "$tmp/walk" ||
			fail "minidump_stackwalk: $f: no '$reason': $(grep -A1 '^Crash reason' "$tmp/walk")"
		grep -q '^Thread [0-9]* (crashed)' "$tmp/walk" || fail "minidump_stackwalk: $f: no crashed thread"
	done
fi
finish
