#!/bin/bash
# Runs the job-analysis scenarios (programs with a known blocking cause) on the GPU machine:
# records each with grtrace, reports it with --jobs --format json, checks that the dominant cause
# named is the right one, and prints a table last. Everything is written in a scratch folder and
# packed into two files under $OUT (or a temporary folder): scenarios.tar.gz (logs, reports as text
# and JSON) and scenarios-traces.tar.gz (the .grt traces).
# usage: bash bench/scenarios/run.sh BUILD     (BUILD holds grtrace and libgrtrace-inject.so)
set -u
build=$(cd "${1:?usage: run.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
dest=${OUT:-$(mktemp -d)}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
bin=$(mktemp -d -p "$out")
mkdir -p "$dest"
export PATH=/usr/local/cuda/bin:$PATH
# module loading at context creation, not at the first launch: a scenario's first launch is not slow
export CUDA_MODULE_LOADING=EAGER
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null

# name, expected dominant cause, sources
scenarios=(
	"host_bound host-bound cuda,gpu,sched"
	"queue_bound queue-wait cuda,gpu"
	"sync_bound sync-bound cuda,gpu"
	"long_tail exec-long-tail cuda,gpu"
	"uvm_faults vm-fault cuda,gpu,uvm"
	"uvm_pingpong uvm-bound cuda,gpu,uvm"
)

nvidia-smi -L 2>/dev/null | head -1 >"$out/device.txt"
for s in "${scenarios[@]}"; do
	read -r name want sources <<<"$s"
	log=$out/$name.log
	: >"$log"
	if ! nvcc -O2 -arch=sm_90 -o "$bin/$name" "$here/$name.cu" >>"$log" 2>&1; then
		echo "build failed" >"$out/$name.status"
		continue
	fi
	if ! "$build/grtrace" record -f -s "$sources" -o "$out/$name.grt" -- "$bin/$name" >>"$log" 2>&1; then
		echo "record failed" >"$out/$name.status"
		continue
	fi
	if ! "$build/grtrace" report "$out/$name.grt" --jobs --format json >"$out/$name.json" 2>>"$log"; then
		echo "report failed" >"$out/$name.status"
		continue
	fi
	"$build/grtrace" report "$out/$name.grt" --jobs >"$out/$name.txt" 2>>"$log"
	echo ok >"$out/$name.status"
done

# Does grtrace's own collection slow the application's launches? sync_bound again without the gpu
# source (no collection thread): slow launches beside grtrace's own calls with it, and without it.
if [ -x "$bin/sync_bound" ] && [ -f "$out/sync_bound.grt" ] &&
	"$build/grtrace" record -s cuda -o "$out/sync_bound_cuda_only.grt" -- "$bin/sync_bound" \
		>>"$out/sync_bound.log" 2>&1; then
	echo "own interference, sync_bound -s cuda,gpu: $(python3 "$here/own_interference.py" "$build/grtrace" "$out/sync_bound.grt" 2>&1)"
	echo "own interference, sync_bound -s cuda:     $(python3 "$here/own_interference.py" "$build/grtrace" "$out/sync_bound_cuda_only.grt" 2>&1)"
fi
rm -rf "$bin"
traces=$(cd "$out" && ls ./*.grt 2>/dev/null)
[ -n "$traces" ] && tar -C "$out" -czf "$dest/scenarios-traces.tar.gz" $traces
tar -C "$out" -czf "$dest/scenarios.tar.gz" --exclude='*.grt' .
python3 - "$out" "${scenarios[@]}" <<'PY'
import json, os, sys
out = sys.argv[1]
rows, failed = [], 0
for spec in sys.argv[2:]:
    name, want, sources = spec.split()
    status = open(os.path.join(out, name + ".status")).read().strip()
    row = [name, want, "-", "-", "-", "-", "-", status]
    if status == "ok":
        r = json.load(open(os.path.join(out, name + ".json")))["jobs"]
        v, t = r["verdict"], r["totals"]
        idle = v["idle_share"]
        row[2] = v["cause"]
        row[3] = "-" if idle is None else "%.0f%%" % (100 * idle)
        row[4] = str(t["jobs"])
        row[5] = str(t["incomplete"])
        tag = r["tags"].get(want, {}).get("jobs", "-") if want in r["tags"] else "-"
        row[6] = str(tag)
        row[7] = "PASS" if v["cause"] == want else "FAIL"
        print("%s: %s" % (name, v["text"]))
    if row[7] != "PASS":
        failed += 1
    rows.append(row)
print()
head = ["scenario", "expected", "named", "idle", "jobs", "incomplete", "tagged", "result"]
widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
for line in [head] + rows:
    print("  ".join(str(x).ljust(w) for x, w in zip(line, widths)))
print("device: %s" % open(os.path.join(out, "device.txt")).read().strip())
print("logs: scenarios.tar.gz, traces: scenarios-traces.tar.gz (under $OUT)")
sys.exit(1 if failed else 0)
PY
