#!/bin/bash
# Builds (here, with the CUDA toolkit) the block probe's cost split (bench/probe_variants.c) into
# OUTDIR, with the vector add's PTX beside it (and uneven_add.ptx, the same shape with warps that
# finish far apart); on the GPU machine: OUTDIR/probe_variants OUTDIR/vector_add.ptx [LAUNCHES
# [ROUNDS [OTHER.PTX...]]].
#   bench/probe_variants.sh OUTDIR
set -eu
cd "$(dirname "$0")/.."
out=${1:?usage: bench/probe_variants.sh OUTDIR}
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
mkdir -p "$out"
"$nvcc" -ptx -arch=sm_90 -o "$out/vector_add.ptx" bench/gpu_inject/vector_add.cu
# warps that finish far apart, for what early warps waiting at the exit barrier cost
"$nvcc" -ptx -arch=sm_90 -o "$out/uneven_add.ptx" bench/gpu_inject/uneven_add.cu
gcc -std=gnu11 -O2 -Wall -Wextra -Werror -Wno-missing-field-initializers -D_GNU_SOURCE -Isrc -I/usr/local/cuda/include \
	-o "$out/probe_variants" bench/probe_variants.c src/inject/ptx_*.c src/common/kernel_regex.c \
	-L/usr/local/cuda/lib64/stubs -lcuda
echo "built $out"
