#!/usr/bin/env python3
"""Checks JSON Lines records of the cuda source against the known answers of the fake-CUDA workloads.

usage: cuda_expect.py SCENARIO JSONL PID [ARGS...]
  known    JSONL PID PPID        tests/workloads/cuda_known.c (PPID - when unknown)
  threads  JSONL PID T K         tests/workloads/cuda_threads.c
  wait     JSONL PID K [hang|hang-launch]   tests/workloads/cuda_wait.c
  late     JSONL PID N           tests/workloads/cuda_late_dlopen.c
  returns  JSONL PID N PROBES    cuda_known recorded with --launch-returns N, launch probes PROBES
  threads_returns JSONL PID T K N   cuda_threads T K recorded with --launch-returns N
Prints one "ok - NAME" or "FAIL - NAME: why" line per check; exits 1 on any failure.
"""
import os
import json
import sys
from collections import Counter

MIB = 0x100000
DEV = 0x700000000000
HOST = 0x600000000000
A1, A2, A3, A4 = DEV, DEV + 1 * MIB, DEV + 3 * MIB, DEV + 7 * MIB
A5, A6, A7, A8 = DEV + 8 * MIB, DEV + 9 * MIB, DEV + 10 * MIB, DEV + 11 * MIB
H1, H2 = HOST, HOST + MIB
V1 = 0x10000000
STREAM1, EVENT1 = 0x5000, 0xE0E0
N = 1 << 20
HOSTBUF = "host"  # the workload's static buffer: any address, the same one everywhere

CUDA_TYPES = {"launch", "graph_launch", "alloc", "free", "memcpy", "memset", "sync",
              "module_load", "func_name"}

failures = 0


def check(name, ok, why=""):
    global failures
    if ok:
        print(f"ok - {name}")
    else:
        failures += 1
        print(f"FAIL - {name}: {why}")


def load(path, pid):
    with open(path) as f:
        records = [json.loads(line) for line in f if line.strip().startswith("{")]
    mine = [r for r in records if r.get("pid") == pid]
    mine.sort(key=lambda r: (r["ts_ns"], r.get("seq", 0)))
    return records, mine


def of_type(records, kind):
    return [r for r in records if r["type"] == kind]


def project(records, fields, host_addr=None):
    """Rows of the named fields; the host buffer's address is replaced by HOSTBUF."""
    rows = []
    for r in records:
        row = []
        for f in fields:
            v = r.get(f)
            if host_addr is not None and f in ("dst", "src") and v == host_addr:
                v = HOSTBUF
            row.append(v)
        rows.append(tuple(row))
    return rows


def compare_rows(name, got, want):
    if got == want:
        check(name, True)
        return
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            check(name, False, f"row {i}: got {g}, want {w}")
            return
    check(name, False, f"{len(got)} rows, want {len(want)}")


def check_common(mine, comm, ppid, pid_is_tid=True):
    calls = [r for r in mine if r["type"] in CUDA_TYPES]
    check("every call has the workload's comm", all(r["comm"] == comm for r in calls),
          Counter(r["comm"] for r in calls))
    if ppid is not None:
        check("every call has the workload's ppid", all(r["ppid"] == ppid for r in calls),
              Counter(r["ppid"] for r in calls))
    if pid_is_tid:
        check("single-threaded: tid == pid", all(r["tid"] == r["pid"] for r in calls))
    returned = [r for r in calls if r["api_ns"] is not None]
    check("every call returned, with a positive duration",
          len(returned) == len(calls) and all(r["api_ns"] > 0 for r in returned),
          f"{len(calls) - len(returned)} without return")


def check_stacks(records, mine, exe_suffix):
    launches = of_type(mine, "launch")
    if os.environ.get("EXPECT_LAUNCH_STACKS", "1") == "0":
        # launch stacks are opt-in (--launch-stacks); allocations always carry theirs
        allocs = [a for a in of_type(mine, "alloc") if a["ret"] == 0]
        check("without --launch-stacks, no launch carries a stack",
              all(r["stack_id"] == -1 for r in launches))
        check("... while every allocation does", allocs and all(a["stack_id"] >= 0 for a in allocs))
        return
    stacks = {r["stack_id"]: r for r in of_type(records, "stack")}
    maps = of_type(mine, "mapping")
    ids = {r["stack_id"] for r in launches if r["stack_id"] >= 0}
    # the kernel's stack walk can fail (its per-CPU buffer busy): such a launch says -2, and
    # that stays rare; -1 (none asked for) never appears with --launch-stacks
    missing = [r["stack_id"] for r in launches if r["stack_id"] < 0]
    check("launches carry user stack ids", launches and len(missing) <= len(launches) // 20,
          f"{len(missing)} of {len(launches)} without")
    check("... and one without says the walk failed (-2)", all(i == -2 for i in missing), missing)
    check("a stack record for every launch stack id", ids <= set(stacks), ids - set(stacks))
    exe_maps = [m for m in maps if m["path"] and m["path"].endswith(exe_suffix)]
    check("executable mappings of the workload recorded", len(exe_maps) > 0,
          [m["path"] for m in maps])

    def in_exe(ip):
        return any(m["start"] <= ip < m["end"] for m in exe_maps)

    bad = [i for i in ids if i in stacks and not any(in_exe(ip) for ip in stacks[i]["ips"])]
    check("every launch stack has a frame in the workload's code", not bad, bad)


def known(path, pid, ppid):
    records, mine = load(path, pid)
    check("records of the workload present", len(mine) > 0, f"none for pid {pid}")
    counts = Counter(r["type"] for r in mine if r["type"] in CUDA_TYPES)
    want = {"launch": 27, "graph_launch": 2, "alloc": 12, "free": 5, "memcpy": 14,
            "memset": 5, "sync": 8, "module_load": 7, "func_name": 7}
    check("exact record counts per type", counts == Counter(want), dict(counts))
    check_common(mine, "cuda_known", ppid)

    memcpys = of_type(mine, "memcpy")
    host_addr = memcpys[0]["src"] if memcpys else None

    fields = ("api", "kernel", "function", "grid", "block", "shared_mem", "stream", "args", "ret")
    compare_rows("launches: api, kernel name, handle, grid, block, shmem, stream, args, ret",
                 [tuple(map(lambda v: v, row)) for row in project(of_type(mine, "launch"), fields)],
                 known_launches())
    per_kernel = Counter(r["kernel"] for r in of_type(mine, "launch"))
    check("launches per kernel", per_kernel == Counter({"vecAdd": 13, "saxpy": 3, "reduce": 6,
                                                       "scale": 4, "func@unknown": 1}), dict(per_kernel))

    compare_rows("graph launches", project(of_type(mine, "graph_launch"), ("graph_exec", "stream")),
                 [(0x9A000, STREAM1)] * 2)
    check_known_calls(records, mine, memcpys, host_addr)


def known_launches():
    """cuda_known's kernel launches in order: api, kernel, handle, grid, block, shmem, stream, args, ret."""
    vec = [A1, A2, A3, N]
    return (
        [("cuLaunchKernel", "vecAdd", 0xF0000000, [4, 1, 1], [256, 1, 1], 0, 0, vec, 0)] * 10
        + [("cuLaunchKernel", "saxpy", 0xF0000100, [1, 1, 1], [32, 1, 1], 0, 0, [0x41424344], 0)]
        + [("cuLaunchKernel", "reduce", 0xD0000200, [8, 2, 1], [128, 1, 1], 1024, STREAM1, [A1, N], 0)] * 5
        + [("cuLaunchKernel", "scale", 0xE0000300, [1, 1, 1], [32, 1, 1], 0, STREAM1, [], 0)] * 4
        + [("cuLaunchKernelEx", "vecAdd", 0xF0000000, [16, 1, 1], [64, 2, 1], 2048, STREAM1, vec, 0)] * 3
        + [("cuLaunchCooperativeKernel", "reduce", 0xD0000200, [2, 1, 1], [64, 1, 1], 512, STREAM1, [A1, N], 0)]
        + [("cuLaunchKernel_ptsz", "saxpy", 0xF0000100, [3, 3, 1], [32, 4, 1], 0, STREAM1, [], 0)] * 2
        + [("cuLaunchKernel", "func@unknown", 0, [1, 1, 1], [1, 1, 1], 0, 0, [], 400)])


def check_known_calls(records, mine, memcpys, host_addr):
    fields = ("api", "kind", "bytes", "addr", "stream", "ret")
    compare_rows("allocations: api, kind, bytes, address, stream, ret",
                 project(of_type(mine, "alloc"), fields), [
                     ("cuMemAlloc_v2", "device", 1 << 20, A1, 0, 0),
                     ("cuMemAlloc_v2", "device", 2 << 20, A2, 0, 0),
                     ("cuMemAlloc_v2", "device", 4 << 20, A3, 0, 0),
                     ("cuMemAlloc_v2", "device", 3000, A4, 0, 0),
                     ("cuMemAllocAsync", "async", 8192, A5, STREAM1, 0),
                     ("cuMemAllocManaged", "managed", 65536, A6, 0, 0),
                     ("cuMemAllocPitch_v2", "pitch", 10240, A7, 0, 0),
                     ("cuMemAllocFromPoolAsync", "pool_async", 16384, A8, STREAM1, 0),
                     ("cuMemAllocHost_v2", "host", 4096, H1, 0, 0),
                     ("cuMemHostAlloc", "host_alloc", 12288, H2, 0, 0),
                     ("cuMemAlloc", "device", 5000, V1, 0, 0),
                     ("cuMemAlloc_v2", "device", 0, 0, 0, 1)])
    compare_rows("frees: api, kind, address, stream", project(of_type(mine, "free"),
                                                              ("api", "kind", "addr", "stream")), [
        ("cuMemFree_v2", "device", A1, 0), ("cuMemFree_v2", "device", A3, 0),
        ("cuMemFreeAsync", "async", A5, STREAM1), ("cuMemFreeHost", "host", H1, 0),
        ("cuMemFree", "device", V1, 0)])
    live = {r["addr"]: r["bytes"] for r in of_type(mine, "alloc") if r["ret"] == 0}
    for r in of_type(mine, "free"):
        live.pop(r["addr"], None)
    check("leaks: 6 allocations, 2204600 bytes", (len(live), sum(live.values())) == (6, 2204600),
          (len(live), sum(live.values())))

    fields = ("api", "kind", "bytes", "dst", "src", "async", "dims", "stream")
    compare_rows("copies: api, direction, bytes, dst, src, async, dims, stream",
                 project(memcpys, fields, host_addr), [
                     ("cuMemcpyHtoD_v2", "HtoD", 1 << 20, A1, HOSTBUF, 0, 1, 0),
                     ("cuMemcpyDtoH_v2", "DtoH", 4096, HOSTBUF, A2, 0, 1, 0),
                     ("cuMemcpyDtoD_v2", "DtoD", 2048, A3, A2, 0, 1, 0),
                     ("cuMemcpyHtoDAsync_v2", "HtoD", 512, A1, HOSTBUF, 1, 1, STREAM1),
                     ("cuMemcpyDtoHAsync_v2", "DtoH", 256, HOSTBUF, A1, 1, 1, STREAM1),
                     ("cuMemcpyDtoDAsync_v2", "DtoD", 128, A2, A1, 1, 1, STREAM1),
                     ("cuMemcpy", "Default", 1000, A2, A1, 0, 1, 0),
                     ("cuMemcpyAsync", "Default", 2000, A2, A1, 1, 1, STREAM1),
                     ("cuMemcpyPeer", "Peer", 4096, A2, A1, 0, 1, 0),
                     ("cuMemcpyPeerAsync", "Peer", 8192, A2, A1, 1, 1, STREAM1),
                     ("cuMemcpy2D_v2", "HtoD", 1024, A2 + 512, HOSTBUF, 0, 2, 0),
                     ("cuMemcpy3D_v2", "DtoH", 512, HOSTBUF, A3, 0, 3, 0),
                     ("cuMemcpy2DAsync_v2", "DtoD", 300, A2, A1, 1, 2, STREAM1),
                     ("cuMemcpyHtoD", "HtoD", 777, V1, HOSTBUF, 0, 1, 0)])
    bytes_by_kind = Counter()
    for r in memcpys:
        bytes_by_kind[r["kind"]] += r["bytes"]
    check("copy bytes per direction", bytes_by_kind == Counter(
        {"HtoD": 1050889, "DtoH": 4864, "DtoD": 2476, "Default": 3000, "Peer": 12288}),
        dict(bytes_by_kind))
    check("bandwidth only for synchronous copies",
          all(("gbytes_per_s" in r) == (r["async"] == 0) for r in memcpys))

    fields = ("api", "bytes", "dst", "value", "elem_size", "async", "stream")
    compare_rows("memsets: api, bytes, dst, value, element size, async, stream",
                 project(of_type(mine, "memset"), fields), [
                     ("cuMemsetD8_v2", 1000, A1, 0xAB, 1, 0, 0),
                     ("cuMemsetD16_v2", 1000, A2, 0x1234, 2, 0, 0),
                     ("cuMemsetD32_v2", 1024, A3, 0xDEADBEEF, 4, 0, 0),
                     ("cuMemsetD32Async", 256, A2, 7, 4, 1, STREAM1),
                     ("cuMemsetD8Async", 10, A1, 0x5A, 1, 1, STREAM1)])
    compare_rows("syncs: api, kind, stream, event",
                 project(of_type(mine, "sync"), ("api", "kind", "stream", "event")), [
                     ("cuCtxSynchronize", "ctx", 0, 0),
                     ("cuStreamSynchronize", "stream", STREAM1, 0),
                     ("cuEventRecord", "event_record", STREAM1, EVENT1),
                     ("cuEventSynchronize", "event", 0, EVENT1),
                     ("cuStreamWaitEvent", "stream_wait_event", STREAM1, EVENT1),
                     ("cuEventQuery", "event_query", 0, EVENT1),
                     ("cuStreamQuery", "stream_query", STREAM1, 0),
                     ("cuStreamSynchronize", "stream", STREAM1, 0)])
    modules = of_type(mine, "module_load")
    compare_rows("modules: api, kind, handle, path",
                 project(modules, ("api", "kind", "module", "path")), [
                     ("cuModuleLoad", "module_load_file", 0x4D000, "/opt/fake/kernels.cubin"),
                     ("cuLibraryLoadFromFile", "library_load_file", 0x4E000, "/opt/fake/reduce.cubin"),
                     ("cuLibraryLoadData", "library_load_data", 0x4F000, None),
                     ("cuModuleLoadData", "module_load_data", 0x50000, None),
                     ("cuModuleLoadFatBinary", "module_load_fatbin", 0x51000, None),
                     ("cuModuleUnload", "module_unload", 0x4D000, None),
                     ("cuLibraryUnload", "library_unload", 0x4E000, None)])
    check("image pointers of in-memory loads",
          [bool(m["image"]) for m in modules] == [False, False, True, True, True, False, False])
    compare_rows("names: api, handle, module, name, ret",
                 project(of_type(mine, "func_name"), ("api", "handle", "module", "name", "ret")), [
                     ("cuModuleGetFunction", 0xF0000000, 0x4D000, "vecAdd", 0),
                     ("cuModuleGetFunction", 0xF0000100, 0x4D000, "saxpy", 0),
                     ("cuLibraryGetKernel", 0xE0000200, 0x4E000, "reduce", 0),
                     ("cuKernelGetFunction", 0xD0000200, 0xE0000200, "reduce", 0),
                     ("cuLibraryGetKernel", 0xE0000300, 0x4F000, "scale", 0),
                     ("cuFuncGetName", 0xF0000100, 0, "saxpy", 0),
                     ("cuModuleGetFunction", 0, 0x4D000, None, 1)])
    check_stacks(records, mine, "/cuda_known")


def sampled_indices(n, every):
    """--launch-returns EVERY on one thread: the launches (0-based) whose return is recorded."""
    return [i for i in range(n) if every and i % every == 0]


def returns(path, pid, every, probes):
    """cuda_known under --launch-returns EVERY: every launch present, the returns of 1 in EVERY."""
    records, mine = load(path, pid)
    configs = of_type(records, "cuda_config")
    compare_rows("one settings record: launch returns, launch probes",
                 project(configs, ("launch_returns", "launch_probes")), [(every, probes)])
    launches = [r for r in mine if r["type"] in ("launch", "graph_launch")]
    check("all 29 launches recorded", len(launches) == 29, len(launches))
    entry = ("api", "kernel", "function", "grid", "block", "shared_mem", "stream", "args")
    compare_rows("launches keep their entry data: api, kernel, handle, grid, block, shmem, stream, args",
                 project(of_type(mine, "launch"), entry), [row[:-1] for row in known_launches()])
    compare_rows("graph launches keep theirs",
                 project(of_type(mine, "graph_launch"), ("graph_exec", "stream")),
                 [(0x9A000, STREAM1)] * 2)
    want = sampled_indices(len(launches), every)
    got = [i for i, r in enumerate(launches) if r["api_ns"] is not None]
    shown = want if len(want) <= 10 else "all"
    check(f"returns recorded for launches {shown} (0-based)", got == want, got)
    rets = [0] * 26 + [400, 0, 0]  # the 27th launch passes a NULL function
    check("sampled launches: a positive API time and their own return code" +
          (" (the NULL launch's 400 included)" if 26 in want else ""),
          all(launches[i]["api_ns"] > 0 and launches[i]["ret"] == rets[i] and "return" not in launches[i]
              for i in want if i < len(launches)))
    unsampled = [r for i, r in enumerate(launches) if i not in want]
    check(f"{29 - len(want)} launches flagged: ret and api_ns null, return not-sampled",
          len(unsampled) == 29 - len(want) and
          all(r["ret"] is None and r["api_ns"] is None and r.get("return") == "not-sampled"
              for r in unsampled), unsampled[:1])
    others = [r for r in mine if r["type"] in CUDA_TYPES - {"launch", "graph_launch"}]
    check("every other call keeps its return", len(others) == 58 and
          all(r["api_ns"] is not None and "return" not in r for r in others), len(others))


def threads_returns(path, pid, nthreads, per_thread, every):
    """cuda_threads under --launch-returns EVERY: the count is per thread."""
    records, mine = load(path, pid)
    launches = of_type(mine, "launch")
    check(f"{nthreads * per_thread} launches in total", len(launches) == nthreads * per_thread,
          len(launches))
    by_tid = {}
    for r in launches:
        by_tid.setdefault(r["tid"], []).append(r)
    want = sampled_indices(per_thread, every)
    bad = {tid: [i for i, r in enumerate(rs) if r["api_ns"] is not None][:5]
           for tid, rs in by_tid.items()
           if [i for i, r in enumerate(rs) if r["api_ns"] is not None] != want}
    check(f"each of {nthreads} threads: returns of its launches 1, {every + 1}, {2 * every + 1}... "
          f"({len(want)} each)", len(by_tid) == nthreads and not bad, bad)
    check(f"{nthreads * len(want)} returns in total",
          sum(r["api_ns"] is not None for r in launches) == nthreads * len(want))
    drops = [r for r in records if r["type"] == "drop"]
    check("no events lost", not drops, drops)


def threads(path, pid, nthreads, per_thread):
    records, mine = load(path, pid)
    launches = of_type(mine, "launch")
    check(f"{nthreads * per_thread} launches in total", len(launches) == nthreads * per_thread,
          len(launches))
    per_tid = Counter(r["tid"] for r in launches)
    check(f"{nthreads} launching threads, none of them the main thread",
          len(per_tid) == nthreads and pid not in per_tid, dict(per_tid))
    check(f"{per_thread} launches per thread", set(per_tid.values()) == {per_thread}, dict(per_tid))
    check("every launch named worker_kernel", all(r["kernel"] == "worker_kernel" for r in launches))
    grids = Counter(r["grid"][0] for r in launches)
    check("grid widths 1..T, K each", grids == Counter({t + 1: per_thread for t in range(nthreads)}),
          dict(grids))
    by_tid_grid = {(r["tid"], r["grid"][0]) for r in launches}
    check("each thread used one grid width", len(by_tid_grid) == nthreads, len(by_tid_grid))
    counts = Counter(r["type"] for r in mine if r["type"] in CUDA_TYPES)
    check("one alloc, free and sync per thread",
          (counts["alloc"], counts["free"], counts["sync"]) == (nthreads,) * 3, dict(counts))
    drops = [r for r in records if r["type"] == "drop"]
    check("no events lost", not drops, drops)
    check_common(mine, "cuda_threads", None, pid_is_tid=False)


def wait(path, pid, launches, hang):
    records, mine = load(path, pid)
    got = project(of_type(mine, "launch"), ("kernel", "function", "grid", "stream", "api_ns", "ret"))
    want = ([("func@0xf0000000", 0xF0000000, [1, 1, 1], 0, "t", 0)] * launches +
            [("waited", 0xF0000000, [2, 1, 1], 0, "t", 0)])
    if hang == "hang-launch":
        want.append(("waited", 0xF0000000, [3, 1, 1], 0xDEAD0, None, 0))
    got = [row[:4] + ("t" if row[4] is not None else None,) + row[5:] for row in got]
    compare_rows("launches before and after the name was learned" +
                 (", the last one cut off by the stop" if hang == "hang-launch" else ""), got, want)
    check("no launch flagged as not sampled", all("return" not in r for r in of_type(mine, "launch")))
    compare_rows("the name came from cuFuncGetName",
                 project(of_type(mine, "func_name"), ("api", "handle", "name")),
                 [("cuFuncGetName", 0xF0000000, "waited")])
    syncs = of_type(mine, "sync")
    if hang == "hang":
        compare_rows("the call that never returned is recorded, flagged",
                     project(syncs, ("api", "stream", "api_ns", "ret")),
                     [("cuStreamSynchronize", 0xDEAD0, None, 0)])
    else:
        check("no sync calls", not syncs, syncs)


def late(path, pid, launches):
    records, mine = load(path, pid)
    got = project(of_type(mine, "launch"), ("kernel", "grid", "block"))
    compare_rows(f"all {launches} launches after the late dlopen", got,
                 [("late_kernel", [2, 2, 1], [32, 1, 1])] * launches)
    compare_rows("its allocation and free",
                 project([r for r in mine if r["type"] in ("alloc", "free")], ("type", "addr")),
                 [("alloc", DEV), ("free", DEV)])
    check("its alloc size", [r["bytes"] for r in of_type(mine, "alloc")] == [123456])
    compare_rows("its module load", project(of_type(mine, "module_load"), ("path",)),
                 [("/opt/fake/late.cubin",)])


def main(argv):
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    scenario, path, pid = argv[1], argv[2], int(argv[3])
    if scenario == "known":
        known(path, pid, None if argv[4] == "-" else int(argv[4]))
    elif scenario == "threads":
        threads(path, pid, int(argv[4]), int(argv[5]))
    elif scenario == "wait":
        wait(path, pid, int(argv[4]), argv[5] if len(argv) > 5 else None)
    elif scenario == "late":
        late(path, pid, int(argv[4]))
    elif scenario == "returns":
        returns(path, pid, int(argv[4]), argv[5])
    elif scenario == "threads_returns":
        threads_returns(path, pid, int(argv[4]), int(argv[5]), int(argv[6]))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
