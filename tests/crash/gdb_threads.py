# gdb_threads.py — gdb's stack of every thread of a process it is attached to, for
# test_crash_blocked_threads.sh:  gdb -p PID -batch -nx -x gdb_threads.py
# Prints one line per thread: "THREAD TID PC0 PC1 ...", the pcs (hex, no 0x) of its physical
# frames innermost first (gdb's normal and signal-trampoline frames, and its tail-call frames,
# which the report shows too; an inlined call's frame has the pc of the frame it is inlined into
# and is left out), frame #0 being the thread's pc.
import gdb

gdb.execute("set pagination off", to_string=True)
gdb.execute("set backtrace limit 500", to_string=True)
for t in sorted(gdb.selected_inferior().threads(), key=lambda t: t.ptid[1]):
    t.switch()
    pcs = []
    f = gdb.newest_frame()
    while f is not None and len(pcs) < 500:
        if f.type() in (gdb.NORMAL_FRAME, gdb.SIGTRAMP_FRAME, gdb.TAILCALL_FRAME):
            pcs.append("%x" % f.pc())
        f = f.older()
    print("THREAD %d %s" % (t.ptid[1], " ".join(pcs)))
