#!/usr/bin/env python3
"""Checks one recorded case of bench/gpu_jobs/run.sh: the host launches, the device's kernel records
and the jobs of the report agree exactly, every device record was matched by identity, and none of
grtrace's own work counts. Prints ok/FAIL lines and one JSON summary line (row=...).
usage: check.py GRTRACE TRACE CASE [EXPECT_JSON]"""
import json
import subprocess
import sys

grtrace, trace, case = sys.argv[1:4]
expect = json.loads(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[4] else {}
failures = 0


def check(name, ok, detail=""):
    global failures
    print(("ok - " if ok else "FAIL - ") + f"[{case}] {name}" + (f" ({detail})" if detail != "" else ""))
    failures += 0 if ok else 1


def run(*args):
    return subprocess.run([grtrace, *args], check=True, capture_output=True, text=True).stdout


records = [json.loads(line) for line in run("parse", "--format", "json", trace).splitlines() if line]
report = json.loads(run("report", trace, "--jobs", "--format", "json"))["jobs"]
mine = [r for r in records if not r.get("own")]
own = [r for r in records if r.get("own")]


def count(kind, **where):
    return sum(1 for r in mine if r["type"] == kind and all(r.get(k) == v for k, v in where.items()))


launches = count("launch")
graph_launches = count("graph_launch")
kernel_records = sum(1 for r in mine if r["type"] == "gpu_kernel" and not r.get("graph_id"))
node_records = sum(1 for r in mine if r["type"] == "gpu_kernel" and r.get("graph_id"))
rows = report["jobs"]
kernel_jobs = sum(1 for j in rows if j["kind"] == "kernel" and not j["group"])
node_jobs = sum(1 for j in rows if j["kind"] == "kernel" and j["group"])
own_in_jobs = sum(1 for j in rows if "own" in j["flags"])
notes, totals = report["notes"], report["totals"]

check("device records all matched by identity",
      notes["device_records"] > 0 and notes["device_by_identity"] == notes["device_records"],
      f"{notes['device_by_identity']} of {notes['device_records']}")
check("none by time, by order, unmatched or late",
      notes["device_near"] == notes["device_by_order"] == notes["device_unmatched"] == notes["device_late"] == 0,
      {k: notes[k] for k in ("device_near", "device_by_order", "device_unmatched", "device_late")})
check("grtrace's own work in no job", own_in_jobs == 0, own_in_jobs)
if "kernels" in expect:
    k = expect["kernels"]
    check(f"launches = the profiler's kernels ({k})", launches == k, launches)
    check(f"gpu_kernel records = the profiler's kernels ({k})", kernel_records == k, kernel_records)
    check(f"kernel jobs = the profiler's kernels ({k})", kernel_jobs == k, kernel_jobs)
else:
    captured = expect.get("captured", 0)
    check("gpu_kernel records = launches" + (f" - {captured} captured into a graph" if captured else ""),
          kernel_records == launches - captured, f"{kernel_records} vs {launches}")
    check("kernel jobs = launches", kernel_jobs == launches, f"{kernel_jobs} vs {launches}")
if "named" in expect:
    name, n = expect["named"]
    got = count("launch", kernel=None) if name is None else sum(
        1 for r in mine if r["type"] == "launch" and r.get("kernel") and name in r["kernel"])
    check(f"{n} launches of {name}", got == n, got)
if "graph_launches" in expect:
    g, nodes = expect["graph_launches"], expect["nodes"]
    check(f"{g} graph launches", graph_launches == g, graph_launches)
    check(f"{g * nodes} graph node records", node_records == g * nodes, node_records)
    check(f"{g * nodes} graph node jobs", node_jobs == g * nodes, node_jobs)
check("incomplete jobs as expected", totals["incomplete"] == expect.get("captured", 0),
      {k: totals["first_missing"][k] for k in totals["first_missing"] if totals["first_missing"][k]})
print("row=" + json.dumps({"case": case, "launches": launches, "kernel_records": kernel_records,
                           "kernel_jobs": kernel_jobs, "graph_launches": graph_launches, "node_jobs": node_jobs,
                           "expected": expect.get("kernels", "-"), "identity": notes["device_by_identity"],
                           "device_records": notes["device_records"], "own_records": len(own),
                           "result": "PASS" if not failures else "FAIL"}))
sys.exit(1 if failures else 0)
