# A CuPy program: elementwise kernels and a RawKernel compiled at run time.
import cupy as cp

n = 1 << 20
x = cp.arange(n, dtype=cp.float32)
y = x * 2 + 1
scale = cp.RawKernel(r'''
extern "C" __global__ void scale(float *a, float f, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        a[i] *= f;
}''', 'scale')
for _ in range(20):
    scale(((n + 255) // 256,), (256,), (y, cp.float32(1.0001), cp.int32(n)))
    y = cp.sqrt(y * y + 1.0)
cp.cuda.runtime.deviceSynchronize()
print(f"cupy_sum={float(y.sum()):.3f}")
