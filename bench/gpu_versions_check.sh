#!/bin/bash
# On the GPU machine: the versions `record` now reads as data (never loading libcuda) against
# what the driver itself reports, and the NVML trust check on that machine's install.
#  1. driver version: trace header vs nvidia-smi and /proc/driver/nvidia/version;
#  2. CUDA version: trace header vs cuDriverGetVersion, called by a separate, unprivileged
#     python (the machine's own libcuda, loaded outside grtrace);
#  3. the libcuda file name the version is read from (libcuda.so.1 -> libcuda.so.<driver>);
#  4. `record -s pcie`: NVML accepted by the ownership check (or the one line saying why not).
# Usage (root): bench/gpu_versions_check.sh [DIR_WITH_GRTRACE] [OUTDIR]; prints PASS/FAIL lines.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
BIN=$(cd "${1:-$HERE/../build}" && pwd)
G=$BIN/grtrace
OUTDIR=${2:-${OUT:-/tmp}/gpu-versions}
mkdir -p "$OUTDIR"
fails=0
result() { # PASS|FAIL text
	echo "$1 - $2" | tee -a "$OUTDIR/summary.txt"
	[ "$1" = PASS ] || fails=$((fails + 1))
}

lib=
for d in /usr/local/nvidia/lib64 /usr/lib/x86_64-linux-gnu /lib/x86_64-linux-gnu /lib64; do
	[ -e "$d/libcuda.so.1" ] && { lib=$d/libcuda.so.1; break; }
done
[ -n "$lib" ] || { echo "no libcuda.so.1 found"; exit 1; }
echo "libcuda: $lib -> $(readlink -f "$lib")" | tee "$OUTDIR/summary.txt"
head -1 /proc/driver/nvidia/version | tee -a "$OUTDIR/summary.txt"

"$G" record -f --libcuda "$lib" -o "$OUTDIR/t.grt" -- true 2>"$OUTDIR/record.err"
"$G" report "$OUTDIR/t.grt" --format json >"$OUTDIR/report.json" 2>>"$OUTDIR/record.err"
hdr_driver=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["trace"]["driver"])' "$OUTDIR/report.json")
hdr_cuda=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["trace"]["cuda"])' "$OUTDIR/report.json")
smi_driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)
# the driver's own answer, from a process that is not grtrace and runs as nobody
real_cuda=$(setpriv --reuid=65534 --regid=65534 --clear-groups python3 -c '
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
v = ctypes.c_int(0)
rc = lib.cuDriverGetVersion(ctypes.byref(v))
print("%d.%d" % (v.value // 1000, v.value % 1000 // 10) if rc == 0 else "error %d" % rc)' "$lib")
echo "header: driver '$hdr_driver' cuda '$hdr_cuda'; nvidia-smi driver '$smi_driver'; cuDriverGetVersion '$real_cuda'" |
	tee -a "$OUTDIR/summary.txt"
[ "$hdr_driver" = "$smi_driver" ] && result PASS "driver version read as data" ||
	result FAIL "driver version: header '$hdr_driver', nvidia-smi '$smi_driver'"
[ "$hdr_cuda" = "$real_cuda" ] && result PASS "CUDA version read from libcuda's data" ||
	result FAIL "CUDA version: header '$hdr_cuda', cuDriverGetVersion '$real_cuda'"
name=$(basename "$(readlink -f "$lib")")
[ "$name" = "libcuda.so.$smi_driver" ] && result PASS "libcuda file name carries the driver version ($name)" ||
	result FAIL "libcuda file name '$name' does not carry '$smi_driver'"

"$G" record -f -s pcie -o "$OUTDIR/p.grt" -- sleep 0.5 2>"$OUTDIR/pcie.err"
rc=$?
if [ $rc -eq 0 ] && ! grep -q "refusing to load NVML" "$OUTDIR/pcie.err"; then
	result PASS "record -s pcie: NVML accepted by the ownership check"
else
	result FAIL "record -s pcie (exit $rc): $(head -1 "$OUTDIR/pcie.err")"
fi
exit $fails
