# A PyTorch training step, timed: launch-bound small MLP and a larger conv step.
import sys
import time

import torch

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 200
torch.manual_seed(0)
dev = "cuda"
mlp = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 1024),
                          torch.nn.ReLU(), torch.nn.Linear(1024, 10)).to(dev)
conv = torch.nn.Sequential(torch.nn.Conv2d(3, 64, 3, padding=1), torch.nn.ReLU(), torch.nn.Conv2d(64, 64, 3, padding=1),
                           torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(64, 10)).to(dev)


def runner(model, x, y):
    opt = torch.optim.SGD(model.parameters(), lr=0.01)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


def timed(step, n):
    for _ in range(10):
        step()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        loss = step()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) * 1e3 / n, loss.item()


mlp_ms, mlp_loss = timed(runner(mlp, torch.randn(64, 512, device=dev), torch.randint(0, 10, (64,), device=dev)), steps)
conv_ms, conv_loss = timed(runner(conv, torch.randn(64, 3, 64, 64, device=dev), torch.randint(0, 10, (64,), device=dev)),
                           max(steps // 4, 10))
print(f"mlp_step_ms={mlp_ms:.4f} conv_step_ms={conv_ms:.4f} mlp_loss={mlp_loss:.6f} conv_loss={conv_loss:.6f}")
