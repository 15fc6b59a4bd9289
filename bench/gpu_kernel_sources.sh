#!/bin/bash
# The kernel sources on the GPU machine, in one call:
#  1. a small CUDA program recorded with -s syscall: NVIDIA driver ioctls (RM_ALLOC / RM_CONTROL /
#     UVM_*) counted during initialisation vs steady state (split at the program's prctl marker);
#  2. the NVML sampler (-s pcie) during large pinned host-to-device copies: PCIe RX seen vs the
#     bandwidth the program measured;
#  3. the nvidia:nvidia_dev_xid tracepoint attached (-s xid);
#  4. the syscall source's overhead on a syscall-heavy loop (bench/syscall_overhead.sh).
# Usage (root): bench/gpu_kernel_sources.sh [DIR_WITH_GRTRACE] [OUTDIR]
#   DIR_WITH_GRTRACE holds the grtrace binary (default: build); OUTDIR defaults to $OUT or /tmp.
# Full logs and traces go to OUTDIR; a summary table is printed last.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
BIN=$(cd "${1:-$HERE/../build}" && pwd)
G=$BIN/grtrace
OUTDIR=${2:-${OUT:-/tmp}/gpu-kernel-sources}
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
mkdir -p "$OUTDIR"
SUMMARY=$OUTDIR/summary.txt
: >"$SUMMARY"
say() { echo "$*" | tee -a "$SUMMARY"; }

[ -x "$G" ] || { echo "no grtrace at $G" >&2; exit 1; }
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
# NVML may live beside libcuda rather than on the loader path
for d in /usr/local/nvidia/lib64 /usr/lib/x86_64-linux-gnu /lib/x86_64-linux-gnu /lib64 /lib; do
	if [ -z "${GRTRACE_NVML_LIBRARY:-}" ] && [ -e "$d/libnvidia-ml.so.1" ]; then
		export GRTRACE_NVML_LIBRARY=$d/libnvidia-ml.so.1
	fi
done

say "== device: $(nvidia-smi -L 2>/dev/null | head -1); driver $(cat /sys/module/nvidia/version 2>/dev/null); kernel $(uname -r)"
"$NVCC" -O2 -arch=sm_90 -o "$OUTDIR/init_steady" "$HERE/cuda/init_steady.cu" >"$OUTDIR/nvcc.log" 2>&1 &&
	"$NVCC" -O2 -arch=sm_90 -o "$OUTDIR/h2d_copy" "$HERE/cuda/h2d_copy.cu" >>"$OUTDIR/nvcc.log" 2>&1 ||
	{ say "nvcc failed: $(tail -3 "$OUTDIR/nvcc.log")"; exit 1; }

# ---- 1. driver ioctls: init vs steady state ----
ITER=1000
"$G" record -f -s syscall -o "$OUTDIR/syscall.grt" -- "$OUTDIR/init_steady" $ITER >"$OUTDIR/syscall.log" 2>&1
say "== 1. syscall source on init_steady $ITER (record rc=$?): $(grep -h 'recorded\|init_steady' "$OUTDIR/syscall.log" | tr '\n' ' ')"
"$G" parse --format json "$OUTDIR/syscall.grt" >"$OUTDIR/syscall.jsonl"
python3 - "$OUTDIR/syscall.jsonl" $ITER <<'PY' | tee -a "$SUMMARY"
import collections, json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
iters = int(sys.argv[2])
PR_SET_NAME = 15
marks = sorted(e["ts_ns"] for e in ev if e["type"] == "syscall" and e["name"] == "prctl" and e["args"][0] == PR_SET_NAME)
if len(marks) < 2:
    print("  marker prctl calls not found (%d): cannot split phases" % len(marks)); sys.exit(0)
def phase(ts):
    return "init" if ts < marks[0] else "steady" if ts < marks[1] else "teardown"
ops = {p: collections.Counter() for p in ("init", "steady", "teardown")}
calls = collections.Counter()
detail = collections.Counter()
for e in ev:
    if e["type"] == "syscall":
        calls[phase(e["ts_ns"])] += 1
    elif e["type"] == "nv_ioctl":
        p = phase(e["ts_ns"])
        op = e["op"]
        group = op if op in ("NV_ESC_RM_ALLOC", "NV_ESC_RM_CONTROL", "NV_ESC_RM_FREE",
                             "NV_ESC_RM_MAP_MEMORY", "NV_ESC_RM_UNMAP_MEMORY") else \
            "UVM_*" if op.startswith("UVM_") else "other NV_ESC_*"
        ops[p][group] += 1
        ops[p]["all"] += 1
        if p == "init" and "class" in e: detail["RM_ALLOC class 0x%x" % e["class"]] += 1
        if p == "init" and "cmd" in e: detail["RM_CONTROL cmd 0x%x" % e["cmd"]] += 1
cols = ["NV_ESC_RM_ALLOC", "NV_ESC_RM_CONTROL", "NV_ESC_RM_FREE", "NV_ESC_RM_MAP_MEMORY", "NV_ESC_RM_UNMAP_MEMORY", "UVM_*", "other NV_ESC_*", "all"]
print("  %-10s %9s " % ("phase", "syscalls") + " ".join("%s" % c.replace("NV_ESC_RM_", "RM_") for c in cols))
for p in ("init", "steady", "teardown"):
    print("  %-10s %9d " % (p, calls[p]) + " ".join("%*d" % (len(c.replace("NV_ESC_RM_", "RM_")), ops[p][c]) for c in cols))
print("  steady state per iteration (launch + 4 KiB copy + sync): %.3f driver ioctls, %.2f syscalls" % (ops["steady"]["all"] / iters, calls["steady"] / iters))
print("  most frequent in init: " + ", ".join("%s x%d" % kv for kv in detail.most_common(8)))
uvm = collections.Counter(e["op"] for e in ev if e["type"] == "nv_ioctl" and e["op"].startswith("UVM_"))
print("  UVM ioctls (all phases): " + ", ".join("%s x%d" % kv for kv in uvm.most_common()))
PY
"$G" report "$OUTDIR/syscall.grt" >"$OUTDIR/report.txt" 2>&1 || true

# ---- 2. NVML PCIe sampler during host-to-device copies ----
GRTRACE_PCIE_INTERVAL_MS=100 "$G" record -f -s pcie -o "$OUTDIR/pcie.grt" -- "$OUTDIR/h2d_copy" 3 1024 >"$OUTDIR/pcie.log" 2>&1
say "== 2. pcie source around h2d_copy (record rc=$?; NVML ${GRTRACE_NVML_LIBRARY:-from the loader path}): $(grep -h 'h2d_copy:' "$OUTDIR/pcie.log")"
"$G" parse --format json "$OUTDIR/pcie.grt" >"$OUTDIR/pcie.jsonl"
python3 - "$OUTDIR/pcie.jsonl" <<'PY' | tee -a "$SUMMARY"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
for u in (e for e in ev if e["type"] == "unsupported_probe"):
    print("  not available: %s: %s" % (u["probe"], u["reason"]))
by_dev = {}
for e in ev:
    if e["type"] == "pcie_sample":
        by_dev.setdefault(e["device"], []).append(e)
if not by_dev:
    print("  no pcie_sample records")
for dev, s in sorted(by_dev.items()):
    rx = [x.get("pcie_rx_bps", 0) for x in s]
    tx = [x.get("pcie_tx_bps", 0) for x in s]
    busy = [r for r in rx if r > 1e9]
    print("  GPU %d %s: %d samples; PCIe RX (host->GPU) max %.2f GB/s, mean over busy samples %.2f GB/s (%d busy); TX max %.2f GB/s; NVLink %s"
          % (dev, s[0].get("pci"), len(s), max(rx) / 1e9, (sum(busy) / len(busy) / 1e9) if busy else 0, len(busy),
             max(tx) / 1e9, "sampled" if any("nvlink_tx_bps" in x for x in s) else "not reported"))
PY

# ---- 3. xid tracepoint ----
{
	echo "--- /sys/kernel/tracing/events/nvidia:"
	ls /sys/kernel/tracing/events/nvidia 2>&1
	cat /sys/kernel/tracing/events/nvidia/nvidia_dev_xid/format 2>&1
} >"$OUTDIR/xid_format.txt"
"$G" record -f -s xid -o "$OUTDIR/xid.grt" -- sleep 1 >"$OUTDIR/xid.log" 2>&1
rc=$?
attached=$("$G" parse --format json "$OUTDIR/xid.grt" 2>/dev/null | grep -c '"type":"source_status","[^}]*"source":"xid","status":0')
say "== 3. xid source: record rc=$rc, source_status attached records=$attached, xid events=$("$G" parse --format json "$OUTDIR/xid.grt" 2>/dev/null | grep -c '"type":"xid"'); $(head -1 "$OUTDIR/xid.log")"

# ---- 4. syscall source overhead ----
say "== 4. syscall source overhead (bench/syscall_overhead.sh)"
bash "$HERE/syscall_overhead.sh" "$BIN" 1000000 5 2>&1 | tee -a "$SUMMARY"

echo
echo "==== summary ($OUTDIR) ===="
cat "$SUMMARY"
