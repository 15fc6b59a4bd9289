# A small transformer's training loop, timed; or the PyTorch profiler's kernel count of the same run.
#
# usage: torch_transformer.py STEPS [profile | ab BLOCK]
# Prints step_ms (median over the steps, and the spread); with "profile", the profiler runs over
# the whole program (model set-up included) and the number of CUDA kernels it saw is printed,
# to compare with the launch records of a trace of the same program without "profile".
# With "ab BLOCK", after 50 warm-up steps, grtrace's in-process recording of the CUDA calls is
# turned off and on in blocks of BLOCK steps (record_switch.py), pairs of blocks in turn
# off-on and on-off, and ab_pct is the median over the pairs of (on - off) / off, each block by
# its median step: the recording's cost within one process. Untraced, nothing is switched and
# ab_pct is the method's own noise (an A/A run).
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from record_switch import RecordSwitch  # noqa: E402

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
profiling = len(sys.argv) > 2 and sys.argv[2] == "profile"
ab_block = int(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[2] == "ab" else 0
AB_WARM = 50
switch = RecordSwitch() if ab_block else None
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
recording = []  # with ab: whether each step was recorded


def recorded_in(step):
    """ab: pair p of blocks is off-on for even p, on-off for odd p."""
    block = (step - AB_WARM) // ab_block
    return block % 2 != (block // 2) % 2


for i in range(steps):
    if ab_block and i >= AB_WARM:
        recording.append(recorded_in(i))
        switch.on(recording[-1])
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
if ab_block:
    switch.on(True)
    timed = times[AB_WARM:]
    blocks = [statistics.median(timed[b:b + ab_block]) for b in range(0, len(timed) - ab_block + 1, ab_block)]
    blocks = blocks[:len(blocks) // 2 * 2]
    pct = []
    for p in range(0, len(blocks), 2):
        on, off = (blocks[p], blocks[p + 1]) if recording[p * ab_block] else (blocks[p + 1], blocks[p])
        pct.append((on - off) * 100 / off)
    pct.sort()
    on_ms = [t for t, r in zip(timed, recording) if r]
    off_ms = [t for t, r in zip(timed, recording) if not r]
    print(f"ab switch={'live' if switch.active else 'none'} pairs={len(pct)} "
          f"ab_pct={statistics.median(pct):+.3f} q1={pct[len(pct) // 4]:+.3f} "
          f"q3={pct[len(pct) * 3 // 4]:+.3f} on_ms={statistics.median(on_ms):.4f} "
          f"off_ms={statistics.median(off_ms):.4f}")
warm = times[10:] or times
print(f"steps={steps} step_ms={statistics.median(warm):.4f} "
      f"p10_ms={sorted(warm)[len(warm) // 10]:.4f} p90_ms={sorted(warm)[len(warm) * 9 // 10]:.4f} "
      f"loss={loss.item():.6f}")
