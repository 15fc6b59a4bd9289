# A PyTorch training loop that runs torch.profiler in mid-run, as users do; writes what it saw.
#
# usage: torch_profiler.py OUT.json [WARMUP_STEPS] [PROFILED_STEPS] [PTX_FILE]
# Deterministic: the same kernels in the same order on every run. Each step also launches a small
# kernel of our own from PTX (PTX_FILE, built by nvcc -ptx), through the driver API, so that the
# trace can show block-probe timing after the profiler took CUPTI over (PyTorch's kernels ship as
# machine code, which grtrace cannot instrument). OUT.json: the profiler's kernels by name, the
# CLOCK_MONOTONIC time the profiler was started, and whether it raised.
import ctypes
import json
import sys
import time
from collections import Counter

import torch
from torch.profiler import ProfilerActivity, profile

out = sys.argv[1]
warmup = int(sys.argv[2]) if len(sys.argv) > 2 else 50
profiled = int(sys.argv[3]) if len(sys.argv) > 3 else 20
ptx_file = sys.argv[4] if len(sys.argv) > 4 else None

torch.manual_seed(0)
dev = "cuda"
model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(64, 256, device=dev)
y = torch.randint(0, 10, (64,), device=dev)
buf = torch.zeros(4096, device=dev)

# our own kernel: loaded from PTX text with cuModuleLoadData, launched with cuLaunchKernel
cuda = ctypes.CDLL("libcuda.so.1")
scale_fn = None
if ptx_file:
    ptx = open(ptx_file, "rb").read() + b"\0"
    mod, fn = ctypes.c_void_p(), ctypes.c_void_p()
    assert cuda.cuModuleLoadData(ctypes.byref(mod), ctypes.c_char_p(ptx)) == 0
    assert cuda.cuModuleGetFunction(ctypes.byref(fn), mod, b"grt_bench_scale") == 0
    scale_fn = fn


def scale():
    if scale_fn is None:
        return
    ptr, n = ctypes.c_uint64(buf.data_ptr()), ctypes.c_int(buf.numel())
    args = (ctypes.c_void_p * 2)(ctypes.addressof(ptr), ctypes.addressof(n))
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
    r = cuda.cuLaunchKernel(scale_fn, 16, 1, 1, 256, 1, 1, 0, stream, args, None)
    assert r == 0, r


def step():
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    scale()
    return loss


for _ in range(warmup):
    step()
torch.cuda.synchronize()

result = {"error": None, "kernels": {}, "profiler_started_ns": time.clock_gettime_ns(time.CLOCK_MONOTONIC)}
try:
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(profiled):
            step()
        torch.cuda.synchronize()
    names = Counter(e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA
                    and "memcpy" not in e.name.lower() and "memset" not in e.name.lower())
    result["kernels"] = dict(names)
except Exception as e:  # the failure this script exists to catch
    result["error"] = repr(e)
for _ in range(5):
    step()
torch.cuda.synchronize()
json.dump(result, open(out, "w"), indent=1, sort_keys=True)
print(f"profiler_kernels={sum(result['kernels'].values())} error={result['error']}")
