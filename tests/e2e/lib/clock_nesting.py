#!/usr/bin/env python3
"""Whether a trace's CUDA calls and system calls share one clock: on each thread a system call
lies inside a CUDA call or outside it, never across its entry or return by more than SLACK ns.

usage: clock_nesting.py TRACE.json [--slack NS] [--sleep-after-last COMM]
  TRACE.json          `grtrace parse --format json --all` of a trace with the cuda and syscall
                      sources
  --sleep-after-last  also: COMM's last clock_nanosleep starts after its last CUDA call returned
Prints one line (calls, system calls, how many inside a call, across one, the largest overshoot)
and exits 1 when a system call lies across a call or the sleep comes first.
"""
import argparse
import collections
import json

ap = argparse.ArgumentParser()
ap.add_argument("trace")
ap.add_argument("--slack", type=int, default=1000)
ap.add_argument("--sleep-after-last")
a = ap.parse_args()

calls = collections.defaultdict(list)  # tid -> [(entry, return)]
syscalls = []  # (tid, start, end, name)
comm_of = {}
for line in open(a.trace):
    r = json.loads(line)
    if r.get("api_ns") is not None and r.get("type") not in ("syscall", "nv_ioctl"):
        calls[r["tid"]].append((r["ts_ns"], r["ts_ns"] + r["api_ns"]))
        comm_of[r["tid"]] = r.get("comm")
    elif r.get("type") == "syscall" and r.get("state") == "returned":
        syscalls.append((r["tid"], r["ts_ns"], r["ts_ns"] + (r.get("duration_ns") or 0), r["name"]))

inside = across = 0
worst = 0
examples = []
for tid, s, e, name in syscalls:
    for c0, c1 in calls.get(tid, ()):
        if c0 <= s and e <= c1:
            inside += 1
            break
        # overlapping without nesting: how far it reaches past the call's edge
        if s < c1 and e > c0:
            over = min(max(c0 - s, 0) + max(e - c1, 0), c1 - s, e - c0)
            worst = max(worst, over)
            if over > a.slack:
                across += 1
                examples.append((name, s - c0, e - c1))
            break
ok = bool(calls) and bool(syscalls) and across == 0
sleep_note = ""
if a.sleep_after_last:
    tids = [t for t, c in comm_of.items() if c == a.sleep_after_last]
    last = max((c1 for t in tids for _, c1 in calls[t]), default=None)
    sleeps = [s for t, s, e, n in syscalls if t in tids and n == "clock_nanosleep"]
    gap = sleeps[-1] - last if sleeps and last is not None else None
    ok = ok and gap is not None and gap >= 0
    sleep_note = ", sleep %s ns after the last return" % gap
print("%d calls, %d system calls: %d inside a call, %d across one%s (largest overshoot %d ns)%s"
      % (sum(map(len, calls.values())), len(syscalls), inside, across,
         " " + str(examples[:3]) if examples else "", worst, sleep_note))
raise SystemExit(0 if ok else 1)
