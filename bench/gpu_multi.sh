#!/bin/bash
# On a machine with several GPUs: a torch.distributed (NCCL) data-parallel loop on every GPU with
# one rank late on purpose, then a group split from the default communicator and point-to-point
# sends with the sender late once, recorded with -s cuda,nccl,pcie. Checks that the report names
# the late rank and the all-reduce that waited across its delay, the split communicator's ranks,
# the receive that waited for the late sender, that each device's launches equal
# its rank's profiler kernel count (and the NCCL kernels tied to collectives the profiler's
# ncclDevKernel_ count), and that NVLink bytes are reported per link; where the GPUs have no
# NVLink, that grtrace says so in one line. Each check prints "ok - " or "FAIL - "; a summary
# comes last. Every step has a time bound: the whole run stays under 4 minutes.
# Needs only what the GPU machine has: python3 with torch (NCCL), awk, coreutils' timeout.
# Writes OUT/gpu_multi.tar.gz (logs, reports, checks) and OUT/gpu_multi-trace.tar.gz (the trace).
# usage: bench/gpu_multi.sh BUILD OUT   (env: LATE_RANK=1 LATE_MS=300 STEPS=8 GPUS=all
#        SOURCES=cuda,nccl,pcie; add gpu to time kernels on the device: collective waits are then
#        measured between kernel starts where every rank's kernel has one; NO_PROFILE=1: the
#        ranks run without torch.profiler, leaving CUPTI to grtrace, and counts are not compared)
set -u
BUILD=$(cd "${1:?usage: gpu_multi.sh BUILD OUT}" && pwd) || exit 2
mkdir -p "${2:?usage: gpu_multi.sh BUILD OUT}" && OUT=$(cd "$2" && pwd) || exit 2
HERE=$(cd "$(dirname "$0")" && pwd)
G=$BUILD/grtrace
LATE_RANK=${LATE_RANK:-1}
LATE_MS=${LATE_MS:-300}
STEPS=${STEPS:-8}
SOURCES=${SOURCES:-cuda,nccl,pcie}
work=$(mktemp -d)
# NVLink multicast stays off on shared hosts, also in the ranks torchrun starts
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1
passed=0
failed=0
deadline=$((SECONDS + 230))

ok() { echo "ok - $1"; passed=$((passed + 1)); }
fail() { echo "FAIL - $1"; failed=$((failed + 1)); }
# bounded SECONDS CMD...: runs CMD for at most SECONDS, less when the run's deadline is nearer
bounded() {
	local limit=$1 left=$((deadline - SECONDS))
	shift
	[ "$left" -lt "$limit" ] && limit=$left
	[ "$limit" -lt 5 ] && limit=5
	timeout -k 5 "$limit" "$@"
}
finish() {
	[ -e "$work/multi.grt" ] && tar -C "$work" -czf "$OUT/gpu_multi-trace.tar.gz" multi.grt
	tar -C "$work" -czf "$OUT/gpu_multi.tar.gz" --exclude='*.grt' . 2>/dev/null
	rm -rf "$work"
	echo
	echo "summary: gpu_multi: $passed ok, $failed FAIL in ${SECONDS} s; ${gpus:-?} GPUs (${device:-unknown device});" \
		"NVLink: ${nvlink_line:-not checked}; files: gpu_multi.tar.gz, gpu_multi-trace.tar.gz under $OUT"
}
trap finish EXIT

# ---- the machine: GPUs, torch, the libnccl torch loads (a wheel's copy is off the loader path) ----
[ -x "$G" ] && ok "grtrace at $G: $("$G" --version 2>&1 | head -1)" || { fail "no grtrace at $G"; exit 1; }
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
for d in /usr/local/nvidia/lib64 /usr/lib/x86_64-linux-gnu /lib/x86_64-linux-gnu /lib64; do
	if [ -z "${GRTRACE_NVML_LIBRARY:-}" ] && [ -e "$d/libnvidia-ml.so.1" ]; then
		export GRTRACE_NVML_LIBRARY=$d/libnvidia-ml.so.1
	fi
done
bounded 60 python3 - >"$work/machine.txt" 2>"$work/machine.err" <<'PY'
import torch
print("gpus", torch.cuda.device_count(), flush=True)
print("device", torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none", flush=True)
try:
    nccl = ".".join(map(str, torch.cuda.nccl.version()))
except Exception as e:  # a torch without NCCL: the record step will say more
    nccl = "unknown (%s)" % e
print("torch", torch.__version__, "nccl", nccl)
print("libnccl", next((l.split()[-1] for l in open("/proc/self/maps") if "libnccl" in l), ""))
PY
gpus=$(awk '$1 == "gpus" {print $2}' "$work/machine.txt")
device=$(awk '$1 == "device" {$1 = ""; sub(/^ /, ""); print}' "$work/machine.txt")
libnccl=$(awk '$1 == "libnccl" {print $2}' "$work/machine.txt")
[ -n "${GPUS:-}" ] && gpus=$GPUS
if [ "${gpus:-0}" -lt 2 ] 2>/dev/null; then
	fail "at least 2 GPUs: torch sees ${gpus:-none} ($(tail -1 "$work/machine.err" 2>/dev/null))"
	exit 1
fi
ok "$gpus GPUs: $device; $(awk '$1 == "torch"' "$work/machine.txt")"
nccl_opt=()
if [ -n "$libnccl" ]; then
	nccl_opt=(--libnccl "$libnccl")
	echo "info - libnccl: $libnccl (mapped by torch)"
else
	echo "info - torch maps no libnccl.so (static NCCL?): the nccl source looks on the loader path"
fi
# NVLink as the driver sees it; -1 when nvidia-smi cannot say
smi_links=-1
if command -v nvidia-smi >/dev/null; then
	bounded 20 nvidia-smi nvlink -s >"$work/nvlink_smi.txt" 2>&1 &&
		smi_links=$(awk '/Link [0-9]+:/ && tolower($0) !~ /inactive|n\/a/ {n++} END {print n + 0}' "$work/nvlink_smi.txt")
	bounded 20 nvidia-smi topo -m >"$work/topo.txt" 2>&1
fi

# ---- record the loop: every rank, every process torchrun starts ----
bounded 150 "$G" record -f -o "$work/multi.grt" -s "$SOURCES" "${nccl_opt[@]}" -- \
	python3 -m torch.distributed.run --standalone --nproc_per_node="$gpus" "$HERE/gpu_multi_train.py" \
	--out "$work" --steps "$STEPS" --late-rank "$LATE_RANK" --late-ms "$LATE_MS" ${NO_PROFILE:+--no-profile} \
	>"$work/record.log" 2>&1
rc=$?
[ $rc -eq 0 ] && ok "record of the $gpus-rank loop exits 0" ||
	fail "record of the $gpus-rank loop exits 0 (rc $rc$([ $rc -eq 124 ] && echo ', timed out'); $(grep -m1 -i 'error\|grtrace:' "$work/record.log"))"
grep '^grtrace: ' "$work/record.log" | head -5 | sed 's/^/info - /'
if [ ! -s "$work/multi.grt" ]; then
	fail "a trace was written"
	exit 1
fi

# ---- what grtrace says about it ----
report() { # FILE ARGS...: one grtrace command into WORK/FILE, bounded
	local file=$1
	shift
	bounded 30 "$G" "$@" >"$work/$file" 2>>"$work/reports.err" || fail "grtrace $* exits 0"
}
report report.txt report "$work/multi.grt" --jobs --devices --copies --nccl
report nccl.json report "$work/multi.grt" --nccl --top 0 --format json
report devices.json report "$work/multi.grt" --devices --format json
report nvlink.jsonl parse "$work/multi.grt" --filter type=nvlink_sample --format json
report comms.jsonl parse "$work/multi.grt" --filter type=nccl_comm --format json
report jobs.json report "$work/multi.grt" --jobs --format json
report links.jsonl parse "$work/multi.grt" --filter type=gpu_link --format json
report copies.json report "$work/multi.grt" --copies --format json
report unsupported.jsonl parse "$work/multi.grt" --filter type=unsupported_probe --format json
report status.jsonl parse "$work/multi.grt" --filter type=source_status --format json
bounded 30 "$G" export "$work/multi.grt" -o "$work/multi.pftrace" >/dev/null 2>>"$work/reports.err" &&
	ok "export to Perfetto exits 0" || fail "export to Perfetto exits 0"
sed -n '/== devices ==/,/^== /p' "$work/report.txt" | head -12
sed -n '/^waits/,+4p' "$work/report.txt"
grep -A6 '^verdict per device' "$work/report.txt" | head -8

bounded 30 python3 "$HERE/gpu_multi_check.py" "$work" "$LATE_RANK" "$LATE_MS" "$smi_links" >"$work/checks.txt" 2>&1
cat "$work/checks.txt"
passed=$((passed + $(grep -c '^ok - ' "$work/checks.txt")))
failed=$((failed + $(grep -c '^FAIL - ' "$work/checks.txt")))
grep -q '^ok - \|^FAIL - ' "$work/checks.txt" || fail "the checks ran ($(tail -1 "$work/checks.txt"))"
nvlink_line=$(grep -m1 'NVLink' "$work/checks.txt" | sed 's/^[a-zA-Z]* - //')
[ "$failed" -eq 0 ]
