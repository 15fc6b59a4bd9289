#!/usr/bin/env python3
"""Compares the cuda records of two traces of the same workload, field by field.

Usage: cuda_compare.py [--by-entry] A.json B.json   (grtrace parse --format json --all output)

The two runs are different processes, so what a run decides for itself is
compared by meaning, not by value: process and thread ids by order of first
appearance, stack ids through the frames they hold, each frame as
(file, offset in it) through the process's mapping records (libraries load at
other addresses when one more is preloaded). Times are left out: the record
header's ts_ns, api_ns, the bandwidth derived from it, and the cpu. Every
other field of every launch, graph launch, allocation, free, copy, memset,
sync, module load and name record must be equal, in the same order per
thread: the order of the trace, or with --by-entry the order the calls
entered in (a call made inside another returns first, and the two paths
hand out records at different ends of a call). Prints one line per
difference; exit 1 when there is any.
"""
import json
import os
import sys

CALLS = {"launch", "graph_launch", "alloc", "free", "memcpy", "memset", "sync",
         "module_load", "func_name"}
TIMED = {"ts_ns", "seq", "cpu", "api_ns", "gbytes_per_s", "pid", "tid", "ppid", "stack_id"}


def load(path):
    recs = [json.loads(line) for line in open(path)]
    maps, stacks = {}, {}
    for r in recs:
        if r["type"] == "mapping":
            maps.setdefault(r["pid"], []).append(r)
        elif r["type"] == "stack":
            stacks[r["stack_id"]] = r["ips"]
    return recs, maps, stacks


def frame(maps, pid, ip):
    for m in maps.get(pid, []):
        if m["start"] <= ip < m["end"]:
            # a return address a pending uretprobe replaced with its trampoline: older kernels
            # (6.1; not 6.12) show the trampoline in the uprobe path's stacks of a call inside
            # a call, where the frame of the call around it is
            if m["path"] == "[uprobes]":
                return ("?", None)
            return (os.path.basename(m["path"]), ip - m["start"] + m["offset"])
    # no map read (the process exited first): the address alone means nothing across runs
    return ("?", None)


def calls(path, by_entry=False):
    """Each thread's calls, keyed (process index, thread index). Threads of a process are
    numbered by their calls, not by when they started: which of two threads records first
    is the scheduler's choice."""
    recs, maps, stacks = load(path)
    pids, by_thread = {}, {}
    if by_entry:
        recs = sorted(recs, key=lambda r: r.get("ts_ns", 0))
    for r in recs:
        if r["type"] not in CALLS:
            continue
        pid = pids.setdefault(r["pid"], len(pids))
        key = {k: v for k, v in r.items() if k not in TIMED}
        key["process"] = pid
        key["parent_is_traced"] = r["ppid"] in pids
        if r.get("stack_id", -1) >= 0:
            key["stack"] = [frame(maps, r["pid"], ip)
                            for ip in stacks.get(r["stack_id"], [])]
        by_thread.setdefault((pid, r["tid"]), []).append(key)
    out = {}
    for pid in range(len(pids)):
        # ordered by the calls without their stacks: a stack the uprobe path could not walk
        # must not reorder the threads (then every record of two threads would differ)
        # nor may the addresses the driver handed out: which thread allocates first is the
        # scheduler's choice too (the addresses are compared per process, in main)
        threads = sorted((v for (p, _), v in by_thread.items() if p == pid),
                         key=lambda v: json.dumps([{k: c[k] for k in c if k not in ("stack", "addr")}
                                                   for c in v], sort_keys=True, default=str))
        for i, v in enumerate(threads):
            out[(pid, i)] = v
    return out


def same_frames(a, b):
    """Equal stacks, where a frame whose process's map was never read matches any."""
    if a is None or b is None or len(a) != len(b):
        return False
    return all(f == g or f[1] is None or g[1] is None for f, g in zip(a, b))


def main():
    global missing_stacks
    args = sys.argv[1:]
    by_entry = args[0] == "--by-entry"
    if by_entry:
        args = args[1:]
    a, b = calls(args[0], by_entry), calls(args[1], by_entry)
    bad = 0
    if sorted(a) != sorted(b):
        print(f"threads differ: {sorted(a)} vs {sorted(b)}")
        bad += 1
    total = missing_stacks = 0
    for thread in sorted(set(a) & set(b)):
        ra, rb = a[thread], b[thread]
        if len(ra) != len(rb):
            print(f"thread {thread}: {len(ra)} vs {len(rb)} records")
            bad += 1
        for i, (x, y) in enumerate(zip(ra, rb)):
            total += 1
            for k in sorted(set(x) | set(y)):
                if k == "addr":
                    continue
                # the kernel's stack walk of the uprobe path can fail, rarely
                # (tests/e2e/lib/cuda_expect.py allows 1 launch in 20)
                if k == "stack" and (x.get(k) is None or y.get(k) is None) and \
                        x.get("type") == "launch":
                    missing_stacks += 1
                    continue
                if k == "stack" and same_frames(x.get(k), y.get(k)):
                    continue
                if x.get(k) != y.get(k):
                    print(f"thread {thread} record {i} ({x.get('api')}): {k}: "
                          f"{x.get(k)!r} vs {y.get(k)!r}")
                    bad += 1
    for pid in sorted({p for p, _ in a}):
        addrs = [sorted(str(c.get("addr")) for (p, _), v in side.items() if p == pid for c in v)
                 for side in (a, b)]
        if addrs[0] != addrs[1]:
            print(f"process {pid}: the addresses of its allocations and frees differ")
            bad += 1
    print(f"{total} records compared, {bad} differences, "
          f"{missing_stacks} launch stacks missing on one side")
    if missing_stacks > max(1, total // 20):
        bad += 1
    return 1 if bad or not total else 0


if __name__ == "__main__":
    sys.exit(main())
