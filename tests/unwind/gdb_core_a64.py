# gdb_core_a64.py — the gdb side of the aarch64 unwinding oracle (test_unwind_a64.sh): gdb-multiarch
# reads the core that qemu-user wrote of a crashed aarch64 program (qemu_*.core) and its
# backtrace of the faulting thread is compared (gdb_compare.py) with the backtrace of each
# `ptrec report --format json` of the dump libptrec wrote in the same crash.  Run as
#   gdb-multiarch -batch -nx -x gdb_core_a64.py
# with A64_PROGRAM (the program), A64_CORE (qemu's core), A64_SYSROOT (the aarch64 sysroot),
# A64_SOLIB_PATH (directories of its other libraries), A64_DUMP (the .ptrec dump) and
# A64_TOOLS ("LABEL=PATH,..." of ptrec tools: the aarch64 one under qemu-user, the host's).
# Prints for each tool "LABEL RESULT ..." (the line gdb_compare.compare makes) and, when they
# differ, both stacks.
#
# qemu-user (7.2) writes no NT_ARM_PAC_MASK note, which Linux writes in the core of every
# process with pointer authentication (AT_HWCAP has HWCAP_PACA): gdb then cannot strip the
# signed return addresses and stops at the first frame that saved one.  The script adds the
# note for each thread to a copy of the core, with the masks the kernel reports for a 48-bit
# user address space, GENMASK(54, 48), the space qemu emulates.
import os
import shutil
import struct
import subprocess
import sys

import gdb

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gdb_compare  # noqa: E402 - beside this script

NT_ARM_PAC_MASK = 0x406
NT_AUXV = 6
AT_HWCAP = 16
HWCAP_PACA = 1 << 30
PAC_MASK = ((1 << 55) - 1) & ~((1 << 48) - 1)   # bits 54..48


def notes(b, off, size):
    """(type, name, start, end, desc offset, desc size) of the notes in b[off:off+size]."""
    end = off + size
    while off + 12 <= end:
        namesz, descsz, typ = struct.unpack_from("<III", b, off)
        name = bytes(b[off + 12:off + 12 + namesz]).rstrip(b"\0")
        desc = off + 12 + ((namesz + 3) & ~3)
        nxt = desc + ((descsz + 3) & ~3)
        yield typ, name, off, nxt, desc, descsz
        off = nxt


def add_pac_notes(path, out):
    """Copies the core at path to out with an NT_ARM_PAC_MASK note after the notes of each
    thread (a thread's notes follow its NT_PRSTATUS) that has none, when the process had pointer
    authentication.  The data after the notes moves by whole pages when they need the room.
    Returns what was done, for the log."""
    b = bytearray(open(path, "rb").read())
    phoff, = struct.unpack_from("<Q", b, 0x20)
    shoff, = struct.unpack_from("<Q", b, 0x28)
    phentsize, phnum = struct.unpack_from("<HH", b, 0x36)
    phdrs = [phoff + i * phentsize for i in range(phnum)]
    note_ph = [p for p in phdrs if struct.unpack_from("<I", b, p)[0] == 4]  # PT_NOTE
    if len(note_ph) != 1:
        raise RuntimeError("%d PT_NOTE segments" % len(note_ph))
    p = note_ph[0]
    off, = struct.unpack_from("<Q", b, p + 8)
    size, = struct.unpack_from("<Q", b, p + 32)
    hwcap, groups = 0, []   # groups: [start, end, has the note] per thread
    for typ, name, start, end, desc, descsz in notes(b, off, size):
        if typ == 1 and name == b"CORE":  # NT_PRSTATUS
            groups.append([start, end, False])
        elif groups:
            groups[-1][1] = end
            groups[-1][2] |= typ == NT_ARM_PAC_MASK
        if typ == NT_AUXV and name == b"CORE":
            for k in range(desc, desc + descsz - 15, 16):
                key, val = struct.unpack_from("<QQ", b, k)
                if key == AT_HWCAP:
                    hwcap = val
    if not hwcap & HWCAP_PACA or all(g[2] for g in groups):
        shutil.copyfile(path, out)
        return "no note needed"
    note = struct.pack("<III", 6, 16, NT_ARM_PAC_MASK) + b"LINUX\0\0\0" + \
        struct.pack("<QQ", PAC_MASK, PAC_MASK)
    new, at = bytearray(), off
    for start, end, has in groups:
        new += b[at:end] + (b"" if has else note)
        at = end
    new += b[at:off + size]
    old_end = off + size
    nxt = min([struct.unpack_from("<Q", b, q + 8)[0] for q in phdrs
               if struct.unpack_from("<Q", b, q + 8)[0] >= old_end] + [len(b)])
    shift = 0
    while off + len(new) > nxt + shift:
        shift += 4096
    for q in phdrs:
        o, = struct.unpack_from("<Q", b, q + 8)
        if o >= old_end:
            struct.pack_into("<Q", b, q + 8, o + shift)
    if shoff >= old_end:
        struct.pack_into("<Q", b, 0x28, shoff + shift)
    struct.pack_into("<QQ", b, p + 32, len(new), len(new))
    pad = bytes(nxt + shift - off - len(new))
    open(out, "wb").write(bytes(b[:off]) + bytes(new) + pad + bytes(b[nxt:]))
    return "%d NT_ARM_PAC_MASK note(s) added" % sum(1 for g in groups if not g[2])


for cmd in ("set pagination off", "set confirm off", "set width 0",
            "set auto-load libthread-db off",
            "set backtrace past-main on", "set backtrace past-entry on",
            "set backtrace limit 5000",
            "set sysroot " + os.environ["A64_SYSROOT"],
            "set solib-search-path " + os.environ["A64_SOLIB_PATH"]):
    gdb.execute(cmd, to_string=True)

core = os.environ["A64_CORE"] + ".pac"
try:
    how = add_pac_notes(os.environ["A64_CORE"], core)
except Exception as e:  # noqa: BLE001 - any failure is a test failure
    print("RESULT nocore", e)
    gdb.execute("quit")
gdb.execute("file " + os.environ["A64_PROGRAM"], to_string=True)
gdb.execute("core-file " + core, to_string=True)

KINDS = {gdb.NORMAL_FRAME: "normal", gdb.INLINE_FRAME: "inline",
         gdb.SIGTRAMP_FRAME: "sigtramp", gdb.TAILCALL_FRAME: "tailcall"}
frames = []
f = gdb.newest_frame()
while f is not None and len(frames) < 5000:
    frames.append((KINDS.get(f.type(), "other"), f.pc(), f.name() or "??"))
    f = f.older()
print("core: %s; gdb frames: %d" % (how, len(frames)))

for spec in os.environ["A64_TOOLS"].split(","):
    label, tool = spec.split("=", 1)
    rep = subprocess.run([tool, "report", "--format", "json", os.environ["A64_DUMP"]],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        ours = gdb_compare.report_backtrace(rep.stdout.decode())
    except Exception as e:  # noqa: BLE001 - any failure is a test failure
        print(label, "RESULT noreport", e, rep.stderr.decode()[:500])
        continue
    for line in gdb_compare.compare(frames, ours):
        print(label, line)
gdb.execute("quit")
