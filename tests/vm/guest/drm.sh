#!/bin/bash
# The drm source on a real DRM driver: every virtio-gpu command K fenced submissions make is
# recorded as it goes on the virtqueue (submit) and when its response comes back (complete),
# paired; then, with amdgpu, i915, xe and the DRM scheduler loaded without their hardware,
# the source attaches to every tracepoint it knows that the kernel has.
set -u
BUILD=${1:-build}
. tests/vm/guest/common.bash
G=$BUILD/grtrace
K=12

"$G" record -s drm,fence -o "$tmp/d.grt" -- "$BUILD/fixtures/vm/virtgpu_fences" $K >"$tmp/prog.out" 2>"$tmp/err"
record_ok "virtio-gpu: record status 0" "$tmp/err" $?
"$G" parse --format json "$tmp/d.grt" >"$tmp/d.json"
check "virtio-gpu: $K+1 fenced creates, 4 x $K transfers, every command of the program paired with its response" \
	python3 - "$tmp/d.json" "$K" <<'PY'
import json, sys
from collections import Counter
ev = [json.loads(l) for l in open(sys.argv[1])]
k = int(sys.argv[2])
status = [e["message"] for e in ev if e["type"] == "source_status" and e["source"] == "drm"]
assert status == ["attached: virtio_gpu(2)"], status
pid = next(e["pid"] for e in ev if e["type"] == "process" and e["event"] == "start")
drm = [e for e in ev if e["type"] == "drm"]
submits = [e for e in drm if e["event"] == "submit" and e["pid"] == pid]
cmds = Counter(e["cmd"] for e in submits)
# the dumb buffer's create is not fenced; closing the device may flush the console once more
# (4 transfers of 16 MiB per command: virtgpu_fences' default)
assert cmds["RESOURCE_CREATE_2D"] == k + 2, cmds
assert 4 * k <= cmds["TRANSFER_TO_HOST_2D"] <= 4 * k + 1, cmds
fenced = [e for e in submits if e["flags"] & 1]
assert len(fenced) == k + 1 and all(e["cmd"] == "RESOURCE_CREATE_2D" for e in fenced), fenced[:2]
assert all(e["ring"] == "control" and e["driver"] == "virtio_gpu" for e in submits), submits[:1]
# every submission of the program completes once: by virtqueue seqno where the kernel has it,
# else (6.1) the fenced ones by fence id
completes = [e for e in drm if e["event"] == "complete"]
if any(e["job"] for e in submits):
    done = Counter(e["job"] for e in completes)
    assert all(done[e["job"]] == 1 for e in submits), [e for e in submits if done[e["job"]] != 1][:2]
    after = {e["job"]: e["ts_ns"] for e in completes}
    assert all(after[e["job"]] > e["ts_ns"] for e in submits)
else:
    done = Counter(e["seqno"] for e in completes if e["flags"] & 1)
    assert all(done[e["seqno"]] == 1 for e in fenced), done
# the fence ids are the dma_fence seqnos the fence source saw emitted by the program
emitted = sorted(e["seqno"] for e in ev if e["type"] == "fence" and e["event"] == "emit" and e["pid"] == pid)
assert emitted == sorted(e["seqno"] for e in fenced), (emitted, [e["seqno"] for e in fenced])
PY

# the same trace as jobs: one per command of the program, the waited ones complete with every
# stage (submit -> on the ring -> complete -> host woken), and a valid Perfetto timeline
"$G" report "$tmp/d.grt" --jobs --format json >"$tmp/jobs.json" 2>"$tmp/err"
record_ok "report --jobs: status 0" "$tmp/err" $?
check "report --jobs: a job per command of the program; the waited fences' jobs complete, with the breakdown" \
	python3 - "$tmp/d.json" "$tmp/jobs.json" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
jobs = json.load(open(sys.argv[2]))["jobs"]
pid = next(e["pid"] for e in ev if e["type"] == "process" and e["event"] == "start")
submits = [e for e in ev if e["type"] == "drm" and e["event"] == "submit" and e["pid"] == pid]
rows = [r for r in jobs["jobs"] if r["kind"] == "drm" and r["pid"] == pid]
assert len(rows) == len(submits), (len(rows), len(submits))
assert sorted(r["submit_ns"] for r in rows) == sorted(e["ts_ns"] for e in submits)
waited = {e["seqno"] for e in ev if e["type"] == "fence" and e["event"] == "wait_end" and e["pid"] == pid and "wait_ns" in e}
fenced = {e["ts_ns"]: e["seqno"] for e in submits if e["flags"] & 1}
done = [r for r in rows if not r["incomplete"]]
def brief(r):
    return {k: r.get(k) for k in ("name", "submit_ns", "start_ns", "end_ns", "complete_ns", "missing", "flags")}
assert len(done) == len(waited) > 0, (len(done), len(waited), [brief(r) for r in rows if r["incomplete"] and fenced.get(r["submit_ns"]) in waited],
    [(e["ts_ns"], e["event"], e["seqno"], e["pid"]) for e in ev if e["type"] == "fence" and e["seqno"] in waited and e["event"] in ("emit", "signal", "wait_end")][:40],
    [(e["ts_ns"], e["event"], e["cmd"], e["seqno"], e["flags"], e["pid"]) for e in ev if e["type"] == "drm"][:120])
for r in done:
    assert fenced.get(r["submit_ns"]) in waited and r["name"] == "RESOURCE_CREATE_2D", r
    assert r["device"] == 256 and "start-by-ring-order" in r["flags"], r
    assert all(r[k] is not None for k in ("t_queue_ns", "t_exec_ns", "t_complete_ns", "t_total_ns")), r
    assert r["submit_ns"] <= r["start_ns"] <= r["end_ns"] <= r["complete_ns"], r
assert all(r["missing"] == ["no-complete"] for r in rows if r["incomplete"]), [r for r in rows if r["incomplete"]][:2]
PY
# (the trace-event JSON: the protobuf's checker needs protoc, which the guests do not have)
"$G" export "$tmp/d.grt" -o "$tmp/d.perfetto.json" --format json 2>"$tmp/err"
record_ok "export --format json: status 0" "$tmp/err" $?
check "... a valid trace-event file with the jobs as slices" python3 tests/tools/check_trace_events.py "$tmp/d.perfetto.json"

# snoop drm: the same commands as live lines
"$G" snoop drm >"$tmp/snoop.out" 2>"$tmp/snoop.err" &
snooper=$!
for _ in $(seq 300); do grep -q snooping "$tmp/snoop.err" && break; sleep 0.1; done
"$BUILD/fixtures/vm/virtgpu_fences" 3 1 >/dev/null
sleep 1
kill -INT $snooper
wait $snooper
record_ok "snoop drm: stops with status 0" "$tmp/snoop.err" $?
check "... a submit and a complete line for each of the 4 fenced creates" [ \
	"$(grep -c ' virtio_gpu *submit *control *RESOURCE_CREATE_2D seqno=[0-9]* fence_id=' "$tmp/snoop.out")" -ge 4 -a \
	"$(grep -c ' virtio_gpu *complete *control *OK_NODATA seqno=[0-9]* fence_id=' "$tmp/snoop.out")" -ge 4 ]

# the drivers whose hardware is absent: their tracepoints exist once loaded
grt-load-modules gpu
"$G" record -s drm -o "$tmp/all.grt" -- true 2>"$tmp/err"
record_ok "GPU drivers loaded: record status 0" "$tmp/err" $?
if [ -d /sys/kernel/tracing/events/xe ]; then
	want="gpu_scheduler(4) amdgpu(2) i915(5) xe(4) virtio_gpu(2)"
else
	want="gpu_scheduler(4) amdgpu(2) i915(5) virtio_gpu(2)"
fi
check "... attached to every known tracepoint here: $want" grep -q "\"message\":\"attached: $want\"" \
	<("$G" parse --format json "$tmp/all.grt")
check "... and none left out as undecodable" [ "$("$G" parse --format json "$tmp/all.grt" | grep -c unsupported_probe)" = 0 ]
exit $failed
