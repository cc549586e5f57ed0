#!/bin/sh
# A language runtime: a Go program (Debian's golang-go, a test-only peer configure finds) built
# with cgo, so dynamically linked as Go servers that resolve names or call C are, and run
# unmodified under `ptrec run`.  Go owns SIGSEGV: its runtime sets each thread's mask and reads
# its alternate stack with raw system calls, and turns a fault in Go code into a panic the
# program may recover.  Expected: (1) 800 recovered nil dereferences in 8 goroutines leave no
# dump and no ptrec line, and the program's own exit status 3 (before libptrec followed Go's
# raw mask and ran Go's handler on the alternate stack Go took, the first one died with a dump,
# or Go threw "non-Go code set up signal handler without SA_ONSTACK flag"); (2) a fault in C
# code with GOTRACEBACK=crash: Go's own report, then Go raises SIGABRT (status 134, as
# without libptrec), and exactly one dump and report, whose stack goes through runtime.sigpanic.
# (The dump is of that SIGABRT: Go's handler returned into sigpanic, a handled fault as far as
# libptrec can tell.  Without GOTRACEBACK=crash Go exits 2 with the raw exit_group: no dump.)
if [ -z "${GO_BIN:-}" ]; then
	echo "SKIP: configure found no go (Debian package golang-go)"
	exit 77
fi
. "$top_srcdir/tests/servers/server_common.sh"

mkdir "$work/src" || exit 99
cat >"$work/src/main.go" <<'GO'
package main

/*
static void crash_in_c(void) { *(volatile int *)8 = 1; }
*/
import "C"

import (
	"fmt"
	"os"
	"sync"
)

type request struct{ n int }

func serve(r *request) (n int, err error) {
	defer func() {
		if e := recover(); e != nil {
			err = fmt.Errorf("%v", e)
		}
	}()
	return r.n, nil
}

func main() {
	var wg sync.WaitGroup
	var mu sync.Mutex
	recovered := 0
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				if _, err := serve(nil); err != nil {
					mu.Lock()
					recovered++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	fmt.Println("recovered", recovered)
	if len(os.Args) > 1 {
		C.crash_in_c()
	}
	os.Exit(3)
}
GO
printf 'module gocrash\ngo 1.18\n' >"$work/src/go.mod"
(cd "$work/src" && GOCACHE=$work/gocache GOPATH=$work/gopath GOFLAGS=-mod=mod CGO_ENABLED=1 \
	"$GO_BIN" build -o "$work/gocrash" .) || fail "go build failed"
file -L "$work/gocrash" 2>/dev/null | grep -q 'dynamically linked' ||
	{ readelf -l "$work/gocrash" 2>/dev/null | grep -q INTERP || fail "the cgo program is not dynamically linked"; }

# (1) recovered faults
(cd "$work" && exec "$PTREC_TOOL" run --dir "$work/dumps" -- "$work/gocrash") \
	>"$work/out" 2>"$work/err"
status=$?
echo "--- recovered faults (status $status), stdout:"; cat "$work/out"; echo "--- stderr:"; cat "$work/err"
[ "$status" -eq 3 ] || fail "exit status $status, expected the program's own 3"
grep -q '^recovered 800$' "$work/out" || fail "the nil dereferences were not all recovered"
nothing_for "faults Go recovered"

# (2) a real crash, in C
(cd "$work" && GOTRACEBACK=crash exec "$PTREC_TOOL" run --dir "$work/dumps" --report-timeout 30000 \
	-- "$work/gocrash" crash) >"$work/out" 2>"$work/err"
status=$?
echo "--- a crash in C (status $status), stderr:"; cat "$work/err"
[ "$status" -eq 134 ] || fail "exit status $status, expected 134 (Go raises SIGABRT, as without libptrec)"
grep -q '^fatal error: unexpected signal during runtime execution$' "$work/err" || fail "Go's own report did not start"
grep -q '^\[signal SIGSEGV: segmentation violation code=0x1 addr=0x8 ' "$work/err" || fail "Go's report does not name the fault"
grep -q '^goroutine 1 ' "$work/err" || fail "Go's report was cut short"
[ "$(ptrec_lines "$work/err")" -eq 1 ] || fail "expected exactly one ptrec line"
set -- "$work"/dumps/ptrec.*.ptrec
[ $# -eq 1 ] && [ -f "$1" ] || fail "expected exactly one dump in --dir"
report=$1.txt
[ -f "$report" ] || fail "no report beside the dump"
echo "--- report"; sed -n '1,/^== Rings/p;/\[crashed\]/,/^$/p' "$report"
grep -q '^event: *crash, signal SIGABRT (6)' "$report" || fail "the report does not name Go's SIGABRT"
sed -n '/\[crashed\]/,/^$/p' "$report" | grep -q ' runtime\.sigpanic+' ||
	fail "the crashed thread's stack does not go through runtime.sigpanic"
echo "PASS: a Go program under ptrec run: recovered faults left nothing, a crash in C one dump after Go's report"
