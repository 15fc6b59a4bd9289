# Turns the in-process recording of CUDA calls off and on inside a process that grtrace records
# with `-s cuda` (the library's call_record_on flag), for A/B benchmarks within one process: the
# rounds of separate processes differ by more than the cost being measured (bench/RESULTS.md).
# Bench only: the flag is found through the library's symbol table, which a stripped library
# lacks; where there is no library, or it does not record, the switch does nothing (an A/A run).
import ctypes
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from elf_symbols import SHT_SYMTAB, symbols  # noqa: E402

LIBRARY = "libgrtrace-inject.so"


def _symbol_value(path, name):
    """st_value of name in the ELF64 file's .symtab, or None."""
    with open(path, "rb") as f:
        return symbols(f.read(), SHT_SYMTAB).get(name)


def _library_base():
    """(load address, path) of the library in this process, or (None, None)."""
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split()
            if len(fields) >= 6 and fields[5].endswith("/" + LIBRARY) and int(fields[2], 16) == 0:
                return int(fields[0].split("-")[0], 16), fields[5]
    return None, None


class RecordSwitch:
    """on(True/False) sets whether calls are recorded; active says whether it does anything."""

    def __init__(self):
        self.flag = None
        base, path = _library_base()
        value = _symbol_value(path, "call_record_on") if path else None
        if value is not None:
            flag = ctypes.c_bool.from_address(base + value)
            if flag.value:  # the library records this process's calls: the switch is live
                self.flag = flag

    @property
    def active(self):
        return self.flag is not None

    def on(self, recording):
        if self.flag is not None:
            self.flag.value = recording
