#!/bin/bash
# On a machine with several GPUs (not runnable on one): a torch.distributed (NCCL) data-parallel
# loop on every GPU with one rank late on purpose, recorded with -s cuda,nccl,pcie. Checks that
# the report names the late rank and the all-reduce that waited for it, that each device's
# launches equal its rank's profiler kernel count, and that NVLink bytes are reported per link.
# usage: bench/gpu_multi.sh BUILD OUTDIR   (env: LATE_RANK=1 LATE_MS=200 STEPS=8 GPUS=all)
set -u
BUILD=${1:?usage: gpu_multi.sh BUILD OUTDIR}
OUT=${2:?usage: gpu_multi.sh BUILD OUTDIR}
HERE=$(cd "$(dirname "$0")" && pwd)
GRT=$BUILD/grtrace
LATE_RANK=${LATE_RANK:-1}
LATE_MS=${LATE_MS:-200}
STEPS=${STEPS:-8}
GPUS=${GPUS:-$(nvidia-smi -L | wc -l)}
mkdir -p "$OUT"
if [ "$GPUS" -lt 2 ]; then
	echo "gpu_multi: $GPUS GPU here; this benchmark needs at least 2" >&2
	exit 2
fi
# PyTorch's wheels carry their own libnccl.so.2, off the loader's path: name it to grtrace
if [ -z "${GRTRACE_LIBNCCL:-}" ]; then
	GRTRACE_LIBNCCL=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(nvidia.nccl.__path__[0], "lib", "libnccl.so.2"))' 2>/dev/null)
	export GRTRACE_LIBNCCL
fi
echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1), $GPUS GPUs"
echo "== libnccl: ${GRTRACE_LIBNCCL:-(loader path)}"
nvidia-smi topo -m >"$OUT/topo.txt" 2>&1
"$GRT" record -o "$OUT/multi.grt" -s cuda,nccl,pcie -- \
	torchrun --standalone --nproc_per_node="$GPUS" "$HERE/gpu_multi_train.py" --out "$OUT" \
	--steps "$STEPS" --late-rank "$LATE_RANK" --late-ms "$LATE_MS" 2>&1 | tee "$OUT/record.log" | tail -5
"$GRT" report "$OUT/multi.grt" --jobs --devices --copies --nccl >"$OUT/report.txt" 2>&1
"$GRT" report "$OUT/multi.grt" --nccl --format json >"$OUT/nccl.json"
"$GRT" report "$OUT/multi.grt" --devices --format json >"$OUT/devices.json"
"$GRT" parse "$OUT/multi.grt" --filter type=nvlink_sample --format json >"$OUT/nvlink.jsonl"
"$GRT" parse "$OUT/multi.grt" --filter type=source_status >"$OUT/sources.txt"
"$GRT" export "$OUT/multi.grt" -o "$OUT/multi.pftrace" >/dev/null 2>&1
sed -n '/== devices ==/,$p' "$OUT/report.txt" | head -40
grep -A20 '^verdict per device' "$OUT/report.txt" | head -20
python3 "$HERE/gpu_multi_check.py" "$OUT" "$LATE_RANK" "$LATE_MS" | tee "$OUT/checks.txt"
exit "${PIPESTATUS[0]}"
