#!/usr/bin/env python3
"""Checks of bench/gpu_bpf.sh: what `grtrace report --bpf` and `parse` say of a GPU run, against
the samples' known answers and the reference interpreter's run of the same launches (gpubpf_sim).
Prints ok/FAIL lines; exits 1 when a check failed.

  gpu_bpf_check.py GRTRACE samples GPU.grt SIM.grt BLOCKS N LAUNCHES
  gpu_bpf_check.py GRTRACE bpftime NAME GPU.grt SIM.grt THREADS LAUNCHES
  gpu_bpf_check.py GRTRACE attach TRACE...       (prints the attach times, checks the targets)
  gpu_bpf_check.py GRTRACE variants THREADS LAUNCHES NAME:LONG.grt:SHORT.grt:SIM.grt...
      (a translator variant's long run of LAUNCHES launches and short run of 2, against the
      interpreter's run of 2; each SIM read once)
"""
import json
import re
import subprocess
import sys

failed = False


def check(name, cond, detail=""):
    global failed
    print(("ok - " if cond else "FAIL - ") + name + ("" if cond else f" ({detail})"))
    failed |= not cond


def report(g, trace):
    out = subprocess.run([g, "report", trace, "--bpf", "--format", "json", "--top", "0"],
                         capture_output=True, text=True, check=True).stdout
    r = json.loads(out).get("bpf") or {}
    r.setdefault("programs", [])
    r.setdefault("maps", [])
    return r, {m["name"]: m for m in r["maps"]}


def records(g, trace, kind):
    out = subprocess.run([g, "parse", trace, "--format", "json", "--filter", f"type={kind}"],
                         capture_output=True, text=True, check=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def vals(maps, name, key=None):
    return [e["value"]["value"] for e in maps[name]["entries"]
            if key is None or e["key"]["key"] == key]


def ran(g, trace):
    """Launches that ran programs, from the library's closing line."""
    for s in records(g, trace, "source_status"):
        m = re.search(r"GPU eBPF: (\d+) launches ran programs", s.get("message") or "")
        if m:
            return int(m.group(1))
    return 0


def samples(g, gpu, sim, blocks, n, launches):
    r, m = report(g, gpu)
    _, s = report(g, sim)
    threads = blocks * 256
    check("samples: every program loaded", [p["status"] for p in r["programs"]] == [0] * 6,
          r["programs"])
    check("samples: launches ran programs", ran(g, gpu) == launches, ran(g, gpu))
    check("exit_times: one exit per thread per launch",
          sorted(vals(m, "thread_exits", 1)) == [launches] * threads and
          len(vals(m, "thread_exits", 0)) == threads, len(vals(m, "thread_exits", 1)))
    check("block_hist: 256 threads per block", sorted(
        (e["key"]["key"], e["value"]["value"]) for e in m["threads_per_block"]["entries"]) ==
        [(b, 256 * launches) for b in range(blocks)])
    check("block_hist: histogram sums to the threads", sum(vals(m, "run_ns_log2")) ==
          threads * launches, sum(vals(m, "run_ns_log2")))
    check("launch_latency: every block's start", len(vals(m, "block_start_ns")) == blocks)
    ev = records(g, gpu, "bpf_event")
    lat = [e for e in ev if e["map"] == "launches"]
    check("launch_latency: one event per launch with n", [e["n"] for e in lat] == [n] * launches,
          [e.get("n") for e in lat])
    check("mem_counts: loads, stores, bytes", m["totals"]["entries"][0]["value"] ==
          {"loads": 2 * n * launches, "stores": n * launches, "bytes": 12 * n * launches,
           "generic": 0}, m["totals"]["entries"][0]["value"])
    pl = [e for e in ev if e["map"] == "placements"]
    check("sm_placement: blocks placed", sum(vals(m, "blocks_per_sm")) == blocks * launches)
    check("sm_placement: one event per block, SM as the map says",
          sorted(e["block"] for e in pl) == sorted(list(range(blocks)) * launches) and
          all(e["sm"] == e["smid"] for e in pl), len(pl))
    same = ["threads_per_block", "totals"]
    check("maps equal the interpreter's", all(
        sorted(json.dumps(e, sort_keys=True) for e in m[k]["entries"]) ==
        sorted(json.dumps(e, sort_keys=True) for e in s[k]["entries"]) for k in same) and
        sorted(vals(m, "thread_exits", 1)) == sorted(vals(s, "thread_exits", 1)) and
        m["placements"]["events"] == s["placements"]["events"] and
        m["launches"]["events"] == s["launches"]["events"])
    check("no events lost", all(mm.get("lost", 0) == 0 for mm in r["maps"]))


def bpftime(g, name, gpu, sim, threads, launches):
    r, m = report(g, gpu)
    _, s = report(g, sim)
    check(f"{name}: loaded unchanged", r["programs"] and
          all(p["status"] == 0 for p in r["programs"]), r["programs"])
    check(f"{name}: launches ran programs", ran(g, gpu) > 0)
    if name == "bpftime_threadhist":
        check(f"{name}: every thread counted", sorted(vals(m, "exits")) ==
              sorted(vals(s, "exits")) == [launches] * threads, len(vals(m, "exits")))
    elif name in ("bpftime_kernel_trace", "bpftime_kernelretsnoop"):
        ring = [mm for mm in r["maps"] if "events" in mm][0]
        sring = [mm for mm in report(g, sim)[0]["maps"] if "events" in mm][0]
        check(f"{name}: events as the interpreter's", ring["events"] == sring["events"] and
              ring["lost"] == 0, (ring["events"], sring["events"], ring["lost"]))
    elif name == "bpftime_mem_trace":
        # its `*val = *val + 1` races on a GPU (docs/gpu-bpf.md): counted, not equal
        check(f"{name}: accesses counted", sum(vals(m, "accesses")) > 0)
    elif name == "bpftime_cuda_counter":
        check(f"{name}: calls counted, printk lines", sum(vals(m, "calls")) > 0 and
              r["printk"]["lines"] > 0, (vals(m, "calls"), r["printk"]["lines"]))


def variant(g, name, gpu, s, threads, launches):
    """A bench program (counter, clock_only, ring, ring_const) in one translator variant: every
    thread's slot counted or written, every ring event delivered or counted lost, exactly; with
    s, the maps of the interpreter's run of the same launches, the maps and totals equal to its."""
    r, m = report(g, gpu)
    check(f"{name}: loaded", r["programs"] and all(p["status"] == 0 for p in r["programs"]),
          r["programs"])
    check(f"{name}: every launch ran the program", ran(g, gpu) == launches, ran(g, gpu))
    if "exits" in m and "events" not in m["exits"]:
        v = vals(m, "exits")
        check(f"{name}: every thread counted {launches} times", len(v) == threads and
              all(x == launches for x in v), (len(v), sorted(set(v))[:4]))
        if s:
            check(f"{name}: counts equal the interpreter's", sorted(v) == sorted(vals(s, "exits")))
    elif "last_exit" in m:
        v = vals(m, "last_exit")
        check(f"{name}: every thread wrote its clock", len(v) == threads and all(v), len(v))
        if s:
            check(f"{name}: the interpreter's threads too", len(vals(s, "last_exit")) == len(v))
    elif "exits" not in m:
        check(f"{name}: its map in the trace", False, sorted(m))
    else:
        ring = m["exits"]
        check(f"{name}: events + lost == one per thread per launch ({threads * launches})",
              ring["events"] + ring["lost"] == threads * launches and ring["events"] > 0,
              (ring["events"], ring["lost"]))
        print(f"{name}: {ring['events']} events, {ring['lost']} lost")
        if s:
            check(f"{name}: events + lost equal the interpreter's",
                  ring["events"] + ring["lost"] == s["exits"]["events"] + s["exits"]["lost"],
                  (s["exits"]["events"], s["exits"]["lost"]))


def attach(g, traces):
    rows = []
    for t in traces:
        vt = rw = jit = None
        hit = False
        for s in records(g, t, "source_status"):
            msg = s.get("message") or ""
            m = re.search(r"verified and translated in ([\d.]+) ms", msg)
            if m:
                vt = float(m.group(1))
            m = re.search(r"attach ([\d.]+) ms \(extract ([\d.]+), rewrite ([\d.]+), "
                          r"(JIT|cache hit) ([\d.]+)\)", msg)
            if m and "kernels instrumented" in msg and not msg.startswith("probes: module 0x0"):
                rw = float(m.group(2)) + float(m.group(3))
                jit = float(m.group(5))
                hit = m.group(4) == "cache hit"
        rows.append((t, vt, rw, jit, hit))
        print(f"attach {t}: verify+translate {vt} ms, extract+rewrite {rw} ms, "
              f"{'cache hit' if hit else 'JIT'} {jit} ms")
    first = [r for r in rows if r[1] is not None and r[2] is not None and not r[4]]
    cached = [r for r in rows if r[2] is not None and r[4]]
    check("attach: verify + translate + rewrite + JIT <= 50 ms",
          bool(first) and all(r[1] + r[2] + r[3] <= 50 for r in first),
          [(r[1], r[2], r[3]) for r in first])
    check("attach: cached (extract + rewrite + cached image) <= 1 ms",
          bool(cached) and all(r[2] + r[3] <= 1 for r in cached),
          [(r[2], r[3]) for r in cached])


if __name__ == "__main__":
    g, what = sys.argv[1], sys.argv[2]
    a = sys.argv[3:]
    if what == "samples":
        samples(g, a[0], a[1], int(a[2]), int(a[3]), int(a[4]))
    elif what == "bpftime":
        bpftime(g, a[0], a[1], a[2], int(a[3]), int(a[4]))
    elif what == "attach":
        attach(g, a)
    elif what == "variants":
        sims = {}
        for row in a[2:]:
            name, long_run, short_run, sim = row.split(":")
            if sim not in sims:
                sims[sim] = report(g, sim)[1]
            variant(g, name, long_run, None, int(a[0]), int(a[1]))
            variant(g, name + " (2 launches)", short_run, sims[sim], int(a[0]), 2)
    sys.exit(1 if failed else 0)
