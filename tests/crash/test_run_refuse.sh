#!/bin/sh
# Refusals: `ptrec run` does not start a program the loader would not preload libptrec into,
# or one that has libptrec already; it says why and exits 126 (127: not found), running
# nothing.  A script is judged by its interpreter.
. "$top_srcdir/tests/common/qemu_user.sh"
skip_under_qemu_user "the machine's own programs (/bin/sh) are x86-64: ptrec run refuses them as programs of another machine"
. "$top_srcdir/tests/crash/run_common.sh"

# refused PROG WHY: ptrec run -- PROG exits 126 with WHY on stderr and PROG did not run
refused() {
	ptrec_run --dir "$work/dumps" -- "$1" segv
	[ "$status" -eq 126 ] || fail "$1: exit status $status, expected 126 (refused)"
	grep -q "$2" "$work/err" || fail "$1: the refusal does not say '$2'"
	[ ! -s "$work/out" ] || fail "$1 ran"
	[ -z "$(ls "$work/dumps")" ] || fail "$1 left a dump"
}

# set-user-ID and set-group-ID: the loader ignores LD_PRELOAD (any owner may set the bits)
cp "$plain" "$work/suid" && chmod u+s "$work/suid" || fail "cannot make a set-user-ID copy"
refused "$work/suid" 'set-user-ID: the dynamic loader ignores LD_PRELOAD'
cp "$plain" "$work/sgid" && chmod g+s "$work/sgid"
if [ -g "$work/sgid" ]; then
	refused "$work/sgid" 'set-group-ID: the dynamic loader ignores LD_PRELOAD'
else
	echo "note: cannot set the set-group-ID bit here (not in the file's group); not checked"
fi

# libptrec linked in statically (the crasher of the crash tests defines ptrec_init)
refused "$top_builddir/tests/crash/crasher" 'has libptrec linked in (it defines ptrec_init)'

# linked with libptrec.so (DT_NEEDED): built here against the build tree's library
cat >"$work/linked.c" <<'C'
#include <stdio.h>
#include "ptrec.h"
int main(void) { printf("ptrec_init %d\n", ptrec_init(NULL)); return 0; }
C
# shellcheck disable=SC2086
${CC:-cc} ${SAN_LDFLAGS:-} -I"$top_srcdir/include" -o "$work/linked" "$work/linked.c" \
	-L"$top_builddir/libptrec/.libs" -Wl,-rpath,"$top_builddir/libptrec/.libs" -lptrec ||
	fail "cannot build a program linked with libptrec.so"
refused "$work/linked" "links libptrec itself (it needs $(basename "$PTREC_PRELOAD_LIB"))"
# started by a recorded program (followed), it still initialises the recorder itself, once
ptrec_run -- "$plain" spawn "$work/linked"
grep -q '^ptrec_init 0$' "$work/out" || fail "a followed program linked with libptrec could not init"

# not found; not a program
ptrec_run -- no-such-command-ptrec
[ "$status" -eq 127 ] || fail "a missing command: status $status, expected 127"
grep -q 'command not found' "$work/err" || fail "a missing command is not said"
printf 'hello\n' >"$work/text" && chmod +x "$work/text"
refused "$work/text" 'not a program ptrec run can start'

# a script runs (its interpreter is dynamic); one whose interpreter is refused is refused
printf '#!/bin/sh\necho script ran\n' >"$work/script.sh" && chmod +x "$work/script.sh"
ptrec_run -- "$work/script.sh"
[ "$status" -eq 0 ] && grep -q '^script ran$' "$work/out" || fail "a shell script did not run"
printf '#!%s\n' "$work/suid" >"$work/script2" && chmod +x "$work/script2"
refused "$work/script2" 'set-user-ID'

# a static program: no loader, nothing can be preloaded
if printf 'int main(void){return 0;}\n' >"$work/st.c" &&
   ${CC:-cc} -static -o "$work/static" "$work/st.c" 2>"$work/cc.err"; then
	refused "$work/static" 'statically linked (no PT_INTERP'
else
	echo "SKIP: this machine cannot link a -static program (no static libc: $(head -1 "$work/cc.err")); the other refusals passed"
	exit 77
fi
echo "PASS: refusals"
