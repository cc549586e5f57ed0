# gdb_unwind.py — the gdb side of the unwinding oracle (test_unwind_gdb.sh).  Run as
#   gdb -batch -nx -x gdb_unwind.py --args PROGRAM SCENARIO
# with PTREC_DIR set to an empty directory and PTREC_TOOL to the ptrec tool.  It runs the
# program to its fatal signal, records gdb's backtrace of the faulting thread (frame types,
# pcs, names), lets the signal through so that libptrec writes its dump, then reads the dump's
# JSON report and compares the unwound stack with gdb's, frame for frame (gdb_compare.py).
# Prints one line:
#   RESULT equal|differ physical=N/M inline=K/I tailcall=T/U extra=E
# followed by both stacks when they differ.
import glob
import os
import subprocess
import sys

import gdb

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gdb_compare  # noqa: E402 - beside this script

for cmd in ("set pagination off", "set confirm off", "set width 0",
            "set backtrace past-main on", "set backtrace past-entry on",
            "set backtrace limit 5000",
            "handle SIGUSR1 SIGUSR2 SIGALRM SIGCHLD SIGPIPE nostop noprint pass",
            "handle SIG34 SIG35 SIG36 SIG37 SIG38 SIG39 SIG40 nostop noprint pass"):
    gdb.execute(cmd, to_string=True)

KINDS = {gdb.NORMAL_FRAME: "normal", gdb.INLINE_FRAME: "inline",
         gdb.SIGTRAMP_FRAME: "sigtramp", gdb.TAILCALL_FRAME: "tailcall"}

gdb.execute("run", to_string=True)
frames = []
f = gdb.newest_frame()
while f is not None and len(frames) < 5000:
    frames.append((KINDS.get(f.type(), "other"), f.pc(), f.name() or "??"))
    f = f.older()
gdb.execute("continue", to_string=True)

dumps = sorted(glob.glob(os.path.join(os.environ["PTREC_DIR"], "*.ptrec")), key=os.path.getmtime)
if not dumps:
    print("RESULT nodump")
    gdb.execute("quit")
rep = subprocess.run([os.environ["PTREC_TOOL"], "report", "--format", "json", dumps[-1]],
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
try:
    ours = gdb_compare.report_backtrace(rep.stdout.decode())
except Exception as e:  # noqa: BLE001 - any failure is a test failure
    print("RESULT noreport", e, rep.stderr.decode()[:500])
    gdb.execute("quit")

for line in gdb_compare.compare(frames, ours):
    print(line)
gdb.execute("quit")
