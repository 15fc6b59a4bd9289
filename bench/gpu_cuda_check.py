#!/usr/bin/env python3
"""Checks a cuda-source trace (parse --format json) against what the program is known to do."""
import collections, json, sys

def load(path):
    return [json.loads(line) for line in open(path)]

def by_type(events, t):
    return [e for e in events if e["type"] == t]

failures = 0

def check(name, ok, detail=""):
    global failures
    print(("ok - " if ok else "FAIL - ") + name + (f" ({detail})" if detail else ""))
    failures += 0 if ok else 1

def vector_add(events, report):
    launches = by_type(events, "launch")
    names = collections.Counter(l["kernel"] for l in launches)
    va = [l for l in launches if l["kernel"] and "vector_add" in l["kernel"]]
    sc = [l for l in launches if l["kernel"] and "scale" in l["kernel"]]
    check("200 launches, all named", len(launches) == 200 and all(l["kernel"] for l in launches), dict(names))
    check("100 vector_add, 100 scale", len(va) == 100 and len(sc) == 100)
    check("grid (4096,1,1) block (256,1,1)", all(l["grid"] == [4096, 1, 1] and l["block"] == [256, 1, 1] for l in va + sc))
    check("every launch returned CUDA_SUCCESS", all(l["ret"] == 0 for l in launches))
    allocs = [a for a in by_type(events, "alloc") if a["ret"] == 0]
    sizes = sorted(a["bytes"] for a in allocs)
    check("allocations 3 x 4 MiB + 4096", sizes == [4096, 4194304, 4194304, 4194304], sizes)
    frees = [f for f in by_type(events, "free") if f["ret"] == 0 and f["addr"]]
    freed = {f["addr"] for f in frees}
    check("3 frees, of the 4 MiB buffers", len(frees) == 3 and freed == {a["addr"] for a in allocs if a["bytes"] == 4194304})
    copies = [c for c in by_type(events, "memcpy") if c["ret"] == 0]
    big = [c for c in copies if c["bytes"] == 4194304]
    kinds = collections.Counter(c["kind"] for c in big)
    check("3 copies of 4 MiB: 2 HtoD, 1 DtoH", len(big) == 3 and kinds["HtoD"] == 2 and kinds["DtoH"] == 1, dict(kinds))
    leaks = report.get("leaks", {})
    text = json.dumps(leaks)
    check("report: 4096 bytes leaked", '"bytes": 4096' in text or '"bytes":4096' in text, text[:300])

def torch(events, truth):
    launches = by_type(events, "launch")
    named = [l for l in launches if l["kernel"]]
    elementwise = [l for l in named if "elementwise" in l["kernel"]]
    check(f"launches recorded = kernels the profiler saw ({truth['kernels']})", len(launches) == truth["kernels"], len(launches))
    check("every launch has a resolved name", len(named) == len(launches), f"{len(named)}/{len(launches)}")
    check("elementwise kernels by name (fill + 10 mul + 10 add)", len(elementwise) >= 21, len(elementwise))
    copies = [c for c in by_type(events, "memcpy") if c["bytes"] == 4 << 20]
    check("the 4 MiB copy back to the host", len(copies) == 1 and copies[0]["kind"] in ("DtoH", "Default"), [c["kind"] for c in copies])
    allocs = by_type(events, "alloc")
    check("device allocations seen", sum(a["bytes"] for a in allocs if a["kind"] == "device") >= 4 << 20)
    print("kernel names:", sorted(collections.Counter(l["kernel"] for l in named).items())[:8])

mode, events = sys.argv[1], load(sys.argv[2])
other = json.load(open(sys.argv[3]))
{"vector_add": vector_add, "torch": torch}[mode](events, other)
sys.exit(1 if failures else 0)
