#!/bin/bash
# NCCL beyond one communicator of collectives: ncclCommSplit and ncclSend/ncclRecv through the
# nccl source's uprobes on the fake libnccl (tests/workloads/nccl_groups.c), and who waited.
set -u
BUILD=${1:?usage: nccl_groups.sh BUILD_DIR}
. tests/e2e/lib/cuda.bash

NCCL=$BUILD/fixtures/fake_nccl/libnccl.so.2

"$GRT" record -o "$tmp/g.grt" -s cuda,nccl --libcuda "$FAKE" --libnccl "$NCCL" -- \
	"$WL/nccl_groups" 300 150 >"$tmp/out" 2>"$tmp/err"
check "record nccl_groups exits 0" test $? -eq 0
check "the source probed the 10 entry points the fake has (of 11)" \
	grep -q "\"message\":\"$NCCL: 10 of 11 entry points probed\"" <("$GRT" parse "$tmp/g.grt" --format json)
"$GRT" parse "$tmp/g.grt" --format json >"$tmp/g.json" 2>"$tmp/err"
"$GRT" report "$tmp/g.grt" --nccl --top 0 --format json >"$tmp/r.json" 2>"$tmp/err"
check "report --nccl --format json exits 0" test $? -eq 0

check "records: 4 splits with parent, color and key; 4 sends and 4 receives with their peers" python3 - "$tmp/g.json" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
comms = [e for e in ev if e["type"] == "nccl_comm"]
world = {e["pid"]: e for e in comms if "parent" not in e}
splits = {e["pid"]: e for e in comms if "parent" in e}
assert len(world) == 4 and len(splits) == 4, comms
rank_of = {pid: e["rank"] for pid, e in world.items()}
for pid, s in splits.items():
    r = rank_of[pid]
    assert s["parent"] == world[pid]["comm"] and s["color"] == r % 2 and s["key"] == -r, s
    assert s["comm"] and s["ret"] == 0 and s["comm_id"] == 0 and s["nranks"] == 0, s
p2p = sorted((rank_of[e["pid"]], e["op"], e["root"], e["bytes"]) for e in ev
             if e["type"] == "nccl_coll" and e["op"] in ("send", "recv"))
assert p2p == sorted([(r, "send", (r + 1) % 4, 262144) for r in range(4)] +
                     [(r, "recv", (r + 3) % 4, 262144) for r in range(4)]), p2p
PY

check "report: the halves numbered by key, the late ranks named" python3 - "$tmp/r.json" "$tmp/g.json" <<'PY'
import json, sys
nccl = json.load(open(sys.argv[1]))["nccl"]
ev = [json.loads(l) for l in open(sys.argv[2])]
world_rank = {e["pid"]: e["rank"] for e in ev if e["type"] == "nccl_comm" and "parent" not in e}
rows = nccl["ranks"]
world = [r for r in rows if r["nranks"] == 4]
halves = [r for r in rows if r["nranks"] == 2]
assert len(world) == 4 and len(halves) == 4, rows
assert len({r["comm_id"] for r in world}) == 1 and len({r["comm_id"] for r in halves}) == 2, rows
# parent ranks {0, 2} and {1, 3}, each numbered by key -r: the higher parent rank is rank 0
for r in halves:
    p = world_rank[r["pid"]]
    mate = next(m for m in halves if m["comm_id"] == r["comm_id"] and m is not r)
    assert world_rank[mate["pid"]] % 2 == p % 2, (r, mate)
    assert r["rank"] == (0 if p > world_rank[mate["pid"]] else 1), (r, p)
    assert r["collectives"] == 2 and r["p2p"] == 0, r
assert all(r["collectives"] == 1 and r["p2p"] == 2 for r in world), world
ops = {o["op"]: o for o in nccl["ops"]}
assert ops["send"]["calls"] == 4 and ops["recv"]["calls"] == 4, ops
assert ops["send"]["kernel"] == ops["recv"]["kernel"] == "ncclDevKernel_SendRecv", ops
assert ops["all-reduce"]["calls"] == 12, ops
def wait(op, rank, for_rank, comm_id):
    return [w for w in nccl["waits"] if w["op"] == op and w["rank"] == rank and
            w["waited_for"] == for_rank and w["comm_id"] == comm_id]
odd = next(r["comm_id"] for r in halves if world_rank[r["pid"]] == 3)
# the second all-reduce may show a wait of microseconds either way (whoever the scheduler ran
# first): the 300 ms one is the first's
w = [x for x in wait("all-reduce", 1, 0, odd) if x["ns"] >= 1e6]
assert len(w) == 1 and w[0]["index"] == 1 and w[0]["ns"] >= 250e6, (w, nccl["waits"])
wid = world[0]["comm_id"]
for op, rank in (("send", 1), ("recv", 3)):
    w = wait(op, rank, 2, wid)
    assert len(w) == 1 and w[0]["index"] == 1 and 120e6 <= w[0]["ns"] < 250e6, (op, w, nccl["waits"])
PY
"$GRT" report "$tmp/g.grt" --nccl >"$tmp/r.txt" 2>"$tmp/err"
check "text: rank 3's receive named as waiting for rank 2" \
	grep -q "^  rank 3's recv #1 waited [0-9.]* ms for rank 2 (communicator 0x" "$tmp/r.txt"
check "text: the send/recv kernel under both ops" \
	test "$(grep -c '^  \(send\|recv\) .*kernel ncclDevKernel_SendRecv$' "$tmp/r.txt")" -eq 2
python3 tests/tools/check_doc_tables.py "$GRT" "$tmp/g.grt" >"$tmp/doc_tables" 2>&1 ||
	fail "check_doc_tables.py on the split and point-to-point trace"
grep '^FAIL' "$tmp/doc_tables"
check "its record fields and report tables are the documented ones ($(grep -c '^ok' "$tmp/doc_tables") checks)" \
	test "$(grep -c '^FAIL' "$tmp/doc_tables")" -eq 0
exit $failed
