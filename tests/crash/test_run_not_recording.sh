#!/bin/sh
# Issue 27, "never silently nothing", under `ptrec run`: an unmodified program on a machine
# without PT or BTS records no branch history; `ptrec run` says so once before it starts it
# (the program, why, `ptrec check`, and that stacks are still reported), and the preloaded
# library adds no line of its own.  `--backend none` (meant) silences it; so does a program
# that calls libptrec's hooks (instrumented).
. "$top_srcdir/tests/crash/run_common.sh"

has_pt=0
[ -d /sys/bus/event_source/devices/intel_pt ] || [ -d /sys/bus/event_source/devices/intel_bts ] &&
	has_pt=1
# an aarch64 build: no Intel PT or BTS whatever the (host's) sysfs says
[ "${PTREC_HOST_CPU:-}" = aarch64 ] && has_pt=0
said() { grep -c "^ptrec: no branch history will be recorded" "$work/err"; }

ptrec_run --dir "$work/dumps" -- "$plain" env
[ "$status" -eq 0 ] || fail "exit status $status"
if [ "$has_pt" = 1 ]; then
	[ "$(said)" -eq 0 ] || fail "a machine with PT or BTS got the not-recording line"
	echo "note: PT or BTS here; the line itself is checked on machines without them"
else
	[ "$(said)" -eq 1 ] || fail "expected exactly one not-recording line"
	line=$(grep "^ptrec: no branch history will be recorded" "$work/err")
	case "$line" in "ptrec: no branch history will be recorded in $plain: no intel_pt here ("*) ;;
	*) fail "the line does not name the program and why: $line" ;; esac
	if [ "${PTREC_HOST_CPU:-}" = aarch64 ]; then
		case "$line" in *"(Intel PT is an x86-64 feature; this is an aarch64 build of libptrec)"*) ;;
		*) fail "on aarch64 the line does not say PT is an x86-64 feature: $line" ;; esac
	fi
	case "$line" in *"not built with \`ptrec cflags\` (\`ptrec check $plain\`)"*) ;;
	*) fail "the line does not say the program is not instrumented and how to check" ;; esac
	case "$line" in *"still show every thread's stack"*"PTREC_BACKEND=none silences this line"*) ;;
	*) fail "the line does not say what is still reported and how to silence it" ;; esac
	[ "$(grep -c '^ptrec:' "$work/err")" -eq 1 ] || fail "the preloaded library added a line"
fi

ptrec_run --backend none --dir "$work/dumps" -- "$plain" env
[ "$status" -eq 0 ] || fail "exit status $status with --backend none"
[ "$(said)" -eq 0 ] || fail "--backend none still got the not-recording line"

# An instrumented program (the crash tests' crasher, built -finstrument-functions) records:
# nothing to say.  It links libptrec itself, so ptrec run refuses it; ptrec check is the judge.
"$PTREC_TOOL" check "$top_builddir/tests/crash/crasher" >"$work/check" 2>&1 ||
	fail "ptrec check says the instrumented crasher records nothing: $(cat "$work/check")"
echo "PASS: ptrec run says once that nothing records, and only then"
