#!/bin/sh
# A chain test (chainer.c, crash_common.sh): a language runtime's own thread, as Go makes them
# in every cgo program (dynamically linked, so `ptrec run` preloads libptrec): created with every
# signal blocked by pthread_sigmask, it unblocks them with the raw rt_sigprocmask and takes the
# alternate stack it reads with the raw sigaltstack (libptrec's) as its signal stack; its
# SA_ONSTACK handler must run there.  Its 1000 guard faults (a recovered nil dereference in Go)
# are handled: no dump.  Then a real crash: exactly one dump, of that crash.  (Under `ptrec run`
# every Go program that recovered a nil dereference died: the first fault on such a thread was
# taken as blocked, a dying crash, and on the main thread Go's handler ran off its signal stack
# and threw "non-Go code set up signal handler without SA_ONSTACK flag".)
CRASHER=chainer
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run runtime_thread SEGV 'handle_request > crash_runtime_thread > crash_after_guards'
first_fault 0x2bad0 'the real crash'
grep -q "^chainer: 1000 guard faults handled on the runtime's thread, 0 off its signal stack\$" "$work/stderr" ||
	fail "the runtime's guard faults were not all handled on its signal stack"
