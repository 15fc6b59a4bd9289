#!/bin/bash
# The kernel sources through `grtrace record` and `parse --format json`: exact syscall counts,
# NVIDIA ioctls decoded, a known sleep off-CPU, NVML samples, and one-line messages where a
# source cannot work here.
set -u
BUILD=${1:-build}
G=$BUILD/grtrace
W=$BUILD/fixtures/kernel_workload
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0

pass() { echo "ok - $1"; }
fail() { echo "FAIL - $1"; fails=$((fails + 1)); }

# Character nodes named like NVIDIA's with /dev/null's numbers: they open without the driver,
# and the decoder keys on "character device named nvidia*". null and the regular file nvidia1
# must not be decoded.
mkdir "$T/dev"
for n in nvidiactl nvidia0 nvidia-uvm nvidia-uvm-tools null; do mknod "$T/dev/$n" c 1 3; done
touch "$T/dev/nvidia1"

# json_check NAME TRACE PYTHON: runs PYTHON with ev = the trace's events (a list of dicts).
json_check() {
	local name=$1 trace=$2 code=$3
	if $G parse --format json "$trace" | python3 -c "
import json, sys
ev = [json.loads(l) for l in sys.stdin]
def count(**kw):
    return sum(all(e.get(k) == v for k, v in kw.items()) for e in ev)
$code
" 2>"$T/py.err"; then pass "$name"; else fail "$name: $(tail -1 "$T/py.err")"; fi
}

$G record -f -s syscall -o "$T/s.grt" -- $W getppid:100 "nvioctl:$T/dev" 2>"$T/err" ||
	fail "record_syscall: $(cat "$T/err")"
json_check syscall_exact_counts "$T/s.grt" '
assert count(type="syscall", name="getppid") == 100, count(type="syscall", name="getppid")
assert count(type="syscall", name="ioctl") == 37
assert count(type="syscall", name="exit_group", state="no-return") == 1
assert all(e["ret"] == -25 for e in ev if e.get("name") == "ioctl")'
json_check nv_ioctl_decoded "$T/s.grt" '
assert count(type="nv_ioctl") == 34, count(type="nv_ioctl")
assert count(type="nv_ioctl", device="nvidiactl", op="NV_ESC_RM_ALLOC", **{"class": 0xc86f}, handle=0x5c000001) == 5
assert count(type="nv_ioctl", device="nvidiactl", op="NV_ESC_RM_ALLOC", **{"class": 0x2080}, handle=0x5c000002) == 3
assert count(type="nv_ioctl", device="nvidiactl", op="NV_ESC_RM_CONTROL", cmd=0x20800a2b, xfer=0) == 12
assert count(type="nv_ioctl", device="nvidia-gpu", path="nvidia0", op="NV_ESC_RM_CONTROL", cmd=0x2080012b, xfer=1) == 4
assert count(type="nv_ioctl", op="NV_ESC_RM_FREE", handle=0x5c000001, rm_status=0x57) == 2
assert count(type="nv_ioctl", device="nvidia-uvm", op="UVM_INITIALIZE") == 1
assert count(type="nv_ioctl", device="nvidia-uvm", op="UVM_REGISTER_GPU") == 6
assert count(type="nv_ioctl", device="nvidia-uvm-tools", op="UVM_TOOLS_INIT_EVENT_TRACKER") == 1
assert count(type="nv_ioctl", path="null") == 0 and count(type="nv_ioctl", path="nvidia1") == 0
calls = {e["call_id"]: e for e in ev if e["type"] == "syscall"}
assert all(calls[e["call_id"]]["name"] == "ioctl" for e in ev if e["type"] == "nv_ioctl")'

$G record -f -s syscall --syscalls getppid -o "$T/f.grt" -- $W getppid:100 2>"$T/err" ||
	fail "record_filtered: $(cat "$T/err")"
json_check syscalls_filter "$T/f.grt" '
assert count(type="syscall") == 100 and count(type="syscall", name="getppid") == 100'

# A call still blocked when recording stops is recorded as unfinished, not lost. (Under
# emulation the workload may take longer than 0.4 s to reach its sleep: GRT_E2E_STOP_S.)
$G record -f -s syscall --duration "${GRT_E2E_STOP_S:-0.4}" -o "$T/u.grt" -- $W sleep:3000 2>"$T/err" || fail "record_unfinished: $(cat "$T/err")"
json_check syscall_unfinished_at_stop "$T/u.grt" '
assert count(type="syscall", name="clock_nanosleep", state="unfinished") == 1
assert count(type="syscall", state="unfinished") == 1'

$G record -f -s syscall --syscalls ioctl,nosuchcall -o "$T/x.grt" -- true 2>"$T/err"
rc=$?
if [ $rc -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "unknown syscall 'nosuchcall'" "$T/err"; then
	pass unknown_syscall_usage_error
else
	fail "unknown_syscall_usage_error (rc=$rc: $(cat "$T/err"))"
fi

$G record -f -s sched -o "$T/z.grt" -- $W sleep:200 2>"$T/err" || fail "record_sched: $(cat "$T/err")"
json_check sched_sleep_offcpu "$T/z.grt" '
long = [e for e in ev if e["type"] == "offcpu" and e["offcpu_ns"] >= 195e6]
assert len(long) == 1, [e["offcpu_ns"] for e in ev if e["type"] == "offcpu"]
assert long[0]["offcpu_ns"] <= 260e6 and long[0]["prev_state"] & 1, long[0]'

$G record -f -s fence -o "$T/d.grt" -- true 2>"$T/err" || fail "record_fence: $(cat "$T/err")"
json_check fence_attaches "$T/d.grt" 'assert count(type="source_status", source="fence", status=0) == 1'

# No NVIDIA driver here: one line that says why, and no trace pretending otherwise.
$G record -f -s xid -o "$T/n.grt" -- true 2>"$T/err"
rc=$?
if [ $rc -ne 0 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "no nvidia:nvidia_dev_xid tracepoint here" "$T/err"; then
	pass xid_unavailable_one_line
else
	fail "xid_unavailable_one_line (rc=$rc: $(cat "$T/err"))"
fi

if [ -e /sys/bus/event_source/devices/kprobe ]; then
	pass "pcie cases skipped: this kernel has kprobes"
else
	GRTRACE_NVML_LIBRARY=$BUILD/fixtures/libnvidia-ml.so.1 GRTRACE_PCIE_INTERVAL_MS=20 \
		$G record -f -s pcie -o "$T/p.grt" -- sleep 0.3 2>"$T/err" || fail "record_pcie: $(cat "$T/err")"
	json_check pcie_nvml_samples "$T/p.grt" '
assert count(type="unsupported_probe", source="pcie", probe="kprobe:pci_{bus,user}_{read,write}_config_{byte,word,dword}") == 1
assert count(type="unsupported_probe", source="pcie", probe="fexit:pci_{bus,user}_{read,write}_config_{byte,word,dword}") == 1
assert count(type="unsupported_probe", source="pcie", probe="kprobe:nvlink_*") == 1
assert count(type="pcie_sample", device=0, pci="0000:3b:00.0", pcie_tx_bps=1024000, pcie_rx_bps=256000000) >= 5
assert count(type="pcie_sample", device=1, pci="0000:86:00.0", pcie_tx_bps=5120) >= 5'
	GRTRACE_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 $G record -f -s pcie -o "$T/q.grt" -- true 2>"$T/err"
	rc=$?
	if [ $rc -ne 0 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "no kprobes in this kernel.*no NVML" "$T/err"; then
		pass pcie_unavailable_one_line
	else
		fail "pcie_unavailable_one_line (rc=$rc: $(cat "$T/err"))"
	fi
fi

[ $fails -eq 0 ]
