"""The symbols of an ELF64 file, read with struct: the one ELF reader of the bench scripts.

symbols(data, section_type) gives name -> st_value for the symbols with a value in the first
section of that type (SHT_SYMTAB: every symbol of an unstripped file, hidden ones included;
SHT_DYNSYM: the exported ones), or an empty dict where the file has none.
"""
import struct

SHT_SYMTAB = 2
SHT_DYNSYM = 11


def sections(data):
    """The section headers: (name, type, flags, addr, offset, size, link, info, addralign, entsize)."""
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    return [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]


def symbols(data, section_type):
    if data[:4] != b"\x7fELF" or data[4] != 2:  # ELFCLASS64
        return {}
    secs = sections(data)
    table = next((s for s in secs if s[1] == section_type and s[9]), None)
    if table is None:
        return {}
    strings = secs[table[6]][4]
    out = {}
    for off in range(table[4], table[4] + table[5], table[9]):
        name, _, _, _, value, _ = struct.unpack_from("<IBBHQQ", data, off)
        if value:
            end = data.index(b"\0", strings + name)
            out[data[strings + name:end].decode(errors="replace")] = value
    return out
