#!/bin/sh
# A thread started before ptrec_init gets an alternate signal stack when it attaches, so its
# stack overflow is reported; ptrec_status names the threads that still have none.
. "$top_srcdir/tests/crash/hardening_common.sh"
hrun pre_thread_overflow
cat "$work/stdout"
[ "$status" -eq 139 ] || fail "exit status $status, expected 139"
idle=$(sed -n 's/^idle_tid //p' "$work/stdout")
set -- $(sed -n 's/^no_altstack //p' "$work/stdout")
[ $# -ge 2 ] && [ "$1" -ge 1 ] || fail "ptrec_status counts no thread without an alternate stack"
shift
case " $* " in *" $idle "*) ;; *) fail "ptrec_status does not list the idle thread $idle: $*" ;; esac
case "$(ptrec_line)" in "ptrec: SIGSEGV in pid $pid thread "*": dump "*) ;;
*) fail "no dump line for the overflow" ;; esac
dump=$(the_dump "$PTREC_DIR") || exit 1
"$checker" "$dump" >/dev/null || fail "malformed dump"
echo "PASS: threads started before init"
