#!/bin/bash
# The job analysis on real launch paths (GPU machine): a PyTorch training loop against the
# PyTorch profiler's kernel count, JAX (XLA), Triton and CUDA graphs. Each case is recorded with
# grtrace record -s cuda,gpu and checked by check.py: launches, gpu_kernel records and jobs agree
# exactly (for PyTorch: equal the kernel count of an untraced run of the same loop under
# torch.profiler), every device record of the application matched by identity, none of grtrace's
# own work counted. Cases whose Python module is missing are SKIP. Everything is written in a
# scratch folder and packed into two files under $OUT: gpu_jobs.tar.gz (logs, checks, reports,
# explain_unmatched.py's answer for a case that fails) and gpu_jobs-traces.tar.gz (the .grt
# traces); the table comes last on stdout.
# usage: bash bench/gpu_jobs/run.sh BUILD   (BUILD holds grtrace and libgrtrace-inject.so)
set -u
build=$(cd "${1:?usage: run.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
dest=${OUT:-$(mktemp -d)}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
mkdir -p "$dest"
export PATH=/usr/local/cuda/bin:$PATH
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
G=$build/grtrace
rows=$out/rows.jsonl
: >"$rows"

# record NAME CMD...: records CMD with -s cuda,gpu into $out/NAME.grt; its output in $out/NAME.log
record() {
	local name=$1
	shift
	timeout 600 "$G" record -f -s cuda,gpu -o "$out/$name.grt" -- "$@" >"$out/$name.log" 2>&1
}

# check NAME EXPECT_JSON: check.py's lines into $out/NAME.check, its row into the table
check() {
	if ! python3 "$here/check.py" "$G" "$out/$1.grt" "$1" "$2" >"$out/$1.check" 2>&1; then
		python3 "$here/explain_unmatched.py" "$G" "$out/$1.grt" >"$out/$1.unmatched" 2>&1
	fi
	grep -v '^row=' "$out/$1.check"
	grep '^row=' "$out/$1.check" | sed 's/^row=//' >>"$rows"
	"$G" report "$out/$1.grt" --jobs >"$out/$1.jobs.txt" 2>&1
}

skip() { # NAME WHY
	echo "SKIP - [$1] $2"
	echo "{\"case\": \"$1\", \"result\": \"SKIP ($2)\"}" >>"$rows"
}

has() { python3 -c "import $1" 2>/dev/null; }

nvidia-smi -L 2>/dev/null | head -1 >"$out/device.txt"

# 1. PyTorch: the profiler's kernel count from an untraced run, then the same loop traced
if has torch; then
	steps=${TORCH_STEPS:-50}
	python3 "$here/torch_train.py" --profile "$out/torch_profile.json" "$steps" >"$out/torch_profile.log" 2>&1
	rm -f "$out/torch_profile.json" # 2 MB of profiler trace; its kernel count is in the log
	kernels=$(sed -n 's/^kernels=\([0-9]*\).*/\1/p' "$out/torch_profile.log")
	if [ -z "$kernels" ]; then
		skip torch_train "the profiler run failed: $(tail -1 "$out/torch_profile.log")"
	elif record torch_train python3 "$here/torch_train.py" "$steps"; then
		check torch_train "{\"kernels\": $kernels}"
	else
		skip torch_train "record failed: $(tail -1 "$out/torch_train.log")"
	fi
else
	skip torch_train "no torch"
fi

# 2. JAX: XLA launches (autotuning included); launches, records and jobs agree
if has jax; then
	record jax_matmul python3 "$here/jax_matmul.py" 300 && check jax_matmul '{}' ||
		skip jax_matmul "record failed: $(tail -1 "$out/jax_matmul.log")"
else
	skip jax_matmul "no jax"
fi

# 3. Triton: 200 launches of one @triton.jit kernel
if has triton && has torch; then
	record triton_add python3 "$here/triton_add.py" 200 && check triton_add '{"named": ["add_kernel", 200]}' ||
		skip triton_add "record failed: $(tail -1 "$out/triton_add.log")"
else
	skip triton_add "no triton"
fi

# 4. CUDA graphs: 100 launches of a 5-kernel graph beside 100 plain launches; the 5 launches
# made while capturing the graph are recorded but never run as such
if nvcc -O2 -arch=sm_90 -o "$out/cuda_graph" "$here/cuda_graph.cu" >"$out/cuda_graph.build.log" 2>&1; then
	record cuda_graph "$out/cuda_graph" &&
		check cuda_graph '{"graph_launches": 100, "nodes": 5, "captured": 5, "named": ["step_kernel", 105]}' ||
		skip cuda_graph "record failed: $(tail -1 "$out/cuda_graph.log")"
else
	skip cuda_graph "nvcc failed: $(tail -1 "$out/cuda_graph.build.log")"
fi

rm -f "$out/cuda_graph"
traces=$(cd "$out" && ls ./*.grt 2>/dev/null)
[ -n "$traces" ] && tar -C "$out" -czf "$dest/gpu_jobs-traces.tar.gz" $traces
tar -C "$out" -czf "$dest/gpu_jobs.tar.gz" --exclude='*.grt' .
python3 - "$rows" "$out/device.txt" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
cols = ["case", "launches", "kernel_records", "kernel_jobs", "expected", "graph_launches", "node_jobs",
        "identity", "device_records", "own_records", "result"]
table = [[str(r.get(c, "-")) for c in cols] for r in rows]
widths = [max(len(x) for x in col) for col in zip(cols, *table)]
print()
for line in [cols] + table:
    print("  ".join(x.ljust(w) for x, w in zip(line, widths)))
print("device: " + open(sys.argv[2]).read().strip())
print("logs: gpu_jobs.tar.gz, traces: gpu_jobs-traces.tar.gz (under $OUT)")
sys.exit(1 if any(r["result"] == "FAIL" for r in rows) else 0)
PY
