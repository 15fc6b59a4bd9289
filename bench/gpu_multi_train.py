"""One rank of a data-parallel (DDP, NCCL) training loop for bench/gpu_multi.sh.

Each rank profiles its own CUDA kernels with torch.profiler (CUPTI: grtrace records without its
gpu source, so the two do not compete) and writes OUT/rankN.json: its device, how many kernels
ran there (NCCL's among them) and, for the late rank, when its delay began and ended
(time.monotonic_ns, CLOCK_MONOTONIC: the trace's clock). Rank --late-rank sleeps --late-ms
before its backward pass of step --late-step: every other rank's gradient all-reduce of that
step waits for it. A barrier after setup lines the ranks up, so start-up skew stays apart from
the delay.

After the loop, two more phases give NCCL's other paths real traffic: a group made with
dist.new_group (with the device bound at init, torch makes it by ncclCommSplit of the default
communicator) runs --split-ops all-reduces; then rank 0 sends --p2p-msgs tensors to rank 1
(ncclSend/ncclRecv), sleeping --p2p-late-ms before send number --p2p-late-index, so rank 1's
receive of that number waits for it (its window is written as "p2p_late"). Last, rank 0 copies a
64 MiB tensor from its GPU to rank 1's --peer-copies times (Tensor.copy_ across devices: a
device-to-device copy through unified addresses, no kernel), so the trace has peer copies whose
link (NVLink or PCIe) the checks compare with nvidia-smi's topology.
"""
import argparse
import contextlib
import datetime
import json
import os
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.profiler import ProfilerActivity, profile

parser = argparse.ArgumentParser()
parser.add_argument("--out", required=True)
parser.add_argument("--steps", type=int, default=8)
parser.add_argument("--late-rank", type=int, default=1)
parser.add_argument("--late-step", type=int, default=4)
parser.add_argument("--late-ms", type=int, default=300)
parser.add_argument("--split-ops", type=int, default=4)
parser.add_argument("--p2p-msgs", type=int, default=4)
parser.add_argument("--p2p-late-index", type=int, default=3)
parser.add_argument("--p2p-late-ms", type=int, default=200)
parser.add_argument("--peer-copies", type=int, default=4)
parser.add_argument("--no-profile", action="store_true",
                    help="no torch.profiler (CUPTI stays free for grtrace's gpu source); counts null")
args = parser.parse_args()

local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
late = {}
p2p_late = {}
with (contextlib.nullcontext() if args.no_profile else profile(activities=[ProfilerActivity.CUDA])) as prof:
    dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank),
                            timeout=datetime.timedelta(seconds=90))
    rank = dist.get_rank()
    model = DistributedDataParallel(
        torch.nn.Sequential(torch.nn.Linear(4096, 4096), torch.nn.ReLU(),
                            torch.nn.Linear(4096, 4096)).cuda(),
        device_ids=[local_rank])
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(256, 4096, device="cuda")
    dist.barrier()
    torch.cuda.synchronize()
    for step in range(args.steps):
        loss = model(x).square().mean()
        if rank == args.late_rank and step == args.late_step:
            torch.cuda.synchronize()
            late["start_ns"] = time.monotonic_ns()
            time.sleep(args.late_ms / 1000)
            late["end_ns"] = time.monotonic_ns()
        loss.backward()
        opt.step()
        opt.zero_grad()
    torch.cuda.synchronize()
    dist.barrier()
    world = dist.get_world_size()
    group = dist.new_group(ranks=list(range(world)))
    y = torch.ones(1024, device="cuda")
    for _ in range(args.split_ops):
        dist.all_reduce(y, group=group)
    torch.cuda.synchronize()
    dist.barrier()
    if rank in (0, 1):
        buf = torch.full((1 << 20,), float(rank), device="cuda")  # 4 MiB a message
        for i in range(1, args.p2p_msgs + 1):
            if rank == 1:
                dist.recv(buf, src=0)
                continue
            if i == args.p2p_late_index:
                torch.cuda.synchronize()
                p2p_late["start_ns"] = time.monotonic_ns()
                time.sleep(args.p2p_late_ms / 1000)
                p2p_late["end_ns"] = time.monotonic_ns()
            dist.send(buf, dst=1)
        torch.cuda.synchronize()
    dist.barrier()
    peer = {}
    if rank == 0 and world > 1 and args.peer_copies:
        src = torch.empty(16 << 20, device="cuda:0")  # 64 MiB; empty: no fill kernel
        dst = torch.empty(16 << 20, device="cuda:1")
        for _ in range(args.peer_copies):
            dst.copy_(src)
        torch.cuda.synchronize(0)
        torch.cuda.synchronize(1)
        peer = {"src": 0, "dst": 1, "copies": args.peer_copies, "bytes": src.numel() * 4}
        del src, dst
    dist.barrier()
    torch.cuda.synchronize()
    dist.destroy_process_group()
    torch.cuda.synchronize()
kernels = None
if prof is not None:
    trace = os.path.join(args.out, f"rank{rank}_profile.json")
    prof.export_chrome_trace(trace)
    with open(trace) as f:
        events = json.load(f)["traceEvents"]
    os.unlink(trace)  # megabytes; its counts are kept below
    kernels = [e for e in events if e.get("cat") == "kernel"]
with open(os.path.join(args.out, f"rank{rank}.json"), "w") as f:
    json.dump({"rank": rank, "device": local_rank, "pid": os.getpid(),
               "kernels": None if kernels is None else len(kernels),
               "nccl_kernels": None if kernels is None else
               sum(1 for e in kernels if e["name"].startswith("ncclDevKernel_")),
               "late": late, "p2p_late": p2p_late, "world": world, "split_ops": args.split_ops,
               "p2p_msgs": args.p2p_msgs if rank in (0, 1) else 0, "peer_copies": peer}, f)
