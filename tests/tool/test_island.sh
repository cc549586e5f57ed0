#!/bin/sh
# test_island.sh — the crash path's async-signal-safety as a test, not only a comment.
#
# The island is every object of libptrec/crash/ plus, transitively, every object of the server
# library (libptrec_rt) that defines a ptrec_* function an island object calls.  Each island
# object may call only:
#   - functions POSIX lists as async-signal-safe (XSH 2.4.3), and the Linux calls of the same
#     kind we need (syscall, process_vm_readv, dup3, pipe2, clone: an assembly wrapper of the
#     system call, no locks or atfork handlers, what posix_spawn uses, ...);
#   - ptrec_* functions defined in another island object;
#   - compiler and sanitizer runtime entry points (stack protector, ASan/UBSan reports), and
#     data the C library exports that the island only reads (environ, glibc's rseq offset and size);
# Each island source file must say at its top that it is async-signal-safe.
# Limit: calls through function pointers (a backend's freeze op) are invisible to nm; those ops
# are listed in capture/backend.h as async-signal-safe and reviewed by hand.
set -u
[ -n "${NM:-}" ] || { echo "SKIP: nm not found by configure"; exit 77; }
bld="${top_builddir:-.}/libptrec"
src="${top_srcdir:-.}/libptrec"

# One object per source of libptrec_rt: the PIC one in .libs/ if libtool built it.
objs=$(find "$bld" -name 'libptrec_rt_la-*.o' -path '*/.libs/*' | sort)
[ -n "$objs" ] || objs=$(find "$bld" -name 'libptrec_rt_la-*.o' | sort)
[ -n "$objs" ] || { echo "FAIL: no libptrec_rt objects under $bld (build first)"; exit 1; }

safe='
_exit _Exit abort accept access aio_error aio_return aio_suspend alarm bind cfgetispeed
cfgetospeed cfsetispeed cfsetospeed chdir chmod chown clock_gettime close connect creat dup dup2
execl execle execv execve faccessat fchdir fchmod fchmodat fchown fchownat fcntl fdatasync fexecve
ffs fork fstat fstatat fsync ftruncate futimens getegid geteuid getgid getgroups getpeername
getpgrp getpid getppid getsockname getsockopt getuid htonl htons kill link linkat listen longjmp
lseek lstat memccpy memchr memcmp memcpy memmove memset mkdir mkdirat mkfifo mkfifoat mknod mknodat
ntohl ntohs open openat pause pipe poll posix_trace_event pselect pthread_kill pthread_self
pthread_sigmask raise read readlink readlinkat recv recvfrom recvmsg rename renameat rmdir select
sem_post send sendmsg sendto setgid setpgid setsid setsockopt setuid shutdown sigaction sigaddset
sigdelset sigemptyset sigfillset sigismember siglongjmp signal sigpause sigpending sigprocmask
sigqueue sigset sigsuspend sleep sockatmark socket socketpair stat stpcpy stpncpy strcat strchr
strcmp strcpy strcspn strlen strncat strncmp strncpy strnlen strpbrk strrchr strspn strstr strtok_r
symlink symlinkat tcdrain tcflow tcflush tcgetattr tcgetpgrp tcsendbreak tcsetattr tcsetpgrp time
timer_getoverrun timer_gettime timer_settime times umask uname unlink unlinkat utime utimensat
utimes wait waitpid wcpcpy wcpncpy wcscat wcschr wcscmp wcscpy wcscspn wcslen wcsncat wcsncmp
wcsncpy wcsnlen wcspbrk wcsrchr wcsspn wcsstr wcstok wmemchr wmemcmp wmemcpy wmemmove wmemset
write
syscall process_vm_readv process_vm_writev getrlimit prlimit nanosleep clock_nanosleep dup3 pipe2
close_range gettid tgkill mmap munmap mprotect madvise sigaltstack prctl ioctl pread pwrite
readv writev getdents64 statx memfd_create eventfd clone
__errno_location environ _GLOBAL_OFFSET_TABLE_ __stack_chk_fail __stack_chk_guard __rseq_offset __rseq_size
'

island=""
queue=$(echo "$objs" | grep '/crash/')
[ -n "$queue" ] || { echo "FAIL: no objects of libptrec/crash/ found"; exit 1; }
status=0
while [ -n "$queue" ]; do
	o=$(echo "$queue" | head -n 1)
	queue=$(echo "$queue" | sed 1d)
	case " $island " in *" $o "*) continue ;; esac
	island="$island $o"
	for s in $("$NM" -u "$o" | awk '{print $NF}'); do
		case "$s" in
		ptrec_*)
			def=""
			for d in $objs; do
				if "$NM" --defined-only "$d" | awk '{print $NF}' | grep -qx "$s"; then def=$d; break; fi
			done
			if [ -z "$def" ]; then
				echo "FAIL: $(basename "$o") calls $s, which no libptrec_rt object defines"; status=1
			else
				queue=$(printf '%s\n%s' "$queue" "$def" | sed '/^$/d')
			fi ;;
		__asan_*|__ubsan_*|__sanitizer_*|__lsan_*) ;;
		# aarch64 GCC's outline atomics (-moutline-atomics, libgcc): one LSE instruction or
		# an LL/SC loop each, no locks, no state: async-signal-safe
		__aarch64_cas[0-9]*_*|__aarch64_swp[0-9]*_*|__aarch64_ld[a-z]*[0-9]*_*) ;;
		*)
			if ! echo "$safe" | tr ' ' '\n' | grep -qx "$s"; then
				echo "FAIL: $(basename "$o") references $s, which is not async-signal-safe"; status=1
			fi ;;
		esac
	done
done

# Each island source says so at its top.
for o in $island; do
	layer=$(basename "$(dirname "$(dirname "$o")")")
	[ "$(basename "$(dirname "$o")")" = ".libs" ] || layer=$(basename "$(dirname "$o")")
	c="$src/$layer/$(basename "$o" .o | sed 's/^libptrec_rt_la-//').c"
	if [ ! -f "$c" ]; then
		echo "FAIL: no source $c for island object $(basename "$o")"; status=1
	elif ! head -n 25 "$c" | grep -qi 'async-signal-safe'; then
		echo "FAIL: $c is on the crash path but does not say it is async-signal-safe at its top"; status=1
	fi
	echo "island: libptrec/$layer/$(basename "$c")"
done
[ $status -eq 0 ] && echo "PASS: the crash island calls only async-signal-safe functions"

# The rule must be able to fail: an island file that calls malloc and does not say it is safe.
if [ -z "${PTREC_ISLAND_INNER:-}" ] && [ -n "${CC:-}" ]; then
	t=$(mktemp -d "${TMPDIR:-/tmp}/ptrec-island.XXXXXX")
	mkdir -p "$t/libptrec/crash/.libs"
	printf '#include <stdlib.h>\nvoid *ptrec_bad(void) { return malloc(1); }\n' >"$t/libptrec/crash/bad.c"
	if $CC -c -o "$t/libptrec/crash/.libs/libptrec_rt_la-bad.o" "$t/libptrec/crash/bad.c"; then
		out=$(PTREC_ISLAND_INNER=1 top_builddir="$t" top_srcdir="$t" sh "$0" 2>&1); r=$?
		if [ $r -eq 0 ] || ! echo "$out" | grep -q 'references malloc' ||
		   ! echo "$out" | grep -q 'does not say it is async-signal-safe'; then
			echo "FAIL: the check accepted an island file calling malloc: $out"; status=1
		fi
	else
		echo "FAIL: could not compile the negative case with $CC"; status=1
	fi
	rm -rf "$t"
fi
exit $status
