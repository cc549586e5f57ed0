#!/bin/sh
# A server shutting down while a worker crashes: main calls exit(0), or returns from main, once
# the worker's dump is being written.  Without libptrec the crash signal kills the process at
# once; with it the exit waits for the crash to end the process: status 139 (not 0), one
# stderr line, the whole dump and report of the worker.
. "$top_srcdir/tests/crash/crash_common.sh"
crash_run exit_race SEGV 'race_worker > crash_in_race_worker'
rm -f "$PTREC_DIR"/*
crash_run return_race SEGV 'race_worker > crash_in_race_worker'
