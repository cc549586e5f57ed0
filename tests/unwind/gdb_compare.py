# gdb_compare.py — the comparison of the unwinding oracles (gdb_unwind.py, gdb_core_a64.py):
# gdb's frames of the faulting thread against the crashed thread's "backtrace" of a
# `ptrec report --format json`, frame for frame.  Plain Python (no gdb module).
import json


def base_name(n):
    """'void ns::f<int>(int)' and 'ns::f<int>' -> 'f': gdb and the demangler differ in
    return types, parameters and template spelling, not in the function's own name."""
    n = n.split("(")[0].split("<")[0]
    return n.split("::")[-1].split(" ")[-1]


def report_backtrace(stdout):
    """The crashed thread's backtrace from a JSON report's text."""
    threads = json.loads(stdout)["threads"]
    return [t for t in threads if t["crashed"]][0].get("backtrace", [])


def compare(frames, ours):
    """frames: gdb's (kind, pc, name), kind normal|inline|sigtramp|tailcall|other, innermost
    first; ours: the report's backtrace.  Returns the lines to print: first
      RESULT equal|differ physical=N/M inline=K/I tailcall=T/U extra=E
    then both stacks when they differ.  "extra" counts frames of the report that gdb does not
    show (must be 0); tailcall=T/U: the report's tail-call frames and gdb's."""
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
    # With inline frames in the report, compare the whole list (inline frames by name): gdb's
    # inline frames and the frames that contain them have the same pc; the report lists them
    # in the same order (innermost first).
    our_inline = [o for o in ours if o.get("inlined")]
    if equal and (ninline or our_inline):
        seq_gdb = [(k, n) for k, _, n in frames]
        seq_our = [("inline" if o.get("inlined") else "x", o.get("function", "??")) for o in ours]
        equal = len(seq_gdb) == len(seq_our) and all(
            (a[0] == "inline") == (b[0] == "inline") and
            (a[0] != "inline" or base_name(a[1]) == base_name(b[1]))
            for a, b in zip(seq_gdb, seq_our))
    lines = ["RESULT %s physical=%d/%d inline=%d/%d tailcall=%d/%d extra=%d" %
             ("equal" if equal else "differ", same_phys, len(phys), len(our_inline), ninline,
              len(our_tail), ntail, extra)]
    if not equal or extra:
        for k, pc, n in frames[:40]:
            lines.append("  gdb  %-8s 0x%x %s" % (k, pc, n))
        for o in ours[:40]:
            lines.append("  ours %-8s %s %s%s" % (o.get("found_by", "?"), o["addr"],
                                                o.get("function", "??"),
                                                " (inlined)" if o.get("inlined") else ""))
    return lines
