#!/bin/sh
# A language runtime that lives on SIGSEGV: HotSpot (Debian's OpenJDK, java and javac; a
# test-only peer configure finds) run unmodified under `ptrec run`.
# - Its compiled code dereferences null and lets its own SIGSEGV handler turn the fault into a
#   NullPointerException: 200 of them, caught, must leave no dump and no ptrec line, and the
#   program's result must be its own (strace, when present, shows the SIGSEGVs happened).
# - A wild store in the VM (sun.misc.Unsafe.putAddress(16, ...)): HotSpot's handler, which blocks
#   every signal while it runs, writes its hs_err file and calls abort(); the process dies of
#   SIGABRT (134) as without libptrec, and leaves exactly one dump and report naming the first
#   fault: SIGSEGV at 0x10 in Unsafe_PutLong.
if [ -z "${JAVA_BIN:-}" ] || [ -z "${JAVAC_BIN:-}" ]; then
	echo "SKIP: configure found no java and javac (Debian package openjdk-17-jdk-headless)"
	exit 77
fi
. "$top_srcdir/tests/servers/server_common.sh"
"$JAVAC_BIN" -nowarn -XDignore.symbol.file -d "$work" "$top_srcdir/tests/servers/java/ImplicitNullChecks.java" \
	"$top_srcdir/tests/servers/java/WildStore.java" >"$work/javac.log" 2>&1 ||
	{ cat "$work/javac.log"; fail "javac failed"; }
java() { (cd "$work" && exec "$PTREC_TOOL" run --dir "$work/dumps" --report-timeout 30000 -- \
	"$JAVA_BIN" -Xmx64m -XX:ErrorFile="$work/hs_err.log" -cp "$work" "$@"); }

# -Xcomp: compiled at once, so the null checks are implicit from the first call on
java -Xcomp -XX:-TieredCompilation ImplicitNullChecks >"$work/out" 2>"$work/err"
status=$?
echo "--- ImplicitNullChecks (status $status)"; cat "$work/out" "$work/err"
[ "$status" -eq 0 ] || fail "ImplicitNullChecks ended with status $status"
[ "$(cat "$work/out")" = "caught 200 sum 19980000000" ] || fail "ImplicitNullChecks computed something else"
nothing_for "faults HotSpot handled"
if command -v strace >/dev/null 2>&1; then
	strace -f -qq -e trace=none -e signal=SIGSEGV -o "$work/strace" \
		"$JAVA_BIN" -Xmx64m -Xcomp -XX:-TieredCompilation -cp "$work" ImplicitNullChecks >/dev/null 2>&1
	n=$(grep -c -- '--- SIGSEGV' "$work/strace")
	echo "(without libptrec, strace saw $n SIGSEGVs)"
	[ "$n" -gt 0 ] || fail "HotSpot took no SIGSEGV: the first part tests nothing"
fi

java WildStore >"$work/out" 2>"$work/err"
status=$?
echo "--- WildStore (status $status)"; cat "$work/out" "$work/err"
[ "$status" -eq 134 ] || fail "WildStore ended with status $status, expected 134 (HotSpot aborts)"
grep -q 'SIGSEGV (0xb) at pc=' "$work/hs_err.log" || fail "HotSpot's handler wrote no hs_err report"
victim=$(sed -n 's/^ptrec: SIGSEGV in pid \([0-9]*\) .*/\1/p' "$work/err")
one_dump "$victim" "$work/err"
grep -q '^event: *crash, signal SIGSEGV (11), code SEGV_MAPERR (1)$' "$report" ||
	fail "the report does not name the fault as SEGV_MAPERR"
grep -q '^fault address: 0x10$' "$report" || fail "the report does not name the fault address 0x10"
case "$stack" in
"Unsafe_PutLong "*) ;;
*) fail "the crashed thread's stack does not start in Unsafe_PutLong: $stack" ;;
esac
echo "PASS: HotSpot under ptrec run: handled faults left nothing, its aborting crash handler a dump of the fault"
