# gdb_unwind.py — the gdb side of the unwinding oracle (test_unwind_gdb.sh).  Run as
#   gdb -batch -nx -x gdb_unwind.py --args PROGRAM SCENARIO
# with PTREC_DIR set to an empty directory and PTREC_TOOL to the ptrec tool.  It runs the
# program to its fatal signal, records gdb's backtrace of the faulting thread (frame types,
# pcs, names), lets the signal through so that libptrec writes its dump, then reads the dump's
# JSON report and compares the unwound stack with gdb's, frame for frame.  Prints one line:
#   RESULT equal|differ physical=N/M inline=K/I tailcall=T/U extra=E
# followed by both stacks when they differ.  "extra" counts frames of the report that gdb does
# not show (must be 0); tailcall=T/U: the report's tail-call frames and gdb's.
import glob
import json
import os
import subprocess

import gdb

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
    threads = json.loads(rep.stdout.decode())["threads"]
    ours = [t for t in threads if t["crashed"]][0].get("backtrace", [])
except Exception as e:  # noqa: BLE001 - any failure is a test failure
    print("RESULT noreport", e, rep.stderr.decode()[:500])
    gdb.execute("quit")

phys = [fr for fr in frames if fr[0] in ("normal", "sigtramp")]
ninline = sum(1 for fr in frames if fr[0] == "inline")
ntail = sum(1 for fr in frames if fr[0] == "tailcall")
gdb_pcs = set(fr[1] for fr in frames if fr[0] in ("normal", "sigtramp", "tailcall"))
our_phys = [o for o in ours if not o.get("inlined") and o.get("found_by") != "tail call"]
our_pcs = [int(o["addr"], 16) for o in our_phys]
our_tail = [o for o in ours if o.get("found_by") == "tail call" and not o.get("inlined")]
extra = sum(1 for o in ours if not o.get("inlined") and int(o["addr"], 16) not in gdb_pcs)
same_phys = sum(1 for a, b in zip(our_pcs, [fr[1] for fr in phys]) if a == b)
equal = len(our_pcs) == len(phys) and same_phys == len(phys)
# Tail-call frames (gdb's, synthesized from DWARF call sites, and the report's "tail call"
# frames) in the same places, pc for pc.
seq_gdb_pcs = [(k == "tailcall", pc) for k, pc, _ in frames if k != "inline"]
seq_our_pcs = [(o.get("found_by") == "tail call", int(o["addr"], 16)) for o in ours
               if not o.get("inlined")]
equal = equal and seq_gdb_pcs[:len(seq_our_pcs)] == seq_our_pcs[:len(seq_gdb_pcs)]


def base_name(n):
    """'void ns::f<int>(int)' and 'ns::f<int>' -> 'f': gdb and the demangler differ in
    return types, parameters and template spelling, not in the function's own name."""
    n = n.split("(")[0].split("<")[0]
    return n.split("::")[-1].split(" ")[-1]


# With inline frames in the report, compare the whole list (inline frames by name): gdb's
# inline frames and the frames that contain them have the same pc; the report lists them in
# the same order (innermost first).
our_inline = [o for o in ours if o.get("inlined")]
if equal and (ninline or our_inline):
    seq_gdb = [(k, n) for k, _, n in frames]
    seq_our = [("inline" if o.get("inlined") else "x", o.get("function", "??")) for o in ours]
    equal = len(seq_gdb) == len(seq_our) and all(
        (a[0] == "inline") == (b[0] == "inline") and
        (a[0] != "inline" or base_name(a[1]) == base_name(b[1]))
        for a, b in zip(seq_gdb, seq_our))
print("RESULT %s physical=%d/%d inline=%d/%d tailcall=%d/%d extra=%d" %
      ("equal" if equal else "differ", same_phys, len(phys), len(our_inline), ninline,
       len(our_tail), ntail, extra))
if not equal or extra:
    for k, pc, n in frames[:40]:
        print("  gdb  %-8s 0x%x %s" % (k, pc, n))
    for o in ours[:40]:
        print("  ours %-8s %s %s%s" % (o.get("found_by", "?"), o["addr"], o.get("function", "??"),
                                    " (inlined)" if o.get("inlined") else ""))
gdb.execute("quit")
