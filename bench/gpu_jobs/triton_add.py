# Triton's launch path: one @triton.jit kernel launched N times.
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


launches = int(sys.argv[1]) if len(sys.argv) > 1 else 200
n = 1 << 20
x = torch.ones(n, device="cuda")
y = torch.ones(n, device="cuda")
out = torch.empty_like(x)
for _ in range(launches):
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
torch.cuda.synchronize()
print(f"launches={launches} sum={float(out.sum()):.1f}")
