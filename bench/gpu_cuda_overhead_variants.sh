#!/bin/bash
# On the GPU machine: where the cuda source's per-launch cost goes. Prints the prologue bytes of
# the probed entry points, then runs bench/cuda_launch_overhead.sh as shipped, without user
# stacks, and without stacks or argument words (test switches of the cuda source).
# usage: bench/gpu_cuda_overhead_variants.sh BUILD OUT
set -u
BUILD=${1:?usage: BUILD OUT}
OUT=${2:?usage: BUILD OUT}
HERE=$(cd "$(dirname "$0")" && pwd)
LIBCUDA=${LIBCUDA:-/usr/local/nvidia/lib64/libcuda.so.1}
mkdir -p "$OUT"
echo "== first bytes of the probed entry points in $LIBCUDA"
python3 "$HERE/explore/prologues.py" "$LIBCUDA" cuLaunchKernel cuLaunchKernel_ptsz cuLaunchKernelEx \
	cuMemAlloc_v2 cuMemcpyHtoD_v2 cuMemcpyAsync cuStreamSynchronize cuLibraryGetKernel
for variant in default no_stacks no_stacks_no_args; do
	case $variant in
	default) env= ;;
	no_stacks) env="GRT_CUDA_NO_STACKS=1" ;;
	no_stacks_no_args) env="GRT_CUDA_NO_STACKS=1 GRT_CUDA_NO_ARGS=1" ;;
	esac
	echo "== variant $variant"
	env $env bash "$HERE/cuda_launch_overhead.sh" "$BUILD" "$OUT/$variant" 2>&1 | tail -n +2
done
