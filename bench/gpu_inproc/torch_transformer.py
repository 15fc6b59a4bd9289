# A small transformer's training loop, timed; or the PyTorch profiler's kernel count of the same run.
#
# usage: torch_transformer.py STEPS [profile]
# Prints step_ms (median over the steps, and the spread); with "profile", the profiler runs over
# the whole program (model set-up included) and the number of CUDA kernels it saw is printed,
# to compare with the launch records of a trace of the same program without "profile".
import statistics
import sys
import time

import torch

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
profiling = len(sys.argv) > 2 and sys.argv[2] == "profile"
prof = None
if profiling:
    from torch.profiler import ProfilerActivity, profile
    prof = profile(activities=[ProfilerActivity.CUDA])
    prof.__enter__()

torch.manual_seed(0)
dev = "cuda"
layer = torch.nn.TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=512, batch_first=True)
model = torch.nn.Sequential(torch.nn.TransformerEncoder(layer, num_layers=2), torch.nn.Flatten(),
                            torch.nn.Linear(256 * 32, 10)).to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
x = torch.randn(32, 32, 256, device=dev)
y = torch.randint(0, 10, (32,), device=dev)
times = []
for i in range(steps):
    t0 = time.perf_counter()
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    torch.cuda.synchronize()
    times.append((time.perf_counter() - t0) * 1e3)
if prof is not None:
    prof.__exit__(None, None, None)
    kernels = sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA
                  and not e.name.startswith(("Memcpy", "Memset")))
    print(f"profiler_kernels={kernels}")
warm = times[10:] or times
print(f"steps={steps} step_ms={statistics.median(warm):.4f} "
      f"p10_ms={sorted(warm)[len(warm) // 10]:.4f} p90_ms={sorted(warm)[len(warm) * 9 // 10]:.4f} "
      f"loss={loss.item():.6f}")
