#!/bin/bash
# make demo: record and report the bundled sample: a real CUDA program when a GPU is present,
# the fake-driver workload otherwise.
set -euo pipefail
BUILD=${1:-build}
G=$BUILD/grtrace
OUT=$BUILD/demo
mkdir -p "$OUT"
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 && command -v nvcc >/dev/null; then
	echo "== GPU found: recording samples/vector_add.cu"
	nvcc -O2 -arch=sm_90 -o "$OUT/vector_add" samples/vector_add.cu
	$G record -f -s cuda -o "$OUT/demo.grt" -- "$OUT/vector_add"
else
	echo "== no GPU here: recording the fake-driver workload (tests/workloads/cuda_known.c)"
	LD_LIBRARY_PATH=$BUILD/fixtures/fake $G record -f -s cuda -o "$OUT/demo.grt" -- \
		"$BUILD/fixtures/workloads/cuda_known"
fi
echo "== grtrace parse (first 15 events)"
$G parse "$OUT/demo.grt" | sed -n 1,15p
echo "== grtrace report"
$G report "$OUT/demo.grt"
echo "== trace: $OUT/demo.grt"
