"""Checks of bench/gpu_multi.sh over grtrace's reports and the ranks' own counts.

usage: gpu_multi_check.py WORK LATE_RANK LATE_MS NVLINK_LINKS
Reads WORK/nccl.json (report --nccl --top 0), WORK/devices.json (report --devices),
WORK/nvlink.jsonl (parse --filter type=nvlink_sample), WORK/unsupported.jsonl (parse --filter
type=unsupported_probe), WORK/status.jsonl (parse --filter type=source_status),
WORK/jobs.json (report --jobs --format json; its checks say "info - no jobs.json" without it),
WORK/report.txt and WORK/rank*.json (bench/gpu_multi_train.py), WORK/topo.txt (nvidia-smi topo -m),
WORK/links.jsonl (parse --filter type=gpu_link), WORK/copies.json (report --copies). NVLINK_LINKS: the NVLink links
nvidia-smi reports (-1: unknown). Prints one "ok - " or "FAIL - " line per check (and "info - "
lines); exits 1 when one fails.
"""
import glob
import json
import re
import sys

work, late_rank, late_ms, smi_links = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
failed = 0


def check(name, ok, detail=""):
    global failed
    print(("ok - " if ok else "FAIL - ") + name + (f" ({detail})" if detail else ""))
    failed |= not ok


def info(text):
    print("info - " + text)


def load(path, default):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print(f"FAIL - {path} unreadable: {e}")
        global failed
        failed = 1
        return default


def lines(path):
    try:
        return [json.loads(line) for line in open(path) if line.strip()]
    except (OSError, ValueError):
        return []


def check_gpu_links():
    """The trace's gpu_link records (WORK/links.jsonl: parse --filter type=gpu_link --format json)
    against nvidia-smi topo -m (WORK/topo.txt): NV# between two GPUs means P2P over NVLink, PIX,
    PXB, PHB, NODE, SYS a PCIe path (then the record's topology is that name too, and the link
    pcie, or none where the driver refuses P2P on that path: topo -m does not show P2P support).
    Every peer pair of report --copies (WORK/copies.json) must have the link topo.txt gives its two
    GPUs, matched by PCI bus id through the gpu_link records (CUDA ordinals and NVML indices can
    differ)."""
    try:
        # nvidia-smi underlines the header on a terminal-like output: drop its escape sequences
        topo_lines = re.sub(r"\x1b\[[0-9;]*m", "", open(f"{work}/topo.txt").read()).splitlines()
    except OSError:
        topo_lines = []
    # the header ("GPU0 GPU1 ... CPU Affinity") comes before the rows, which also start with GPU0
    header = next((l.split() for l in topo_lines if l.split()[:1] == ["GPU0"]), None)
    topo = {}
    if header:
        ngpu = sum(1 for t in header if t.startswith("GPU") and t[3:].isdigit())
        for l in topo_lines:
            t = l.split()
            if t and t[0].startswith("GPU") and t[0][3:].isdigit() and len(t) > ngpu:
                for j, v in enumerate(t[1:1 + ngpu]):
                    topo[(int(t[0][3:]), j)] = v
    if not topo:
        info("gpu links: no nvidia-smi topo -m matrix in topo.txt: links not compared")
        return

    def expected(v):
        return ("nvlink",) if v.startswith("NV") else \
            ("pcie", "none") if v in ("PIX", "PXB", "PHB", "NODE", "SYS") else None

    def bus(text):  # "00000000:3B:00.0" and "0000:3b:00.0" name one GPU
        try:
            d, b, rest = (text or "").split(":")
            dev, fn = rest.split(".")
            return (int(d, 16), int(b, 16), int(dev, 16), int(fn, 16))
        except ValueError:
            return None

    records = lines(f"{work}/links.jsonl")
    pairs = {(a, b) for (a, b), v in topo.items() if a != b and expected(v)}
    check("a gpu_link record per ordered GPU pair of topo -m", pairs <= {(r["device"], r["peer_device"])
                                                                       for r in records},
          f"{len(records)} records, {len(pairs)} pairs in topo.txt")
    nvml_of_pci = {}
    for r in records:
        nvml_of_pci[bus(r["pci"])] = r["device"]
        v = topo.get((r["device"], r["peer_device"]), "")
        want = expected(v)
        if want is None:
            continue
        got = ("nvlink" if r["nvlink_p2p"] == "ok" else
               "pcie" if r["nvlink_p2p"] and "ok" in (r["pcie_read_p2p"], r["pcie_write_p2p"]) else
               "none" if r["nvlink_p2p"] and r["pcie_read_p2p"] else "?")
        check(f"gpu_link GPU{r['device']} -> GPU{r['peer_device']}: {got}, topo -m {v}", got in want,
              f"nvlink_p2p {r['nvlink_p2p']}, pcie {r['pcie_read_p2p']}/{r['pcie_write_p2p']}, "
              f"topology {r['topology']}, nvlinks {r['nvlinks']}, nvswitch_links {r['nvswitch_links']}")
        if want != ("nvlink",):
            check(f"gpu_link GPU{r['device']} -> GPU{r['peer_device']}: topology {r['topology']} = {v}",
                  r["topology"] == v)

    peers = load(f"{work}/copies.json", {}).get("copies", {}).get("peers", [])
    devices = load(f"{work}/devices.json", {}).get("devices", {})
    pci_of = {d["device"]: d.get("pci_bus_id") for d in devices.get("devices", [])} \
        if isinstance(devices, dict) else {}
    if not peers:
        info("gpu links: no peer copies in the trace (DDP moves data inside NCCL kernels)")
    for p in peers:
        a = nvml_of_pci.get(bus(pci_of.get(p["src_device"])))
        b = nvml_of_pci.get(bus(pci_of.get(p["dst_device"])))
        v = topo.get((a, b), "") if a is not None and b is not None else ""
        check(f"peer copies {p['src_device']} -> {p['dst_device']}: link {p['link']} = topo -m {v or '?'}",
              expected(v) is not None and p["link"] in expected(v),
              f"NVML GPUs {a}, {b}; {p['calls']} calls")


check_gpu_links()


ranks = [load(p, {}) for p in sorted(glob.glob(f"{work}/rank*.json"))]
ranks = [r for r in ranks if "rank" in r]
check("every rank wrote its profiler counts", len(ranks) >= 2, f"{len(ranks)} ranks")

nccl_probed = [s["message"] for s in lines(f"{work}/status.jsonl")
               if s.get("source") == "nccl" and "entry points probed" in s.get("message", "")]
check("nccl source probed libnccl", any(not m.split(": ")[-1].startswith("0 of") for m in nccl_probed),
      "; ".join(nccl_probed) or "no libnccl status")

nccl = load(f"{work}/nccl.json", {}).get("nccl", {})
if not isinstance(nccl, dict) or "ranks" not in nccl:
    check("report --nccl has ranks", False, json.dumps(nccl)[:300])
    nccl = {"ranks": [], "waits": [], "unknown_comm": -1}
check("collectives on known communicators", nccl.get("unknown_comm") == 0,
      f"{nccl.get('unknown_comm')} on communicators whose creation was not seen")
# a process has one row per communicator it is a rank of (the default one, the split group, the
# point-to-point one torch may make): its own rank in the world's, its device in every one
rows_of = {}
for x in nccl["ranks"]:
    rows_of.setdefault(x["pid"], []).append(x)
for r in ranks:
    rows = rows_of.get(r["pid"], [])
    world_rows = [x for x in rows if x["nranks"] == r.get("world", len(ranks))]
    check(f"rank {r['rank']}: in report --nccl as rank {r['rank']} on device {r['device']}",
          any(x["rank"] == r["rank"] for x in world_rows) and all(x["device"] == r["device"] for x in rows),
          f"{len(rows)} communicator rows: " + ", ".join(f"rank {x['rank']}/{x['nranks']} device {x['device']}"
                                                      for x in rows) if rows else
          f"pid {r['pid']} not among the ranks {sorted(rows_of)}")
    kernels = sum(x["kernels"] for x in rows)
    if r["nccl_kernels"] is None:
        info(f"rank {r['rank']}: {kernels} NCCL kernels tied to collectives (no profiler to compare)")
    else:
        check(f"rank {r['rank']}: NCCL kernels tied to its collectives = its profiler's ncclDevKernel_ count",
              kernels == r["nccl_kernels"], f"grtrace {kernels}, profiler {r['nccl_kernels']}")
    if "p2p_msgs" in r:
        sent = sum(x.get("p2p", 0) for x in rows)
        check(f"rank {r['rank']}: point-to-point calls = its {r['p2p_msgs']} sends or receives",
              sent == r["p2p_msgs"], f"grtrace {sent}")

# the group torch split from the default communicator: one split record per rank, the same
# communicator in report --nccl with every rank once and the group's all-reduces
splits = [c for c in lines(f"{work}/comms.jsonl") if c.get("parent") is not None]
world = ranks[0].get("world", len(ranks)) if ranks else 0
check(f"one ncclCommSplit per rank ({world})", len(splits) == world,
      f"{len(splits)} split records of {len(lines(f'{work}/comms.jsonl'))} nccl_comm records")
by_comm = {}
for x in nccl["ranks"]:
    by_comm.setdefault(x["comm_id"], []).append(x)
split_ops = ranks[0].get("split_ops", 0) if ranks else 0
full = [rows for rows in by_comm.values()
        if sorted(x["rank"] for x in rows) == list(range(world)) and len({x["pid"] for x in rows}) == world]
check(f"a second communicator of all {world} ranks, each rank once, with the group's {split_ops} all-reduces",
      len(full) >= 2 and any(all(x["collectives"] == split_ops for x in rows) for rows in full),
      "; ".join(f"{len(rows)} ranks, collectives {sorted(x['collectives'] for x in rows)}"
                for rows in by_comm.values()))

# the receive that waited for the late sender (rank 0 -> rank 1)
p2p_late = next((r["p2p_late"] for r in ranks if r["rank"] == 0 and r.get("p2p_late")), None)
if p2p_late:
    delay = (p2p_late["end_ns"] - p2p_late["start_ns"]) / 1e6
    hits = [w for w in nccl.get("waits", []) if w["op"] == "recv" and w["rank"] == 1 and
            w["waited_for"] == 0 and w["entered_ns"] <= p2p_late["end_ns"] <= w["entered_ns"] + w["ns"]]
    best = max(hits, key=lambda w: w["ns"]) if hits else None
    check("rank 1's receive across rank 0's send delay waited for rank 0, at least 80% of it",
          best is not None and best["ns"] >= 0.8 * delay * 1e6,
          f"recv #{best['index']} waited {best['ns'] / 1e6:.1f} ms of {delay:.1f} ms" if best else
          f"{len(hits)} receive waits across the delay")
elif ranks:
    check("rank 0 says when its send was late", False, "no p2p_late window in its rank file")

late = next((r["late"] for r in ranks if r["rank"] == late_rank and r.get("late")), None)
waits = nccl.get("waits", [])
if waits:
    w = waits[0]
    info(f"longest wait: rank {w['rank']}'s {w['op']} #{w['index']} waited {w['ns'] / 1e6:.1f} ms "
         f"for rank {w['waited_for']}")
if late:
    # the wait that spans the end of the late rank's delay: entered before, its last rank after
    hits = [w for w in waits if w["waited_for"] == late_rank and "entered_ns" in w and
            w["entered_ns"] <= late["end_ns"] <= w["entered_ns"] + w["ns"]]
    best = max(hits, key=lambda w: w["ns"]) if hits else None
    check(f"a collective waiting across rank {late_rank}'s delay is named, waiting for rank {late_rank}",
          best is not None, f"{len(waits)} waits in the report")
    if best:
        check("it is a gradient all-reduce", best["op"] == "all-reduce", best["op"])
        check(f"its wait is at least 80% of the {late_ms} ms delay", best["ns"] >= 0.8 * late_ms * 1e6,
              f"rank {best['rank']}'s {best['op']} #{best['index']} waited {best['ns'] / 1e6:.1f} ms")
else:
    check(f"rank {late_rank} says when it was late", False, "no late window in its rank file")
try:
    text = open(f"{work}/report.txt").read()
except OSError:
    text = ""
check(f"report text says who waited for rank {late_rank}",
      f"for rank {late_rank} (communicator" in text and "waited" in text)

devices = load(f"{work}/devices.json", {}).get("devices", {})
devices = {d["device"]: d for d in devices.get("devices", [])} if isinstance(devices, dict) else {}
for r in ranks:
    d = devices.get(r["device"], {})
    if r["kernels"] is None:
        info(f"rank {r['rank']}: {d.get('launches')} launches on device {r['device']} (no profiler to compare)")
        continue
    check(f"rank {r['rank']}: launches on device {r['device']} = its profiler's kernels",
          d.get("launches") == r["kernels"],
          f"grtrace {d.get('launches')}, profiler {r['kernels']} ({r['nccl_kernels']} NCCL)")

links = {}
for s in lines(f"{work}/nvlink.jsonl"):
    key = (s["device"], s["link"])
    links[key] = [a + b for a, b in zip(links.get(key, [0, 0]), [s["tx_bytes"], s["rx_bytes"]])]
no_nvlink = [u["reason"] for u in lines(f"{work}/unsupported.jsonl")
             if u.get("probe") == "nvml:nvlink per link"]
no_nvml = [u["reason"] for u in lines(f"{work}/unsupported.jsonl")
           if u.get("probe") == "nvml:pcie,nvlink throughput"]
if no_nvml:
    check("NVML sampled (pcie source)", False, no_nvml[0])
elif smi_links == 0 or (no_nvlink and smi_links < 0):
    # not a failure: these GPUs talk over PCIe; grtrace must say so, once, and sample nothing
    check(f"no NVLink here (nvidia-smi: {smi_links if smi_links >= 0 else 'unknown'} links): "
          "grtrace says so and writes no link samples", len(no_nvlink) == 1 and not links,
          no_nvlink[0] if no_nvlink else f"{len(links)} links sampled")
else:
    for (dev, link), (tx, rx) in sorted(links.items()):
        info(f"NVLink device {dev} link {link}: tx {tx} B, rx {rx} B")
    check("NVLink bytes reported per link", any(tx or rx for tx, rx in links.values()),
          f"{len(links)} links sampled, nvidia-smi {smi_links} links")


def check_jobs(ranks, late):
    """report --jobs (WORK/jobs.json): the NCCL kernels' jobs name their collective; a job of
    another rank tagged collective-wait waits for the late rank across its delay; per rank, the
    jobs with a collective equal its profiler's NCCL kernels."""
    try:
        with open(f"{work}/jobs.json") as f:
            jobs = json.load(f).get("jobs", {})
    except OSError:
        info("no jobs.json")
        return
    except ValueError as e:
        check("jobs.json parses", False, str(e))
        return
    rows = [j for j in jobs.get("jobs", []) if j.get("collective")]
    for r in ranks:
        mine = [j for j in rows if j["pid"] == r["pid"]]
        if r["nccl_kernels"] is None:
            info(f"rank {r['rank']}: {len(mine)} jobs named by a collective (no profiler to compare)")
            continue
        check(f"rank {r['rank']}: jobs named by a collective = its profiler's ncclDevKernel_ count",
              len(mine) == r["nccl_kernels"], f"grtrace {len(mine)}, profiler {r['nccl_kernels']}")
    if not late:
        check(f"rank {late_rank} says when it was late (jobs)", False, "no late window in its rank file")
        return
    late_pids = {r["pid"] for r in ranks if r["rank"] == late_rank}
    hits = []
    for j in rows:
        c, w = j["collective"], j["collective"].get("wait")
        if j["pid"] in late_pids or not w or "collective-wait" not in j.get("tags", []):
            continue
        begin = j.get("start_ns") if w["basis"] == "device" and j.get("start_ns") else c["entered_ns"]
        if w["waited_for"] == late_rank and c["entered_ns"] <= late["end_ns"] <= begin + w["ns"]:
            hits.append(j)
    best = max(hits, key=lambda j: j["collective"]["wait"]["ns"]) if hits else None
    check(f"report --jobs: another rank's job tagged collective-wait waits for rank {late_rank} "
          "across its delay", best is not None, f"{len(rows)} jobs with a collective")
    if best:
        w = best["collective"]["wait"]
        info(f"job {best['job']} {best['name']} waited {w['ns'] / 1e6:.1f} ms for rank "
             f"{w['waited_for']} (device {w['waited_for_device']}), basis {w['basis']}")
        check(f"its wait is at least 80% of the {late_ms} ms delay (jobs)", w["ns"] >= 0.8 * late_ms * 1e6,
              f"{w['ns'] / 1e6:.1f} ms")
    for d in jobs.get("devices", []):
        for p in d.get("collective_waits", []):
            info(f"device {d['device']} (rank {p['rank']}): {p['ns'] / 1e6:.1f} ms in collectives "
                 f"waiting for rank {p['waited_for']} (device {p['waited_for_device']}): "
                 f"{p['op']} #{p['index']}")


check_jobs(ranks, late)
sys.exit(1 if failed else 0)
