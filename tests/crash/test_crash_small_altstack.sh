#!/bin/sh
# The server replaces libptrec's alternate signal stack by an 8 KiB one of its own after
# ptrec_init (SIGSTKSZ, as language runtimes and crash reporters do).  libptrec's handler then
# runs on that stack, which writing the dump overflowed ("SIGSEGV while writing the crash
# dump", no dump): the dump is written on a stack of libptrec's own.  A plain fault and a stack
# overflow each get their one dump and report.  Threads that set their own alternate stack and
# exit leave no mapping of libptrec's behind (altstack_threads).  A server that disables its
# alternate stack after ptrec_init, then overflows its stack, gets its dump too (the kernel
# keeps libptrec's stack; read back, it is disabled).
CRASHER=chainer
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run small_altstack SEGV 'handle_request > crash_write_wild'
crash_run small_altstack_overflow SEGV 'recurse_deep > recurse_deep'
crash_run altstack_threads SEGV 'handle_request > crash_write_wild'
crash_run altstack_disabled SEGV 'recurse_deep > recurse_deep'
