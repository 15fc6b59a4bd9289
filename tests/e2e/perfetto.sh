#!/bin/bash
# End-to-end checks of `grtrace export` in Perfetto's protobuf format: decoded with protoc against
# src/export/perfetto_subset.proto, checked by tests/tools/check_perfetto_trace.py, and compared
# with the trace itself (parse, report --jobs) and with the trace-event JSON export.
set -u
build=${1:?usage: perfetto.sh BUILD_DIR}
grtrace=$build/grtrace
check_pb=tests/tools/check_perfetto_trace.py
. tests/e2e/lib/cases.bash

command -v protoc >/dev/null || { fail "protoc is not installed (make deps)"; exit 1; }

# validate FILE DUMP: the structural check, its summary line in $tmp/check
validate() {
	if python3 "$check_pb" "$1" --dump "$2" >"$tmp/check" 2>&1; then
		ok "$(basename "$1") passes the protobuf check ($(cat "$tmp/check"))"
	else
		fail "$(basename "$1") protobuf check: $(cat "$tmp/check")"
	fi
}

# ---- small traces with known timelines ----
"$build/fixtures/perfetto_traces" "$tmp" || { fail "perfetto_traces"; exit 1; }
for name in flows nested counters instants names; do
	"$grtrace" export "$tmp/$name.grt" -o "$tmp/$name.pftrace" 2>"$tmp/err"
	check "export $name exits 0" test $? -eq 0
	validate "$tmp/$name.pftrace" "$tmp/$name.dump"
done

# py DUMPS...: runs the python on stdin with the dumps' timelines as T[0], T[1]...; ok when it asserts nothing
py() {
	local name=$1
	shift
	if python3 - "$@" >"$tmp/py_err" 2>&1; then ok "$name"; else fail "$name: $(tail -3 "$tmp/py_err")"; fi
}
PRELUDE='
import json, sys
T = [json.load(open(p)) for p in sys.argv[1:]]
def tracks(t): return {x["uuid"]: x for x in t["tracks"]}
def named(t, name): return [x for x in t["tracks"] if x["name"] == name]
def spans(x): return [(s["name"], s["start"], s["end"]) for s in x["slices"]]
'

py "flows: one arrow per launch, and one from the graph launch to each of its three nodes" \
	"$tmp/flows.dump" <<EOF
$PRELUDE
t = T[0]
by = tracks(t)
thread = [x for x in t["tracks"] if x["kind"] == "thread"]
assert [(x["pid"], x["tid"]) for x in thread] == [(500, 501), (500, 502)], thread
assert spans(thread[0]) == [("cuLaunchKernel", 1000, 2000), ("cuGraphLaunch", 3000, 4000),
    ("cuLaunchKernel", 4500, 4600), ("cuMemcpyAsync", 4700, 4800), ("cuEventRecord", 22500, 22600),
    ("cuCtxSynchronize", 23000, 30000)], spans(thread[0])
gpu = named(t, "GPU 0")
assert len(gpu) == 1 and gpu[0]["parent"] is None
lane0, lane1 = named(t, "pid 500 stream 0x10"), named(t, "pid 500 stream 0x10 (overlap 1)")
assert lane0[0]["parent"] == gpu[0]["uuid"] == lane1[0]["parent"]
assert spans(lane0[0]) == [("k1", 5000, 9000), ("a", 10000, 18000), ("c", 18000, 20000),
    ("[memcpy HtoD]", 21000, 22000)], spans(lane0[0])
assert spans(lane1[0]) == [("b", 11000, 17000)]
assert [s["categories"] for s in lane0[0]["slices"]] == [["kernel"]] * 3 + [["copy"]]
# the failed launch carries its error and starts no arrow
assert thread[0]["slices"][2]["args"] == {"ret": 700, "kernel": "k2"}, thread[0]["slices"][2]
assert thread[0]["slices"][3]["args"] == {"bytes": 4096, "direction": "HtoD"}
assert thread[0]["slices"][4]["args"] == {"stream": 0x10, "event": 0xe1}
assert "args" not in thread[0]["slices"][5]
def at(ref): return by[ref[0]]["slices" if ref[1] == "slice" else "instants"][ref[2]]
arrows = sorted((at(f["from"])["name"], at(f["to"])["name"]) for f in t["flows"])
assert arrows == [("cuGraphLaunch", "a"), ("cuGraphLaunch", "b"), ("cuGraphLaunch", "c"),
    ("cuLaunchKernel", "k1"), ("cuLaunchKernel", "p1"), ("cuMemcpyAsync", "[memcpy HtoD]")], arrows
# the block probe's launch names no device; its process ran on GPU 0 only, so the job is placed there
assert named(t, "GPU (device not recorded)") == []
probe_lane = named(t, "pid 500 stream 0x20")
assert probe_lane[0]["parent"] == gpu[0]["uuid"] and spans(probe_lane[0]) == [("p1", 26000, 27000)]
assert spans(thread[1]) == [("cuLaunchKernel", 24000, 25000), ("cuCtxSynchronize", 25500, 31000)]
# graph nodes name their launch's job as group; every GPU slice names its job
graph_job = [f["id"] for f in t["flows"] if at(f["from"])["name"] == "cuGraphLaunch"]
nodes = [s for s in lane0[0]["slices"] + lane1[0]["slices"] if s["name"] in "abc"]
assert all(s["args"]["group"] == graph_job[0] for s in nodes), nodes
assert sorted(s["args"]["job"] for s in lane0[0]["slices"] + lane1[0]["slices"]) == [1, 4, 6, 7, 8], \
    [s["args"] for s in lane0[0]["slices"] + lane1[0]["slices"]]
EOF

py "nested: a call recorded after the call it contains nests under it, times exact" \
	"$tmp/nested.dump" <<EOF
$PRELUDE
th = [x for x in T[0]["tracks"] if x["kind"] == "thread"][0]
assert [(s["name"], s["start"], s["end"], s["depth"]) for s in th["slices"]] == [
    ("cuCtxSynchronize", 1000, 5000, 0), ("cuEventRecord", 2000, 3000, 1),
    ("cuCtxSynchronize", 6000, 7000, 0)], th["slices"]
EOF
check "nested: the out-of-order start is written with its absolute clock" \
	sh -c 'protoc --decode=perfetto.protos.Trace -I src/export perfetto_subset.proto <"$1" |
		grep -c "timestamp_clock_id: 3" | grep -qx 1' _ "$tmp/nested.pftrace"

py "counters: memory in use, UVM bytes, link throughput, Xid, UVM and off-CPU events" \
	"$tmp/counters.dump" <<EOF
$PRELUDE
t = T[0]
by = tracks(t)
proc = [x for x in t["tracks"] if x["kind"] == "process" and x["pid"] == 500][0]
mem = named(t, "device memory in use")[0]
assert mem["counter"] and mem["parent"] == proc["uuid"]
assert mem["counters"] == [[1000, 1 << 20], [1600, 4 << 20], [2500, 3 << 20]], mem["counters"]
uvm = named(t, "UVM migrated")[0]
assert uvm["parent"] == proc["uuid"] and uvm["counters"] == [[3000, 4096], [4500, 8192]]
events = named(t, "UVM events")[0]
assert [(i["name"], i["ts"], i["args"]["bytes"]) for i in events["instants"]] == [
    ("UVM migration", 3000, 4096), ("UVM GPU fault", 3500, 4096), ("UVM migration", 4500, 4096)]
gpu1 = named(t, "GPU 1")[0]
for name, want in (("PCIe tx", [[8000, 1000]]), ("PCIe rx", [[8000, 2000]]),
                   ("NVLink tx", [[9000, 30000]]), ("NVLink rx", [[9000, 40000]])):
    c = named(t, name)
    assert len(c) == 1 and c[0]["parent"] == gpu1["uuid"] and c[0]["counters"] == want, (name, c)
xid = named(t, "Xid errors")[0]
assert xid["parent"] is None and xid["instants"] == [{"name": "Xid 79", "ts": 5000, "depth": 0,
    "args": {"device": 0, "message": "GPU has fallen off the bus"}}], xid["instants"]
off = named(t, "off-CPU 501")[0]
thread = by[off["parent"]]
assert (thread["kind"], thread["pid"], thread["tid"]) == ("thread", 500, 501)
assert spans(off) == [("off-CPU (preempted)", 6000, 7000), ("off-CPU (blocked)", 8000, 9000)]
EOF

py "instants: calls without a return are instants that say why" "$tmp/instants.dump" <<EOF
$PRELUDE
th = [x for x in T[0]["tracks"] if x["kind"] == "thread"][0]
assert th["slices"] == []
assert [(i["name"], i["ts"], i["args"]["note"]) for i in th["instants"]] == [
    ("cuLaunchKernel", 1000, "return not sampled"), ("cuLaunchKernel", 2000, "never returned")]
EOF

py "names: thread named by its calls, process by a later process record, odd bytes intact" \
	"$tmp/names.dump" <<EOF
$PRELUDE
t = T[0]
assert [(x["kind"], x["name"], x["pid"], x["tid"]) for x in t["tracks"]] == [
    ("process", "trainer", 700, None), ("thread", "python", 700, 701)], t["tracks"]
assert t["tracks"][1]["slices"][0]["args"]["kernel"] == 'void "quoted"\\\\kernel<\u00e9>()'
EOF

# ---- a generated trace: the protobuf against the trace and against the JSON export ----
"$build/fixtures/gen_jobs_trace" -o "$tmp/gen.grt" -n 20000 >/dev/null || { fail "generator"; exit 1; }
"$grtrace" export "$tmp/gen.grt" -o "$tmp/gen.pftrace" 2>"$tmp/err"
check "export exits 0" test $? -eq 0
check "the summary line names the format" grep -q "as Perfetto protobuf to $tmp/gen.pftrace\$" "$tmp/err"
validate "$tmp/gen.pftrace" "$tmp/gen.dump"
flows=$(sed -n 's/.* \([0-9]*\) launch flows).*/\1/p' "$tmp/err")
check "every launch flow the export counted ($flows) connects two slices" \
	grep -q " $flows flows\$" "$tmp/check"
"$grtrace" export "$tmp/gen.grt" --format json -o "$tmp/gen.json" 2>/dev/null
"$grtrace" parse "$tmp/gen.grt" --format json >"$tmp/gen.records" 2>/dev/null
"$grtrace" report "$tmp/gen.grt" --jobs --format json >"$tmp/gen.jobs" 2>/dev/null

py "every API call is a slice on its thread with its exact times; counts per thread match" \
	"$tmp/gen.dump" <<EOF
$PRELUDE
import collections
t = T[0]
threads = {(x["pid"], x["tid"]): x for x in t["tracks"] if x["kind"] == "thread"}
want = collections.defaultdict(list)
unreturned = collections.defaultdict(list)
for line in open("$tmp/gen.records"):
    r = json.loads(line)
    if "api" not in r:
        continue
    if r["api_ns"] is None:
        unreturned[(r["pid"], r["tid"])].append((r["api"], r["ts_ns"]))
    else:
        want[(r["pid"], r["tid"])].append((r["api"], r["ts_ns"], r["ts_ns"] + r["api_ns"]))
assert set(want) == set(threads), (set(want), set(threads))
for key, calls in want.items():
    assert sorted(calls) == sorted(spans(threads[key])), key
    assert sorted(unreturned[key]) == sorted((i["name"], i["ts"]) for i in threads[key]["instants"])
assert sum(len(c) for c in want.values()) > 10000
EOF

py "every job with device timing is a GPU slice with its exact START and END, on its process's stream" \
	"$tmp/gen.dump" <<EOF
$PRELUDE
t = T[0]
jobs = json.load(open("$tmp/gen.jobs"))["jobs"]["jobs"]
by = tracks(t)
got = {}
for x in t["tracks"]:
    parent = by.get(x["parent"])
    if parent and parent["kind"] == "track" and parent["name"].startswith("GPU"):
        for s in x["slices"]:
            got[s["args"]["job"]] = (s["name"], s["start"], s["end"], x["name"].split()[1])
timed = [j for j in jobs if j["start_ns"] is not None]
assert len(got) == len(timed) > 5000, (len(got), len(timed))
for j in timed:
    assert got[j["job"]] == (j["name"], j["start_ns"], j["end_ns"], str(j["pid"])), (j, got[j["job"]])
EOF

py "each flow joins a job's launch call to that job's GPU slice" "$tmp/gen.dump" <<EOF
$PRELUDE
t = T[0]
by = tracks(t)
jobs = {j["job"]: j for j in json.load(open("$tmp/gen.jobs"))["jobs"]["jobs"]}
for f in t["flows"]:
    src, dst = by[f["from"][0]], by[f["to"][0]]
    launch, run = src["slices"][f["from"][2]], dst["slices"][f["to"][2]]
    j = jobs[run["args"]["job"]]
    assert f["id"] == j["job"] and src["kind"] == "thread" and src["tid"] == j["tid"], (f, j)
    assert launch["start"] == j["api_enter_ns"] and launch["end"] == j["submit_ns"], (launch, j)
assert len(t["flows"]) > 5000
EOF

py "the protobuf shows what the trace-event JSON shows: slices, instants, counters, flows, names" \
	"$tmp/gen.dump" <<EOF
$PRELUDE
from decimal import Decimal
import collections
t = T[0]
by = tracks(t)
ev = json.load(open("$tmp/gen.json"), parse_float=Decimal)["traceEvents"]
ns = lambda us: int(us * 1000)
pnames, tnames = {}, {}
for e in ev:
    if e["ph"] == "M":
        (pnames if e["name"] == "process_name" else tnames)[(e["pid"], e["tid"])] = e["args"]["name"]
def json_track(e):
    if e["pid"] >= 999999999:
        return ("lane", pnames[(e["pid"], 0)], tnames[(e["pid"], e["tid"])])
    if e["tid"] >= 1 << 30:
        return ("offcpu", e["pid"], e["tid"] - (1 << 30))
    return ("thread", e["pid"], e["tid"])
def pb_track(x):
    if x["kind"] == "thread":
        return ("thread", x["pid"], x["tid"])
    parent = by.get(x["parent"])
    if x["name"].startswith("off-CPU"):
        return ("offcpu", parent["pid"], parent["tid"])
    return ("lane", parent["name"], x["name"])
js = collections.Counter((json_track(e), e["name"], ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]),
                          e.get("args", {}).get("job")) for e in ev if e["ph"] == "X")
pb = collections.Counter((pb_track(x), s["name"], s["start"], s["end"], s.get("args", {}).get("job"))
                         for x in t["tracks"] for s in x["slices"])
assert js == pb, (len(js), len(pb), list((js - pb).items())[:3], list((pb - js).items())[:3])
ji = collections.Counter((e["name"], ns(e["ts"])) for e in ev if e["ph"] == "i")
pi = collections.Counter((i["name"], i["ts"]) for x in t["tracks"] for i in x["instants"])
assert ji == pi, (ji - pi, pi - ji)
jc = collections.Counter((e["name"], e["pid"], ns(e["ts"]), e["args"]["bytes"]) for e in ev
                         if e["ph"] == "C")
pc = collections.Counter((x["name"], by[x["parent"]]["pid"], ts, v) for x in t["tracks"]
                         if x["counter"] for ts, v in x["counters"])
assert jc == pc and len(jc) > 100, (jc - pc, pc - jc)
starts = {e["bind_id"]: (json_track(e), ns(e["ts"])) for e in ev if e.get("flow_out")}
jf = collections.Counter((starts[e["bind_id"]], (json_track(e), ns(e["ts"]))) for e in ev
                         if e.get("flow_in"))
def end(ref):
    x = by[ref[0]]
    return (pb_track(x), x["slices"][ref[2]]["start"])
pf = collections.Counter((end(f["from"]), end(f["to"])) for f in t["flows"])
assert jf == pf, (len(jf), len(pf))
# the JSON names a process "COMM PID"
assert sorted(n.rsplit(" ", 1)[0] for (pid, _), n in pnames.items() if pid < 999999999) == \
    sorted(x["name"] for x in t["tracks"] if x["kind"] == "process")
EOF

# the same bytes on every run, and through a pipe
"$grtrace" export "$tmp/gen.grt" -o "$tmp/gen2.pftrace" 2>/dev/null
check "the protobuf is the same on a second run" cmp -s "$tmp/gen.pftrace" "$tmp/gen2.pftrace"
"$grtrace" export "$tmp/gen.grt" -o - 2>"$tmp/err" | cat >"$tmp/gen3.pftrace"
check "-o - writes the same protobuf to stdout" cmp -s "$tmp/gen.pftrace" "$tmp/gen3.pftrace"
check "... and prints no summary line there" test ! -s "$tmp/err"
"$grtrace" export "$tmp/gen.grt" --perfetto "$tmp/gen4.pftrace" 2>"$tmp/err"
check "--perfetto OUT writes the same protobuf as -o OUT" cmp -s "$tmp/gen.pftrace" "$tmp/gen4.pftrace"
"$grtrace" export "$tmp/gen.grt" --perfetto "$tmp/gen.old.json" --format json 2>/dev/null
check "--perfetto OUT --format json writes the JSON" cmp -s "$tmp/gen.json" "$tmp/gen.old.json"
pb_size=$(stat -c %s "$tmp/gen.pftrace")
json_size=$(stat -c %s "$tmp/gen.json")
check "the protobuf is under a quarter of the JSON ($pb_size vs $json_size bytes)" \
	test $((pb_size * 4)) -lt "$json_size"

# ---- the command line ----
expect_usage() { # NAME MESSAGE ARGS...: exit 2 with one line containing MESSAGE
	local name=$1 msg=$2
	shift 2
	"$grtrace" export "$@" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	check "$name: exit 2" test $rc -eq 2
	check "$name: names the problem" grep -q -- "$msg" "$tmp/err"
}
expect_usage "no output" "grtrace: export: needs -o OUT" "$tmp/gen.grt"
expect_usage "two outputs" "more than one output; give -o OUT once" "$tmp/gen.grt" -o "$tmp/a" \
	--perfetto "$tmp/b"
expect_usage "unknown format" "unknown format 'csv'; use perfetto or json" "$tmp/gen.grt" -o "$tmp/a" \
	--format csv
check "unknown format is one line" test "$(wc -l <"$tmp/err")" -eq 1
"$grtrace" export --help >"$tmp/help"
check "--help names -o, --format and --perfetto" \
	sh -c 'grep -q -- "-o, --output OUT" "$1" && grep -q -- "--format FORMAT" "$1" &&
		grep -q -- "--perfetto OUT" "$1"' _ "$tmp/help"
"$grtrace" export "$tmp/none.grt" -o "$tmp/x.pftrace" >/dev/null 2>"$tmp/err"
check "a missing trace exits 1" test $? -eq 1
head -c 100000 "$tmp/gen.grt" >"$tmp/cut.grt"
"$grtrace" export "$tmp/cut.grt" -o "$tmp/cut.pftrace" >/dev/null 2>"$tmp/err"
check "a cut trace exits 1 with the offset" test $? -eq 1 -a "$(grep -c offset "$tmp/err")" -eq 1
validate "$tmp/cut.pftrace" "$tmp/cut.dump"

# ---- the checker rejects what the importer would get wrong ----
# bad CASE TEXT: TEXT (text-format packets) encoded with protoc must fail the check
bad() {
	local name=$1
	printf '%s\n' "$2" | protoc --encode=perfetto.protos.Trace -I src/export perfetto_subset.proto \
		>"$tmp/bad.pftrace" 2>"$tmp/enc" || { fail "encode $name: $(cat "$tmp/enc")"; return; }
	if python3 "$check_pb" "$tmp/bad.pftrace" >"$tmp/out" 2>&1; then
		fail "checker rejects $name"
	else
		ok "checker rejects $name ($(cat "$tmp/out"))"
	fi
}
HEAD='packet { clock_snapshot { clocks { clock_id: 3 timestamp: 0 } primary_trace_clock: BUILTIN_CLOCK_MONOTONIC } }
packet { track_descriptor { uuid: 1 thread { pid: 1 tid: 2 } } }
packet { trusted_packet_sequence_id: 1 sequence_flags: 3
  clock_snapshot { clocks { clock_id: 64 timestamp: 100 is_incremental: true } clocks { clock_id: 3 timestamp: 100 } }
  trace_packet_defaults { timestamp_clock_id: 64 track_event_defaults { track_uuid: 1 } } }'
NAME='interned_data { event_names { iid: 1 name: "a" } }'
bad "an undefined name iid" "$HEAD
packet { timestamp: 0 trusted_packet_sequence_id: 1 sequence_flags: 2 track_event { type: TYPE_INSTANT name_iid: 7 } }"
bad "an iid defined on another sequence" "$HEAD
packet { trusted_packet_sequence_id: 2 sequence_flags: 3 $NAME }
packet { timestamp: 0 trusted_packet_sequence_id: 1 sequence_flags: 2 track_event { type: TYPE_INSTANT name_iid: 1 } }"
bad "an undeclared track" "$HEAD
packet { timestamp: 0 trusted_packet_sequence_id: 1 sequence_flags: 2 track_event { type: TYPE_INSTANT track_uuid: 9 } }"
bad "state needed before it was cleared" "$HEAD
packet { timestamp: 0 trusted_packet_sequence_id: 5 sequence_flags: 2 track_event { type: TYPE_INSTANT track_uuid: 1 } }"
bad "state used without SEQ_NEEDS_INCREMENTAL_STATE" "$HEAD
packet { timestamp: 0 trusted_packet_sequence_id: 1 track_event { type: TYPE_INSTANT } }"
bad "partially overlapping slices" "$HEAD
packet { timestamp: 0 trusted_packet_sequence_id: 1 sequence_flags: 2 track_event { type: TYPE_SLICE_BEGIN } }
packet { timestamp: 20 trusted_packet_sequence_id: 1 sequence_flags: 2 track_event { type: TYPE_SLICE_END } }
packet { timestamp: 110 timestamp_clock_id: 3 trusted_packet_sequence_id: 1 sequence_flags: 2 track_event { type: TYPE_SLICE_BEGIN } }
packet { timestamp: 10 trusted_packet_sequence_id: 1 sequence_flags: 2 track_event { type: TYPE_SLICE_END } }"
bad "an END without a BEGIN" "$HEAD
packet { timestamp: 0 trusted_packet_sequence_id: 1 sequence_flags: 2 track_event { type: TYPE_SLICE_END } }"
bad "a slice that never ends" "$HEAD
packet { timestamp: 0 trusted_packet_sequence_id: 1 sequence_flags: 2 track_event { type: TYPE_SLICE_BEGIN } }"
bad "a flow ended that never started" "$HEAD
packet { timestamp: 0 trusted_packet_sequence_id: 1 sequence_flags: 2 track_event { type: TYPE_INSTANT terminating_flow_ids: 4 } }"
bad "a counter value on a slice track" "$HEAD
packet { timestamp: 0 trusted_packet_sequence_id: 1 sequence_flags: 2 track_event { type: TYPE_COUNTER counter_value: 3 } }"
bad "a second thread track for one thread" "$HEAD
packet { track_descriptor { uuid: 2 thread { pid: 1 tid: 2 } } }"
bad "a sequence clock of another sequence" "$HEAD
packet { timestamp: 0 timestamp_clock_id: 64 trusted_packet_sequence_id: 3 track_event { type: TYPE_INSTANT track_uuid: 1 } }"
bad "a parent declared after its child" "$HEAD
packet { track_descriptor { uuid: 3 parent_uuid: 4 name: \"x\" } }"
bad "timestamps before the trace clock" "packet { track_descriptor { uuid: 1 thread { pid: 1 tid: 2 } } }
packet { timestamp: 5 track_event { type: TYPE_INSTANT track_uuid: 1 } trusted_packet_sequence_id: 1 }"
good="$HEAD
packet { timestamp: 0 trusted_packet_sequence_id: 1 sequence_flags: 2 $NAME track_event { type: TYPE_SLICE_BEGIN name_iid: 1 } }
packet { timestamp: 10 trusted_packet_sequence_id: 1 sequence_flags: 2 track_event { type: TYPE_SLICE_END } }"
printf '%s\n' "$good" | protoc --encode=perfetto.protos.Trace -I src/export perfetto_subset.proto >"$tmp/good.pftrace"
check "checker accepts the same packets done right" sh -c 'python3 "$1" "$2" >/dev/null' _ "$check_pb" \
	"$tmp/good.pftrace"

# ---- 10^6 records: streamed, memory flat (plain build only: ASan is slow) ----
case "$build" in
*san*) ;;
*)
	"$build/fixtures/gen_jobs_trace" -o "$tmp/big.grt" -n 1000000 >/dev/null
	"$build/fixtures/gen_jobs_trace" -o "$tmp/mid.grt" -n 100000 >/dev/null
	/usr/bin/time -f %M -o "$tmp/rss_big" "$grtrace" export "$tmp/big.grt" -o "$tmp/big.pftrace" 2>/dev/null
	/usr/bin/time -f %M -o "$tmp/rss_mid" "$grtrace" export "$tmp/mid.grt" -o "$tmp/mid.pftrace" 2>/dev/null
	big=$(tail -1 "$tmp/rss_big")
	mid=$(tail -1 "$tmp/rss_mid")
	check "export memory flat: ${big} KiB for 10^6 vs ${mid} KiB for 10^5 records" \
		test "$big" -lt $((mid * 3 / 2 + 4096))
	check "10^6 records decode with protoc" sh -c 'protoc --decode=perfetto.protos.Trace -I src/export \
		perfetto_subset.proto <"$1" | grep -c "^packet {" | grep -q "^[0-9]\{7\}$"' _ "$tmp/big.pftrace"
	;;
esac
exit $failed
