#!/bin/sh
# The shared library exports exactly the public API: every function declared PTREC_API in
# include/ptrec.h, the instrumentation hooks, the interposed libc functions (every one of them:
# one defined but not exported interposes nothing for a program linked with libptrec.so), and
# nothing else.
set -u
so="$top_builddir/libptrec/.libs/libptrec.so"
[ -f "$so" ] || { echo "SKIP: no shared library built ($so)"; exit 77; }
[ -n "${NM:-}" ] || { echo "SKIP: nm not found by configure"; exit 77; }

exported=$("$NM" -D --defined-only "$so" | awk '$2 ~ /^[TWDBR]$/ {print $3}' | sort)
declared=$(sed -n 's/^PTREC_API[^(]*[ *]\(ptrec_[a-z_]*\)(.*/\1/p' "$top_srcdir/include/ptrec.h" | sort)

status=0
[ -n "$declared" ] || { echo "FAIL: found no PTREC_API declarations in ptrec.h"; exit 1; }
for f in $declared; do
	echo "$exported" | grep -qx "$f" || { echo "FAIL: $f is declared but not exported"; status=1; }
done
for s in $exported; do
	case "$s" in
	ptrec_*) echo "$declared" | grep -qx "$s" || { echo "FAIL: $s is exported but not declared in ptrec.h"; status=1; } ;;
	__cyg_profile_func_enter|__cyg_profile_func_exit|__sanitizer_cov_trace_pc) ;;
	# The GCC entry hook (-mfentry-name=__ptrec_fentry), and the thread's ring pointer and
	# the crash-time hook gate that the hook archive libptrec_hooks.a reads
	# (doc/instrumented.md, capture/hook_gate.h).
	# __ptrec_patch_register: each module's patchable function entries (capture/patch_entries.h).
	__ptrec_fentry|__ptrec_soft_tls|__ptrec_hook_gate|__ptrec_patch_register) ;;
	# thread_registry.c interposes pthread_create to attach new threads (and offers
	# __wrap_pthread_create for -Wl,--wrap=pthread_create in static links).
	pthread_create|__wrap_pthread_create) ;;
	# signal_interpose.c keeps libptrec the first handler of the crash signals and sees the
	# process exit from inside an application's crash handler.
	sigaction|signal|bsd_signal|sysv_signal|__sysv_signal|ssignal|sigset|sigignore|siginterrupt|sighold|sigrelse|sigprocmask|pthread_sigmask|siglongjmp|longjmp|_longjmp|__longjmp_chk|sigaltstack|exit|_exit|_Exit) ;;
	# chroot_interpose.c keeps what a crash needs outside a new root; seccomp_interpose.c
	# shuts libptrec down before a seccomp filter goes on (prctl, libseccomp's seccomp_load).
	chroot|prctl|seccomp_load) ;;
	*) echo "FAIL: unexpected export $s"; status=1 ;;
	esac
done
# Every libc function libptrec/runtime/ defines (PTREC_API and not ptrec_*).
interposed=$(sed -n 's/^PTREC_API .*[ *]\([A-Za-z_][A-Za-z_0-9]*\)(.*/\1/p' \
	"$top_srcdir"/libptrec/runtime/*.c | grep -v '^ptrec_' | sort -u)
[ -n "$interposed" ] || { echo "FAIL: found no interposed function in libptrec/runtime"; exit 1; }
for f in $interposed; do
	echo "$exported" | grep -qx "$f" || { echo "FAIL: the interposed $f is not exported"; status=1; }
done
echo "$(echo "$declared" | wc -w) declared functions, $(echo "$exported" | wc -w) exported symbols"
exit $status
