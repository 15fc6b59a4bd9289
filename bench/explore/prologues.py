#!/usr/bin/env python3
"""Prints the first bytes of libcuda entry points: which instruction a uprobe at offset 0 hits.

A uprobe emulates a few instructions (push, nop) and single-steps the rest out of line, which
costs an extra trap; endbr64 first means the probe could sit 4 bytes later for free.
usage: prologues.py LIBCUDA SYMBOL...
"""
import os, struct, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from elf_symbols import SHT_DYNSYM, symbols  # noqa: E402

def dynsyms(path):
    data = open(path, "rb").read()
    out = symbols(data, SHT_DYNSYM)
    # file offset of a virtual address, through the program headers
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    loads = [struct.unpack_from("<IIQQQQQQ", data, phoff + i * phentsize) for i in range(phnum)]
    def file_off(va):
        for p in loads:
            if p[0] == 1 and p[3] <= va < p[3] + p[6]:
                return va - p[3] + p[2]
    return data, out, file_off

data, syms, file_off = dynsyms(sys.argv[1])
for name in sys.argv[2:]:
    if name not in syms:
        print(f"{name:28s} absent")
        continue
    off = file_off(syms[name])
    print(f"{name:28s} {data[off:off + 12].hex(' ')}")
