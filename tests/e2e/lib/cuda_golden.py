#!/usr/bin/env python3
"""The cuda call records of a trace as fixed text, to compare with the expected records of a
known workload (tests/data/inproc_*.jsonl).

Usage: cuda_golden.py TRACE.json [--sorted]   (grtrace parse --format json --all output)

One line per call record, in file order (--sorted: sorted, for threads whose interleaving is
the scheduler's). What differs between runs of the same workload is written as what it means:
ids and times are left out, an API time (api_ns) as "timed" (null stays null), a stack id as
whether the call has a stack, a pointer into the workload's own image (ASLR off) as "<exe>".
Every other field is kept as parse wrote it: API, arguments, kernel names, grid/block,
stream, return code, flags. A last line counts the records of each call type.
"""
import json
import sys

CALLS = {"launch", "graph_launch", "alloc", "free", "memcpy", "memset", "sync",
         "module_load", "func_name", "context", "device"}
DROPPED = {"ts_ns", "seq", "cpu", "pid", "tid", "ppid", "gbytes_per_s"}
# a PIE image's addresses with ASLR off (setarch -R)
EXE_LO, EXE_HI = 0x555555554000, 0x560000000000


def value(v):
    if isinstance(v, int) and not isinstance(v, bool) and EXE_LO <= v < EXE_HI:
        return "<exe>"
    if isinstance(v, list):
        return [value(x) for x in v]
    return v


def main():
    lines, counts = [], {}
    for line in open(sys.argv[1]):
        r = json.loads(line)
        if r["type"] not in CALLS:
            continue
        out = {k: value(v) for k, v in r.items() if k not in DROPPED}
        if "api_ns" in out:
            out["api_ns"] = "timed" if isinstance(r["api_ns"], int) else r["api_ns"]
        if "stack_id" in out:
            out["stack_id"] = "stack" if r["stack_id"] >= 0 else "none"
        lines.append(json.dumps(out, sort_keys=True))
        counts[r["type"]] = counts.get(r["type"], 0) + 1
    if "--sorted" in sys.argv[2:]:
        lines.sort()
    print("\n".join(lines))
    print(json.dumps({"counts": counts}, sort_keys=True))


main()
