#!/bin/bash
# Measures the CPU side of attaching: extract PTX from an nvcc fat binary and rewrite it,
# for the vector-add module and a generated 200-kernel module. Usage: bench/ptx_rewrite_bench.sh [BUILD]
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
bench=$build/fixtures/ptx_rewrite_bench
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
[ -x "$bench" ] || make -j2 BUILD="$build" "$bench" >/dev/null
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# 200 distinct kernels: loops, branches, shared memory and shuffles, like a real library module.
{
	echo '#define K(n) extern "C" __global__ void kernel_##n(float *out, const float *in, int len) { \'
	echo '	__shared__ float tile[128]; int i = blockIdx.x * blockDim.x + threadIdx.x; \'
	echo '	float v = i < len ? in[i] * (n + 1) : 0.0f; \'
	echo '	for (int k = 0; k < (n % 9) + 1; k++) v = v * 0.5f + __shfl_down_sync(~0u, v, 1 + k % 4); \'
	echo '	tile[threadIdx.x % 128] = v; __syncthreads(); \'
	echo '	if (i >= len) return; \'
	echo '	out[i] = tile[(threadIdx.x + n) % 128] + v; }'
	for n in $(seq 0 199); do echo "K($n)"; done
} >"$dir/many.cu"
"$nvcc" -fatbin -arch=sm_90 -o "$dir/vector_add.fatbin" tests/ptx/vector_add.cu
"$nvcc" -fatbin -arch=sm_90 -o "$dir/many.fatbin" "$dir/many.cu"
"$bench" "$dir/vector_add.fatbin" 200 | sed "s|$dir/||"
"$bench" "$dir/many.fatbin" 20 | sed "s|$dir/||"
