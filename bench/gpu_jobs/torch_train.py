# A deterministic PyTorch training loop (small MLP, fixed shapes and seed) for the jobs suite.
# usage: torch_train.py [--profile CHROME_TRACE.json] [STEPS]
# With --profile the whole run happens inside torch.profiler (CUDA activity), and the number of
# kernels it saw is printed as kernels=N: run that untraced, then the same loop under grtrace.
import os
import sys

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
import torch  # noqa: E402

args = sys.argv[1:]
profile_path = None
if args[:1] == ["--profile"]:
    profile_path = args[1]
    args = args[2:]
steps = int(args[0]) if args else 50


def train():
    torch.manual_seed(0)
    torch.use_deterministic_algorithms(True)
    dev = "cuda"
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512),
                                torch.nn.ReLU(), torch.nn.Linear(512, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(128, 256, device=dev)
    y = torch.randint(0, 10, (128,), device=dev)
    loss = None
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    torch.cuda.synchronize()
    return loss.item()


if profile_path:
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        loss = train()
    prof.export_chrome_trace(profile_path)
    import json

    events = json.load(open(profile_path))["traceEvents"]
    kernels = sum(1 for e in events if e.get("cat") == "kernel")
    print(f"kernels={kernels} loss={loss:.6f}")
else:
    print(f"steps={steps} loss={train():.6f}")
