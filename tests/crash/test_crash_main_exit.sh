#!/bin/sh
# A server whose main thread ends with pthread_exit while its workers go on: /proc/self then
# names the zombie leader, whose maps, exe and memory are gone.  A worker's crash still gets a
# dump that places the program (maps, build-id, exe), holds the stack and the vDSO, and a
# report that names the crashing function.
. "$top_srcdir/tests/crash/crash_common.sh"
skip_under_qemu_user "qemu-user 7.2 itself aborts here at times ('cpu_exec: assertion failed: (cpu == current_cpu)', exit status 127, before any signal reaches the program) when a thread faults after the main thread's pthread_exit"
crash_run main_exit SEGV 'after_main_worker > crash_after_main_exit'
grep -q "^event 1 signo 11 .* exe $crasher\$" "$work/check.txt" || fail "the dump does not name the program"
