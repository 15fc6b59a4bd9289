#!/bin/bash
# Several fake GPUs: context and device records, devices and peer copies in the report, NCCL ranks waiting.
set -u
BUILD=${1:?usage: multigpu.sh BUILD_DIR}
. tests/e2e/lib/cuda.bash

NCCL=$BUILD/fixtures/fake_nccl/libnccl.so.2

# ---- one process, three devices (tests/workloads/cuda_multi.c) ----
"$GRT" record -o "$tmp/multi.grt" -s cuda --libcuda "$FAKE" -- "$WL/cuda_multi" >"$tmp/out" 2>"$tmp/err"
check "record cuda_multi exits 0" test $? -eq 0
"$GRT" parse "$tmp/multi.grt" --format json >"$tmp/multi.json" 2>"$tmp/err"
if python3 - "$tmp/multi.json" <<'PY' 2>"$tmp/py_err"; then
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
ctx = [(r["op"], r["ctx"], r["device"]) for r in recs if r["type"] == "context"]
assert ctx == [("retain", 0xb0000, 0), ("retain", 0xb1000, 1), ("retain", 0xb2000, 2),
               ("create", 0xc0000, 0), ("set", 0xb1000, -1), ("push", 0xb2000, -1),
               ("pop", 0xb2000, -1), ("set", 0xb0000, -1)], ctx
dev = [(r["device"], r["pci_bus_id"], r["uuid"]) for r in recs if r["type"] == "device"]
assert dev[0] == (0, "0000:18:00.0", None) and dev[1] == (0, None, "GPU-10111213-1415-1617-1819-1a1b1c1d1e1f"), dev
assert dev[4] == (2, "0000:3a:00.0", None), dev
peers = [(r["dst_ctx"], r["src_ctx"], r["bytes"], r["async"]) for r in recs
         if r["type"] == "memcpy" and r["kind"] == "Peer"]
assert peers == [(0xb1000, 0xb0000, 1 << 20, 0), (0xb0000, 0xb1000, 2 << 20, 1)], peers
PY
	ok "parse: context, device and peer copy records"
else
	fail "parse: context, device and peer copy records: $(tail -n 1 "$tmp/py_err")"
fi
"$GRT" report "$tmp/multi.grt" --devices --copies >"$tmp/report" 2>"$tmp/err"
check "report --devices exits 0" test $? -eq 0
check "device 0: bus id, uuid, 3 launches, 1 sync" grep -q '^  0      0000:18:00.0   GPU-10111213-1415-1617-1819-1a1b1c1d1e1f      1         3       0        0      1$' "$tmp/report"
check "device 1: 3 launches, both peer copies issued there" grep -q '^  1      0000:29:00.0   GPU-20212223-2425-2627-2829-2a2b2c2d2e2f      1         3       2        0      1$' "$tmp/report"
check "device 2: the pushed launch" grep -q '^  2      0000:3a:00.0   GPU-30313233-3435-3637-3839-3a3b3c3d3e3f      1         1       0        0      0$' "$tmp/report"
check "peer copy 0 -> 1" grep -q '^  0 -> 1     ?             1      1048576        1 .*       0       0$' "$tmp/report"
check "peer copy 1 -> 0" grep -q '^  1 -> 0     ?             1      2097152        0         -        1       0$' "$tmp/report"
"$GRT" report "$tmp/multi.grt" --jobs --format json >"$tmp/jobs.json" 2>"$tmp/err"
check "jobs per device: 3, 3, 1 launches" python3 -c '
import json, sys, collections
jobs = json.load(open(sys.argv[1]))["jobs"]["jobs"]
n = collections.Counter(j["device"] for j in jobs if j["name"] == "step")
assert n == {0: 3, 1: 3, 2: 1}, n' "$tmp/jobs.json"

"$GRT" export "$tmp/multi.grt" --format json -o "$tmp/multi.trace.json" 2>"$tmp/err"
check "export: peer copies name their devices" test "$(grep -o '"copy":"[^"]*Peer device [0-9] -> [0-9]"' "$tmp/multi.trace.json" | tr '\n' ' ')" = '"copy":"1048576 bytes Peer device 0 -> 1" "copy":"2097152 bytes Peer device 1 -> 0" '

# ---- the link of each peer pair: the fake NVML's three GPUs (0-1 NVLink, 1-2 PCIe, 0-2 no P2P) ----
FAKE_NVML_TOPOLOGY=three GRTRACE_NVML_LIBRARY=$BUILD/fixtures/libnvidia-ml.so.1 GRTRACE_PCIE_INTERVAL_MS=20 \
	"$GRT" record -o "$tmp/links.grt" -s cuda,pcie --libcuda "$FAKE" -- "$WL/cuda_multi" all-pairs >"$tmp/out" 2>"$tmp/err"
check "record -s cuda,pcie of every pair exits 0" test $? -eq 0
"$GRT" parse "$tmp/links.grt" --filter type=gpu_link --format json >"$tmp/links.jsonl" 2>"$tmp/err"
check "parse: a gpu_link record per ordered pair, as NVML said" python3 -c '
import json, sys
got = sorted((r["device"], r["peer_device"], r["pci"], r["peer_pci"], r["nvlink_p2p"], r["pcie_read_p2p"],
              r["topology"], r["nvlinks"]) for r in map(json.loads, open(sys.argv[1])))
a, b, c = "0000:18:00.0", "0000:29:00.0", "0000:3a:00.0"
no = "not_supported"
want = [(0, 1, a, b, "ok", "ok", "PXB", 2), (0, 2, a, c, no, no, "SYS", 0), (1, 0, b, a, "ok", "ok", "PXB", 2),
        (1, 2, b, c, no, "ok", "PHB", 0), (2, 0, c, a, no, no, "SYS", 0), (2, 1, c, b, no, "ok", "PHB", 0)]
assert got == want, got' "$tmp/links.jsonl"
"$GRT" report "$tmp/links.grt" --copies >"$tmp/report" 2>"$tmp/err"
check "report --copies exits 0" test $? -eq 0
check "0 -> 1 over NVLink" grep -q '^  0 -> 1     nvlink        1      1048576        1 .*       0       0$' "$tmp/report"
check "1 -> 0 over NVLink" grep -q '^  1 -> 0     nvlink        1      2097152        0         -        1       0$' "$tmp/report"
check "1 -> 2 over PCIe" grep -q '^  1 -> 2     pcie          1         4096        1 .*       0       0$' "$tmp/report"
check "0 -> 2 without P2P" grep -q '^  0 -> 2     none          1         8192        1 .*       0       0$' "$tmp/report"
"$GRT" report "$tmp/links.grt" --devices >"$tmp/report" 2>"$tmp/err"
check "report --devices: the links between devices as a matrix" test "$(sed -n '/^links between devices/,$p' "$tmp/report" | tail -n +2)" = "$(printf '         0     1     2\n  0      X     NV2   SYS\n  1      NV2   X     PHB\n  2      SYS   PHB   X')"
"$GRT" report "$tmp/links.grt" --copies --format json >"$tmp/copies.json" 2>"$tmp/err"
check "json: the link of each pair" python3 -c '
import json, sys
peers = json.load(open(sys.argv[1]))["copies"]["peers"]
got = sorted((p["src_device"], p["dst_device"], p["link"]) for p in peers)
assert got == [(0, 1, "nvlink"), (0, 2, "none"), (1, 0, "nvlink"), (1, 2, "pcie")], got' "$tmp/copies.json"
"$GRT" export "$tmp/links.grt" --format json -o "$tmp/links.trace.json" 2>"$tmp/err"
check "export: each peer copy slice names its link" test "$(grep -o '"copy":"[^"]*Peer device [0-9] -> [0-9]","link":"[a-z?]*"' "$tmp/links.trace.json" | tr '\n' ' ')" = \
	'"copy":"1048576 bytes Peer device 0 -> 1","link":"nvlink" "copy":"2097152 bytes Peer device 1 -> 0","link":"nvlink" "copy":"4096 bytes Peer device 1 -> 2","link":"pcie" "copy":"8192 bytes Peer device 0 -> 2","link":"none" '
"$GRT" report "$tmp/multi.grt" --copies --format json >"$tmp/copies.json" 2>"$tmp/err"
check "json: no pcie source, no topology: every link null" python3 -c '
import json, sys
peers = json.load(open(sys.argv[1]))["copies"]["peers"]
assert [p["link"] for p in peers] == [None, None], peers' "$tmp/copies.json"
check "export: without topology the slice says ?" test "$(grep -o '"link":"[^"]*"' "$tmp/multi.trace.json" | sort | uniq -c | tr -s ' ')" = ' 2 "link":"?"'
# an NVML from before the topology functions: the links stay unknown, never "pcie"
FAKE_NVML_TOPOLOGY=three GRTRACE_NVML_LIBRARY=$BUILD/fixtures/old_nvml/libnvidia-ml.so.1 GRTRACE_PCIE_INTERVAL_MS=20 \
	"$GRT" record -o "$tmp/old.grt" -s cuda,pcie --libcuda "$FAKE" -- "$WL/cuda_multi" all-pairs >"$tmp/out" 2>"$tmp/err"
check "record with an old NVML exits 0" test $? -eq 0
"$GRT" report "$tmp/old.grt" --copies >"$tmp/report" 2>"$tmp/err"
"$GRT" report "$tmp/old.grt" --devices >"$tmp/devices" 2>"$tmp/err"
check "old NVML: every cell of the matrix unknown" test "$(sed -n '/^links between devices/,$p' "$tmp/devices" | grep -c '^  [0-2]      [X?]     [X?]     [X?]$')" -eq 3
check "old NVML: all four pairs unknown" test "$(grep -c '^  [0-2] -> [0-2]     ?  ' "$tmp/report")" -eq 4
check "old NVML: the trace says why" test "$("$GRT" parse "$tmp/old.grt" --filter type=unsupported_probe --format json | grep -c '"probe":"nvml:gpu topology"')" -eq 1

# ---- NVLink per link through the fake NVML (GPU 1 has two links) ----
GRTRACE_NVML_LIBRARY=$BUILD/fixtures/libnvidia-ml.so.1 GRTRACE_PCIE_INTERVAL_MS=20 \
	"$GRT" record -o "$tmp/nvlink.grt" -s pcie -- sleep 0.4 >"$tmp/out" 2>"$tmp/err"
check "record -s pcie with the fake NVML exits 0" test $? -eq 0
links=$("$GRT" parse "$tmp/nvlink.grt" --filter type=nvlink_sample --format json | python3 -c '
import json, sys
print(sorted({(r["device"], r["link"]) for r in map(json.loads, sys.stdin)}))')
check "nvlink samples of GPU 1, links 0 and 1 ($links)" test "$links" = "[(1, 0), (1, 1)]"
"$GRT" export "$tmp/nvlink.grt" --format json -o "$tmp/nvlink.json" 2>"$tmp/err"
check "export: a counter per NVLink link" test "$(grep -o '"name":"NVLink [0-9] throughput"' "$tmp/nvlink.json" | sort -u | wc -l)" -eq 2

# ---- one process per rank, rank 1 late by 300 ms before the second all-reduce ----
"$GRT" record -o "$tmp/nccl.grt" -s cuda,nccl --libcuda "$FAKE" --libnccl "$NCCL" -- \
	"$WL/nccl_ranks" 3 1 300 >"$tmp/out" 2>"$tmp/err"
check "record nccl_ranks exits 0" test $? -eq 0
"$GRT" report "$tmp/nccl.grt" --nccl >"$tmp/nccl" 2>"$tmp/err"
check "report --nccl exits 0" test $? -eq 0
for r in 0 1 2; do
	check "rank $r: device $r, 3 collectives, 3 kernels" grep -q "^  0x[0-9a-f]*    $r     3 *[0-9]* *$r           3    12.00 MiB        3 " "$tmp/nccl"
done
check "the all-reduce kernel is named" grep -q '^  all-reduce             9 calls    36.00 MiB  kernel ncclDevKernel_AllReduce_Sum_f32_RING_LL$' "$tmp/nccl"
first=$(grep -A2 '^waits' "$tmp/nccl" | sed -n 2,3p)
if echo "$first" | grep -q "^  rank [02]'s all-reduce #2 waited [0-9.]* ms for rank 1 " &&
	[ "$(echo "$first" | sed -n 's/.*waited \([0-9]*\)\..* ms.*/\1/p' | sort -n | head -1)" -ge 150 ]; then
	ok "the two longest waits: ranks 0 and 2 waited for rank 1 in all-reduce #2 (>= 150 ms of 300)"
else
	fail "the two longest waits name rank 1 and all-reduce #2: $first"
fi

"$GRT" report "$tmp/nccl.grt" --nccl --top 0 --format json >"$tmp/nccl.json" 2>"$tmp/err"
"$GRT" parse "$tmp/nccl.grt" --filter type=nccl_coll --format json >"$tmp/colls.json" 2>>"$tmp/err"
check "json: every wait's entered_ns is its rank's entry into that collective" python3 -c '
import json, sys
waits = json.load(open(sys.argv[1]))["nccl"]["waits"]
ranks = {r["pid"]: r["rank"] for r in json.load(open(sys.argv[3]))["nccl"]["ranks"]}
entries = {}
for line in open(sys.argv[2]):
    c = json.loads(line)
    entries.setdefault(ranks[c["pid"]], []).append(c["ts_ns"])
assert len(waits) == 6, waits
for w in waits:
    assert w["entered_ns"] == entries[w["rank"]][w["index"] - 1], (w, entries)
' "$tmp/nccl.json" "$tmp/colls.json" "$tmp/nccl.json"

# ---- the same run in report --jobs: the NCCL kernels' jobs named by their collective, ranks 0 and 2 waiting ----
"$GRT" report "$tmp/nccl.grt" --jobs >"$tmp/jobs" 2>"$tmp/err"
check "report --jobs exits 0" test $? -eq 0
for r in 0 2; do
	line=$(grep "^    device $r (rank $r): [0-9.]* ms in collectives waiting for rank 1 (device 1): all-reduce #2" "$tmp/jobs")
	check "verdict per device: device $r (rank $r) waited >= 150 ms for rank 1 in all-reduce #2: $line" \
		test "$(echo "$line" | sed -n 's/.*: \([0-9]*\)\.[0-9]* ms in.*/\1/p')" -ge 150
	check "collective waits: rank $r's all-reduce #2 job waited for rank 1" \
		grep -q "^  job [0-9]* all-reduce #2 rank $r/3 (pid [0-9]*, device $r): waited [0-9.]* ms for rank 1 (device 1), host entry times$" "$tmp/jobs"
done
"$GRT" report "$tmp/nccl.grt" --jobs --format json >"$tmp/jobs.json" 2>"$tmp/err"
check "json: 3 named jobs per rank, ranks 0 and 2's all-reduce #2 tagged collective-wait for rank 1" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["jobs"]
named = [j for j in r["jobs"] if "collective" in j]
assert len(named) == 9, len(named)
for j in named:
    c = j["collective"]
    assert j["name"] == "%s #%d rank %d/3" % (c["op"], c["index"], c["rank"]), j
    assert j["kernel"] == "ncclDevKernel_AllReduce_Sum_f32_RING_LL", j
    assert j["device"] == c["rank"], j
assert sorted((j["collective"]["rank"], j["collective"]["index"]) for j in named) == \
    [(r, k) for r in range(3) for k in (1, 2, 3)]
second = {j["collective"]["rank"]: j for j in named if j["collective"]["index"] == 2}
assert second[1]["collective"]["wait"] is None and "collective-wait" not in second[1]["tags"], second[1]
for rank in (0, 2):
    w = second[rank]["collective"]["wait"]
    assert "collective-wait" in second[rank]["tags"], second[rank]
    assert w["waited_for"] == 1 and w["waited_for_device"] == 1 and w["basis"] == "host", w
    assert w["ns"] >= 150000000, w
    dev = [d for d in r["devices"] if d["device"] == rank][0]
    assert any(p["waited_for"] == 1 and p["op"] == "all-reduce" and p["index"] == 2 and
               p["ns"] >= 150000000 for p in dev["collective_waits"]), dev
' "$tmp/jobs.json"

# ---- the tables and keys of these traces are the documented ones (docs/report.md, docs/tracetest.md) ----
python3 tests/tools/check_doc_tables.py "$GRT" "$tmp/multi.grt" "$tmp/nccl.grt" "$tmp/nvlink.grt" "$tmp/links.grt" >"$tmp/doc_tables" 2>&1 ||
	fail "check_doc_tables.py on the multi-GPU traces"
grep '^FAIL' "$tmp/doc_tables"
check "tables and keys of the multi-GPU traces are documented ($(grep -c '^ok' "$tmp/doc_tables") checks)" \
	test "$(grep -c '^FAIL' "$tmp/doc_tables")" -eq 0

# ---- a libnccl that cannot be probed: the source says so in one line and the recording goes on ----
"$GRT" record -o "$tmp/none.grt" -s cuda,nccl --libcuda "$FAKE" --libnccl "$FAKE" -- \
	"$WL/cuda_multi" >"$tmp/out" 2>"$tmp/err"
check "record with an unprobeable libnccl exits 0" test $? -eq 0
check "one line says nothing was probed" test "$(grep -c "nccl: $FAKE: 0 of 11 entry points probed" "$tmp/err")" -eq 1

# ---- --libnccl naming no file: a usage error before anything starts ----
"$GRT" record -o "$tmp/bad.grt" -s cuda,nccl --libcuda "$FAKE" --libnccl "$tmp/missing/libnccl.so.2" -- \
	"$WL/cuda_multi" >"$tmp/out" 2>"$tmp/err"
check "--libnccl of a missing file exits 2" test $? -eq 2
check "one line names the option and the fix" test "$(cat "$tmp/err")" = \
	"grtrace: record: bad value '$tmp/missing/libnccl.so.2' for --libnccl: No such file or directory; give the libnccl.so.2 the program loads"
check "and writes no trace" test ! -e "$tmp/bad.grt"
exit $failed
