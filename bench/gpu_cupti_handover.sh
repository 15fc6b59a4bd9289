#!/bin/bash
# On the GPU machine: torch.profiler inside a program recorded with `-s cuda,gpu` still works and
# sees every kernel it sees untraced; grtrace hands CUPTI over, says what it lost, and keeps block-probe
# timing for instrumented kernels after the handover. Prints PASS/FAIL per check and a summary.
# usage: bench/gpu_inject_carry.sh BUILD DIR, then on the GPU machine: bash DIR/gpu_cupti_handover.sh
set -u
D=$(cd "$(dirname "$0")" && pwd)
G=$D/grtrace
OUTDIR=${OUT:-/tmp/gpu_cupti_handover_out}
W=$(mktemp -d)
mkdir -p "$OUTDIR"
export PATH=/usr/local/cuda/bin:$PATH GRTRACE_CACHE_DIR=$W/cache
exec > >(tee -a "$OUTDIR/log.txt") 2>&1
ldd "$D/libgrtrace-inject.so" | grep -q "not found" && export LD_LIBRARY_PATH=$D/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
WARMUP=${WARMUP:-50}
PROFILED=${PROFILED:-20}
fails=0
check() { # name, then a command that must succeed
	local name=$1
	shift
	if "$@"; then echo "PASS $name"; else echo "FAIL $name"; fails=$((fails + 1)); fi
}

echo "== device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"
echo "== torch: $(python3 -c 'import torch; print(torch.__version__, torch.version.cuda)' 2>&1)"
nvcc -ptx -arch=compute_90 -o "$W/scale.ptx" "$D/gpu_inject/scale.cu" || exit 1

echo "== untraced"
python3 "$D/gpu_inject/torch_profiler.py" "$W/untraced.json" "$WARMUP" "$PROFILED" "$W/scale.ptx"
echo "== recorded with -s cuda,gpu"
timeout 600 "$G" record -f -s cuda,gpu -o "$W/traced.grt" -- \
	python3 "$D/gpu_inject/torch_profiler.py" "$W/traced.json" "$WARMUP" "$PROFILED" "$W/scale.ptx" \
	2> >(tee "$W/record.err" >&2)
"$G" parse --format json "$W/traced.grt" > "$W/traced.jsonl"
cp "$W/untraced.json" "$W/traced.json" "$W/record.err" "$OUTDIR/" 2>/dev/null

python3 - "$W/untraced.json" "$W/traced.json" "$W/traced.jsonl" > "$W/facts.txt" <<'PY'
import json, sys
untraced, traced = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
recs = [json.loads(l) for l in open(sys.argv[3])]
app = lambda k: {n: c for n, c in k.items() if not n.startswith("__grt_")}
handover = [r for r in recs if r["type"] == "source_status" and "CUPTI handed over" in r.get("message", "")]
at = handover[0]["ts_ns"] if handover else None
scale_launches = [r for r in recs if r["type"] == "gpu_launch" and r.get("kernel") == "grt_bench_scale"]
after = [r for r in scale_launches if at and r["start_ns"] > at]
cupti_after = [r for r in recs if r["type"] == "gpu_kernel" and at and r["start_ns"] > at
               and not r["kernel"].startswith("__grt_")]
print("untraced_error", untraced["error"])
print("traced_error", traced["error"])
print("untraced_kernels", sum(untraced["kernels"].values()))
print("traced_kernels", sum(app(traced["kernels"]).values()))
print("same_kernels", app(traced["kernels"]) == untraced["kernels"])
print("own_kernels_seen_by_profiler", sum(c for n, c in traced["kernels"].items() if n.startswith("__grt_")))
print("handover_lines", len(handover))
print("handover_before_profiler_end", bool(at) and at >= traced["profiler_started_ns"])
print("probe_launches_after_handover", len(after))
print("cupti_kernels_after_handover", len(cupti_after))
print("handover_message", handover[0]["message"] if handover else "-")
PY
cat "$W/facts.txt"
fact() { awk -v k="$1" '$1 == k { $1 = ""; sub(/^ /, ""); print }' "$W/facts.txt"; }
check "profiler works untraced" [ "$(fact untraced_error)" = None ]
check "profiler works recorded (no MULTIPLE_SUBSCRIBERS error)" [ "$(fact traced_error)" = None ]
check "profiler sees every kernel it sees untraced ($(fact untraced_kernels))" [ "$(fact same_kernels)" = True ]
check "one handover line, at the profiler's start" [ "$(fact handover_lines)" = 1 ] && [ "$(fact handover_before_profiler_end)" = True ]
check "the recorder said it on stderr" grep -q "grtrace: note: gpu: pid [0-9]*: CUPTI handed over" "$W/record.err"
check "block-probe timing after the handover ($(fact probe_launches_after_handover) launches of the PTX kernel)" \
	[ "$(fact probe_launches_after_handover)" -ge $((PROFILED + 5)) ]
check "no CUPTI records of grtrace's after the handover" [ "$(fact cupti_kernels_after_handover)" = 0 ]
echo "== $fails failed; grtrace's own kernels the profiler saw: $(fact own_kernels_seen_by_profiler) (named __grt_*)"
[ $fails = 0 ]
