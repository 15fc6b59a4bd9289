#!/bin/bash
# On the GPU machine: the cuda source against ground truth.
#  1. samples/vector_add.cu (nvcc): exact launches per kernel with grid/block, allocations,
#     copies, frees and the one deliberate 4096-byte leak.
#  2. A PyTorch script: every kernel launch the profiler saw (untraced run) is in the trace,
#     each with a resolved name, PyTorch's elementwise kernels by name; its copy back is there.
# usage: bench/gpu_cuda_source.sh BUILD OUT
set -u
BUILD=${1:?usage: BUILD OUT}
OUT=${2:?usage: BUILD OUT}
G=$BUILD/grtrace
HERE=$(cd "$(dirname "$0")" && pwd)
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p "$OUT"
status=0

nvcc -O2 -arch=sm_90 -o "$OUT/vector_add" "$HERE/../samples/vector_add.cu" || exit 1
$G record -f -s cuda -o "$OUT/vector_add.grt" -- "$OUT/vector_add" 2>"$OUT/vector_add.err"
cat "$OUT/vector_add.err"
$G parse --format json "$OUT/vector_add.grt" >"$OUT/vector_add.jsonl"
$G report --format json "$OUT/vector_add.grt" >"$OUT/vector_add.report.json"
$G report "$OUT/vector_add.grt" >"$OUT/vector_add.report.txt"
python3 "$HERE/gpu_cuda_check.py" vector_add "$OUT/vector_add.jsonl" "$OUT/vector_add.report.json" || status=1

cat >"$OUT/torch_prog.py" <<'PY'
import sys, torch
x = torch.ones(1 << 20, device="cuda")
for _ in range(10):
    y = x * 2.0 + 1.0
torch.cuda.synchronize()
h = y.cpu()
print("sum", h.sum().item())
PY
# ground truth: the profiler's view of the same program, untraced
python3 - "$OUT/torch_prog.py" "$OUT/torch_truth.json" <<'PY'
import json, runpy, sys
from torch.profiler import profile, ProfilerActivity
with profile(activities=[ProfilerActivity.CUDA]) as prof:
    runpy.run_path(sys.argv[1])
kernels = [e for e in prof.events() if e.device_type.name == "CUDA" and "Memcpy" not in e.name and "Memset" not in e.name]
# the program prints too: the truth goes to its own file
with open(sys.argv[2], "w") as f:
    json.dump({"kernels": len(kernels), "names": sorted({k.name for k in kernels})}, f)
PY
$G record -f -s cuda -o "$OUT/torch.grt" -- python3 "$OUT/torch_prog.py" 2>"$OUT/torch.err"
cat "$OUT/torch.err"
$G parse --format json "$OUT/torch.grt" >"$OUT/torch.jsonl"
$G report "$OUT/torch.grt" >"$OUT/torch.report.txt"
python3 "$HERE/gpu_cuda_check.py" torch "$OUT/torch.jsonl" "$OUT/torch_truth.json" || status=1
head -40 "$OUT/torch.report.txt"
exit $status
