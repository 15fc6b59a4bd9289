#!/usr/bin/env python3
"""Why device records were not matched by identity: lists, per kind and name, the device records
whose api_enter_ns names no host call of the same process, with the host call nearest before.
usage: explain_unmatched.py GRTRACE TRACE"""
import bisect
import collections
import json
import subprocess
import sys

grtrace, trace = sys.argv[1:3]
out = subprocess.run([grtrace, "parse", "--format", "json", trace], check=True, capture_output=True,
                     text=True).stdout
records = [json.loads(line) for line in out.splitlines() if line]
calls = collections.defaultdict(list)  # pid -> sorted (ts, api)
for r in records:
    if "api" in r and r["type"] not in ("gpu_kernel", "gpu_copy", "gpu_launch"):
        calls[r["pid"]].append((r["ts_ns"], r["api"], r.get("own", False)))
for v in calls.values():
    v.sort()
report = json.loads(subprocess.run([grtrace, "report", trace, "--jobs", "--format", "json"],
                                   check=True, capture_output=True, text=True).stdout)["jobs"]
print("notes:", {k: v for k, v in report["notes"].items() if k.startswith("device")})
flags = collections.Counter(f for j in report["jobs"] for f in j["flags"])
print("job flags:", dict(flags))
odd = collections.Counter()
for j in report["jobs"]:
    if {"matched-by-time", "matched-by-order"} & set(j["flags"]):
        odd[(j["kind"], j["name"][:60], tuple(j["flags"]))] += 1
for k, n in odd.most_common(20):
    print("job matched without identity:", n, k)
unmatched = collections.Counter()
for r in records:
    if r["type"] not in ("gpu_kernel", "gpu_copy", "gpu_launch"):
        continue
    c = calls.get(r["pid"], [])
    at = r.get("api_enter_ns", 0)
    i = bisect.bisect_left(c, (at,))
    if i < len(c) and c[i][0] == at:
        continue
    before = c[i - 1] if i else None
    name = r.get("kernel") or r.get("kind") or "?"
    unmatched[(r["type"], str(name)[:60], at == 0, before[1] if before else None,
               before[2] if before else None, r.get("own", False))] += 1
for k, n in unmatched.most_common(20):
    print("device record without its call (type, name, enter=0, call before, own, own record):", n, k)
