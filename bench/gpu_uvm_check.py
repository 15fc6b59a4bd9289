#!/usr/bin/env python3
"""Checks a uvm trace (grtrace parse --format json) against what uvm_workload reported it did.

usage: gpu_uvm_check.py expect EVENTS.jsonl WORKLOAD.json [WORKLOAD.json...]
       gpu_uvm_check.py overhead LABEL=RUNS.json LABEL=RUNS.json...   (the first is the baseline)
Prints one line per check, "PASS ..." or "FAIL ...", and exits 1 if any failed.
"""
import json
import statistics
import sys

SLACK_NS = 250_000_000  # teardown (cudaFree, exit) may still produce events after the last clock read


def load_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip().startswith("{")]


def per_pid(events):
    stats = {}
    for e in events:
        if e.get("type") != "uvm":
            continue
        s = stats.setdefault(e["owner_pid"], {"htod": 0, "dtoh": 0, "n_htod": 0, "n_dtoh": 0,
                                              "cpu_fault": 0, "gpu_fault": 0, "replay": 0,
                                              "first": None, "last": None, "bad_fault_pid": 0,
                                              "hdr_pid_mismatch": 0, "kinds": {}})
        kind = e["event"]
        s["kinds"][kind] = s["kinds"].get(kind, 0) + 1
        s["first"] = e["ts_ns"] if s["first"] is None else min(s["first"], e["ts_ns"])
        s["last"] = e["ts_ns"] if s["last"] is None else max(s["last"], e["ts_ns"])
        if e["pid"] != e["owner_pid"]:
            s["hdr_pid_mismatch"] += 1
        if kind == "migration":
            if e["src"] == "cpu" and e["dst"].startswith("gpu"):
                s["htod"] += e["bytes"]
                s["n_htod"] += 1
            elif e["src"].startswith("gpu") and e["dst"] == "cpu":
                s["dtoh"] += e["bytes"]
                s["n_dtoh"] += 1
        elif kind == "cpu_fault":
            s["cpu_fault"] += 1
            if e.get("fault_pid", e["owner_pid"]) != e["owner_pid"]:
                s["bad_fault_pid"] += 1
        elif kind == "gpu_fault":
            s["gpu_fault"] += 1
        elif kind == "gpu_fault_replay":
            s["replay"] += 1
    return stats


def expect(events_path, workload_paths):
    stats = per_pid(load_jsonl(events_path))
    ok = True
    pids = set()

    def check(cond, text):
        nonlocal ok
        print(("PASS " if cond else "FAIL ") + text)
        ok = ok and cond

    for path in workload_paths:
        w = [json.loads(l) for l in open(path) if l.startswith("{")][0]
        pid = w["pid"]
        pids.add(pid)
        s = stats.get(pid)
        check(s is not None, f"pid {pid}: has uvm events")
        if s is None:
            continue
        mib = 1 << 20
        print(f"     pid {pid}: {w['mib']} MiB x {w['iters']}: htod {s['htod'] / mib:.1f} MiB in {s['n_htod']} "
              f"migrations, dtoh {s['dtoh'] / mib:.1f} MiB in {s['n_dtoh']}, cpu faults {s['cpu_fault']}, "
              f"gpu faults {s['gpu_fault']}, replays {s['replay']}; kinds {s['kinds']}")
        check(s["htod"] == w["expected_htod"],
              f"pid {pid}: host->device bytes {s['htod']} == {w['expected_htod']} ({w['iters']} x {w['mib']} MiB)")
        check(s["dtoh"] == w["expected_dtoh"],
              f"pid {pid}: device->host bytes {s['dtoh']} == {w['expected_dtoh']}")
        check(s["gpu_fault"] > 0 and s["cpu_fault"] > 0, f"pid {pid}: both CPU and GPU faults seen")
        check(s["bad_fault_pid"] == 0, f"pid {pid}: every CPU fault's driver pid is the owner ({s['bad_fault_pid']} not)")
        check(s["hdr_pid_mismatch"] == 0, f"pid {pid}: record pid == owner_pid")
        check(w["t_start_ns"] <= s["first"] and s["last"] <= w["t_loop1_ns"] + SLACK_NS,
              f"pid {pid}: event times inside the program's CLOCK_MONOTONIC window "
              f"(first {(s['first'] - w['t_loop0_ns']) / 1e6:+.3f} ms, last {(s['last'] - w['t_loop1_ns']) / 1e6:+.3f} ms "
              f"from loop start/end)")
    stray = sorted(p for p in stats if p not in pids)
    check(not stray, f"no events attributed to other pids {stray}")
    return ok


def overhead(specs):
    def loops(path):
        return [json.loads(l)["loop_ms"] for l in open(path) if l.startswith("{")]

    base = None
    for spec in specs:
        label, path = spec.split("=", 1)
        runs = loops(path)
        med = statistics.median(runs)
        base = med if base is None else base
        print(f"{label:>24} loop_ms: {' '.join(f'{x:.1f}' for x in runs)}  median {med:.1f}  "
              f"({100.0 * (med - base) / base:+.1f}% vs {specs[0].split('=', 1)[0]})")
    return True


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "expect":
        return 0 if expect(sys.argv[2], sys.argv[3:]) else 1
    if len(sys.argv) >= 4 and sys.argv[1] == "overhead":
        return 0 if overhead(sys.argv[2:]) else 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
