#!/bin/bash
# The pcie source's config-space probes on a stock kernel: N reads of the virtio-gpu function's
# config space through sysfs give exactly N events with the offsets, sizes and values the
# program read, and its one write; for each variant this kernel has (fexit, chosen first, and
# kprobes), and the kernel's own accessors during a bus rescan.
set -u
BUILD=${1:-build}
. tests/vm/guest/common.bash
G=$BUILD/grtrace
N=60

gpu=
for d in /sys/bus/pci/devices/*; do
	[ "$(cat "$d/vendor")" = 0x1af4 ] && [ "$(cat "$d/device")" = 0x1050 ] && gpu=$d
done
check "the virtio-gpu PCI function is there" [ -n "$gpu" ] || exit 1
bdf=$(basename "$gpu")

# record_variant NAME ENV_VALUE: records the program's accesses with GRTRACE_PCIE_PROBES=ENV_VALUE
record_variant() {
	GRTRACE_PCIE_PROBES=$2 "$G" record -s pcie -o "$tmp/$1.grt" -- \
		"$BUILD/fixtures/vm/pci_config_access" "$gpu/config" $N >"$tmp/$1.out" 2>"$tmp/$1.err"
	record_ok "$1: record status 0" "$tmp/$1.err" $?
	"$G" parse --format json "$tmp/$1.grt" >"$tmp/$1.json"
}

# compare NAME: the program's accesses are the recorded ones of its pid, in order
compare() {
	python3 - "$tmp/$1.json" "$tmp/$1.out" "$bdf" "$2" "$N" <<'PY'
import json, sys
events = [json.loads(l) for l in open(sys.argv[1])]
program = [l.split() for l in open(sys.argv[2])]
bdf, variant = sys.argv[3], sys.argv[4]
status = [e for e in events if e["type"] == "source_status" and e["source"] == "pcie"]
assert [s["message"] for s in status] == ["attached: " + variant + ":pci_{bus,user}_{read,write}_config_{byte,word,dword}"], status
pid = next(e["pid"] for e in events if e["type"] == "process" and e["event"] == "start")
mine = [e for e in events if e["type"] == "pci_config" and e["pid"] == pid]
got = [(e["access"], e["where"], e["size"], e["value"], e["pci"], e["via"], e.get("failed", 0)) for e in mine]
want = [(op, int(off, 16), int(size), int(value, 16), bdf, "user", 0) for op, off, size, value in program]
assert len(program) == int(sys.argv[5]) + 2, len(program)
assert got == want, (len(got), len(want), [(g, w) for g, w in zip(got, want) if g != w][:3])
PY
}

record_variant fexit ""
check "fexit: attached first, and $N reads + 1 write with their offsets, sizes and values" \
	compare fexit fexit
if [ -e /sys/bus/event_source/devices/kprobe ]; then
	record_variant kprobe kprobe
	check "kprobe: $N reads + 1 write, the same as through fexit" compare kprobe kprobe
	check "kprobe: fexit recorded as left out" grep -q '"probe":"fexit:pci_.*left out' <(
		"$G" parse --format json "$tmp/kprobe.grt")
fi

# the kernel's accessors (pci_bus_*): a rescan reads every slot's vendor id
GRTRACE_PCIE_PROBES= "$G" record -s pcie -o "$tmp/rescan.grt" -- sh -c 'echo 1 >/sys/bus/pci/rescan' \
	2>"$tmp/rescan.err"
record_ok "rescan: record status 0" "$tmp/rescan.err" $?
check "rescan: kernel reads of vendor ids (offset 0) on bus 0" python3 -c '
import json, sys
ev = [json.loads(l) for l in sys.stdin]
reads = [e for e in ev if e["type"] == "pci_config" and e["via"] == "kernel" and e["access"] == "read"]
vendor = [e for e in reads if e["where"] == 0 and e["pci"].startswith("0000:00:")]
assert len(vendor) >= 4 and all("value" in e for e in vendor), (len(reads), len(vendor))
' < <("$G" parse --format json "$tmp/rescan.grt")
exit $failed
