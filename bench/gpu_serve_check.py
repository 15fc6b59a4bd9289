#!/usr/bin/env python3
"""The H100 proof of grtrace serve (bench/gpu_serve.sh runs it): a deterministic PyTorch training
loop, run twice, and compares launch counters.

  gpu_serve_check.py profile STEPS   runs the whole program (set-up, warm-up, STEPS steps) under
                                     torch.profiler; prints "kernels N"
  gpu_serve_check.py train STEPS     runs the same loop untraced by PyTorch; prints "done"
  gpu_serve_check.py compare METRICS PID WANT
                                     sum of grtrace_cuda_launches_total{pid=PID} in a scrape
                                     against WANT; prints one ok/FAIL line, exit 1 on FAIL
"""
import re
import sys


def loop():
    import torch

    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True
    model = torch.nn.Sequential(
        torch.nn.Linear(1024, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 1024)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(256, 1024, device="cuda")
    y = torch.randn(256, 1024, device="cuda")
    # warm-up outside the counted steps: lazy module loading, cuBLAS handles, allocator
    for _ in range(3):
        opt.zero_grad(set_to_none=True)
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
    torch.cuda.synchronize()
    return torch, model, opt, x, y


def steps_of(torch, model, opt, x, y, steps):
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
    torch.cuda.synchronize()


def main():
    cmd = sys.argv[1]
    if cmd in ("profile", "train"):
        steps = int(sys.argv[2])
        if cmd == "profile":
            import torch
            from torch.profiler import profile, ProfilerActivity
            # everything the training run does, from the first CUDA call on
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                torch, model, opt, x, y = loop()
                steps_of(torch, model, opt, x, y, steps)
            kernels = [e for e in prof.events()
                       if e.device_type == torch.autograd.DeviceType.CUDA
                       and not e.name.startswith(("Memcpy", "Memset"))]
            print("kernels", len(kernels))
        else:
            torch, model, opt, x, y = loop()
            steps_of(torch, model, opt, x, y, steps)
            print("done", flush=True)
            # stay until the agent has scraped our final counts
            sys.stdin.readline()
        return 0
    if cmd == "compare":
        path, pid, want = sys.argv[2], sys.argv[3], int(sys.argv[4])
        got = 0
        pat = re.compile(r'^grtrace_cuda_launches_total\{pid="%s",.*\} (\d+)$' % pid)
        for line in open(path):
            m = pat.match(line.strip())
            if m:
                got += int(m.group(1))
        ok = got == want
        print("%s - pid %s: serve counted %d launches, the program's own count is %d"
              % ("ok" if ok else "FAIL", pid, got, want))
        return 0 if ok else 1
    sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    sys.exit(main())
