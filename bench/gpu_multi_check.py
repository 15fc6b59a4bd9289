"""Checks of bench/gpu_multi.sh over grtrace's reports and the ranks' profiler counts.

usage: gpu_multi_check.py OUT LATE_RANK LATE_MS
Reads OUT/nccl.json (report --nccl), OUT/devices.json (report --devices), OUT/nvlink.jsonl
(parse --filter type=nvlink_sample), OUT/rank*_kernels.json; prints one line per check and
exits 1 when one fails.
"""
import glob
import json
import sys

out, late_rank, late_ms = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
failed = 0


def check(name, ok, detail=""):
    global failed
    print(("ok   " if ok else "FAIL ") + name + (f": {detail}" if detail else ""))
    failed |= not ok


nccl = json.load(open(f"{out}/nccl.json"))["nccl"]
waits = nccl["waits"]
check("collectives on known communicators", nccl["unknown_comm"] == 0,
      f"{nccl['unknown_comm']} on communicators whose creation was not seen")
if waits:
    w = waits[0]
    check("the longest wait is for the late rank", w["waited_for"] == late_rank, json.dumps(w))
    check("and lasts about the delay", w["ns"] >= 0.8 * late_ms * 1e6,
          f"{w['ns'] / 1e6:.1f} ms for a {late_ms} ms delay")
    check("the waiting collective is an all-reduce", w["op"] == "all-reduce", w["op"])
else:
    check("waits reported", False, "none")

devices = {d["device"]: d for d in json.load(open(f"{out}/devices.json"))["devices"]["devices"]}
for path in sorted(glob.glob(f"{out}/rank*_kernels.json")):
    r = json.load(open(path))
    d = devices.get(r["device"], {})
    check(f"rank {r['rank']}: launches on device {r['device']} = its profiler's kernels",
          d.get("launches") == r["kernels"],
          f"grtrace {d.get('launches')}, profiler {r['kernels']} ({r['nccl_kernels']} NCCL)")
ranks = {(x["rank"], x["device"]): x for x in nccl["ranks"]}
for path in sorted(glob.glob(f"{out}/rank*_kernels.json")):
    r = json.load(open(path))
    x = ranks.get((r["rank"], r["device"]))
    check(f"rank {r['rank']}: NCCL kernels matched to its collectives = profiler's NCCL kernels",
          x is not None and x["kernels"] == r["nccl_kernels"],
          f"grtrace {x and x['kernels']}, profiler {r['nccl_kernels']}")

links = {}
for line in open(f"{out}/nvlink.jsonl"):
    s = json.loads(line)
    key = (s["device"], s["link"])
    links[key] = [a + b for a, b in zip(links.get(key, [0, 0]), [s["tx_bytes"], s["rx_bytes"]])]
for (dev, link), (tx, rx) in sorted(links.items()):
    print(f"     NVLink device {dev} link {link}: tx {tx} B, rx {rx} B")
check("NVLink bytes per link reported", any(tx or rx for tx, rx in links.values()),
      f"{len(links)} links sampled")
sys.exit(failed)
