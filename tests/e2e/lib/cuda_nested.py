#!/usr/bin/env python3
"""Checks the calls made inside calls in a trace of tests/workloads/cuda_known run with
FAKE_CUDA_NESTED=1 (tests/fake_libcuda: every cuLaunchKernel records FAKE_NESTED_EVENT on its
stream, every cuMemAlloc_v2 launches FAKE_NESTED_FUNCTION, through the public entry points,
on the calling thread).

Usage: cuda_nested.py NESTED.json OUT.json   (grtrace parse --format json --all output)

Each nested call must be there, once, with its fields, and inside the call that made it: one
launch inside each cuMemAlloc_v2 that succeeded, one event record inside each cuLaunchKernel
and cuLaunchKernel_ptsz (the nested launches' own included), on the same thread and stream.
Writes the trace less the nested calls to OUT.json, for cuda_compare.py against the same
workload recorded without them. Prints what is wrong; exit 1 when anything is.
"""
import json
import sys

NESTED_EVENT = 0xe5e70
NESTED_FUNCTION = 0xe5e700
LAUNCHERS = ("cuLaunchKernel", "cuLaunchKernel_ptsz")


def span(r):
    return r["ts_ns"], r["ts_ns"] + (r.get("api_ns") or 0)


def innermost(rec, calls):
    """The shortest call of rec's thread whose time holds rec's."""
    lo, hi = span(rec)
    around = [c for c in calls if c is not rec and c["tid"] == rec["tid"] and
              span(c)[0] <= lo and hi <= span(c)[1]]
    return min(around, key=lambda c: span(c)[1] - span(c)[0], default=None)


def main():
    recs = [json.loads(line) for line in open(sys.argv[1])]
    calls = [r for r in recs if "api" in r]
    launches = [r for r in calls if r["type"] == "launch" and r["function"] == NESTED_FUNCTION]
    events = [r for r in calls if r["type"] == "sync" and r.get("event") == NESTED_EVENT]
    allocs = [r for r in calls if r["api"] == "cuMemAlloc_v2" and r["ret"] == 0]
    launchers = [r for r in calls if r["api"] in LAUNCHERS]
    bad = []
    if len(launches) != len(allocs):
        bad.append(f"{len(launches)} nested launches for {len(allocs)} cuMemAlloc_v2")
    if len(events) != len(launchers):
        bad.append(f"{len(events)} nested event records for {len(launchers)} launches")
    for rec in launches:
        if (rec["api"], rec["grid"], rec["block"], rec["ret"]) != \
                ("cuLaunchKernel", [3, 1, 1], [32, 1, 1], 0):
            bad.append(f"nested launch seq {rec['seq']}: fields {rec}")
    for rec in events:
        if (rec["api"], rec["kind"], rec["ret"]) != ("cuEventRecord", "event_record", 0):
            bad.append(f"nested event seq {rec['seq']}: fields {rec}")
    holders = {}
    for rec, want in [(r, "cuMemAlloc_v2") for r in launches] + \
                     [(r, LAUNCHERS) for r in events]:
        around = innermost(rec, calls)
        if around is None or around["api"] not in want:
            bad.append(f"{rec['api']} seq {rec['seq']} is inside "
                       f"{around and around['api']}, not {want}")
            continue
        if rec["type"] == "sync" and rec["stream"] != around["stream"]:
            bad.append(f"event seq {rec['seq']}: stream {rec['stream']} in a launch on "
                       f"{around['stream']}")
        holders[around["seq"]] = holders.get(around["seq"], 0) + 1
    if any(n != 1 for n in holders.values()):
        bad.append(f"calls holding more than one nested call: {holders}")
    nested = {id(r) for r in launches + events}
    with open(sys.argv[2], "w") as out:
        for r in recs:
            if id(r) not in nested:
                out.write(json.dumps(r) + "\n")
    for line in bad:
        print(line)
    print(f"{len(launches)} nested launches, {len(events)} nested event records, "
          f"{len(bad)} problems")
    return 1 if bad or not launches or not events else 0


if __name__ == "__main__":
    sys.exit(main())
