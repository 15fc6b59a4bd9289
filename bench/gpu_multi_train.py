"""One rank of a data-parallel (DDP, NCCL) training loop for bench/gpu_multi.sh.

Each rank profiles its own CUDA kernels with torch.profiler (CUPTI: grtrace records without its
gpu source, so the two do not compete) and writes OUT/rankN.json: its device, how many kernels
ran there (NCCL's among them) and, for the late rank, when its delay began and ended
(time.monotonic_ns, CLOCK_MONOTONIC: the trace's clock). Rank --late-rank sleeps --late-ms
before its backward pass of step --late-step: every other rank's gradient all-reduce of that
step waits for it. A barrier after setup lines the ranks up, so start-up skew stays apart from
the delay.
"""
import argparse
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
args = parser.parse_args()

local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
late = {}
with profile(activities=[ProfilerActivity.CUDA]) as prof:
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
    torch.cuda.synchronize()
    dist.destroy_process_group()
    torch.cuda.synchronize()
trace = os.path.join(args.out, f"rank{rank}_profile.json")
prof.export_chrome_trace(trace)
with open(trace) as f:
    events = json.load(f)["traceEvents"]
os.unlink(trace)  # megabytes; its counts are kept below
kernels = [e for e in events if e.get("cat") == "kernel"]
with open(os.path.join(args.out, f"rank{rank}.json"), "w") as f:
    json.dump({"rank": rank, "device": local_rank, "pid": os.getpid(), "kernels": len(kernels),
               "nccl_kernels": sum(1 for e in kernels if e["name"].startswith("ncclDevKernel_")),
               "late": late}, f)
