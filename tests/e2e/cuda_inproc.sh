#!/bin/bash
# The cuda source's two paths on the same fake-CUDA workloads: --cuda-via uprobe and
# --cuda-via inject (the in-process library) must give the same records, field by field
# (timestamps aside); the exact answers hold both ways; threads, fork without exec, a child
# whose LD_PRELOAD was cleared, a late dlopen; per-thread loss; option errors.
BUILD=${1:-build}
. tests/e2e/lib/cuda.bash

COMPARE="python3 tests/e2e/lib/cuda_compare.py"

# record VIA NAME ARGS...: records the command both ways with ASLR off (host addresses
# then match), writes $tmp/NAME-VIA.json
record() {
	local via=$1 name=$2
	shift 2
	setarch -R "$GRT" record -f -o "$tmp/$name-$via.grt" --cuda-via "$via" --libcuda "$FAKE" \
		"$@" >"$tmp/$name-$via.out" 2>"$tmp/$name-$via.err"
	check "$name, --cuda-via $via: status 0" [ $? = 0 ]
	"$GRT" parse --format json --all "$tmp/$name-$via.grt" >"$tmp/$name-$via.json"
}

# both NAME ARGS...: records both ways and compares every record
both() {
	local name=$1
	shift
	record uprobe "$name" "$@"
	record inject "$name" "$@"
	local rc
	$COMPARE "$tmp/$name-uprobe.json" "$tmp/$name-inject.json" >"$tmp/$name.cmp"
	rc=$?
	check "$name: the same records both ways ($(tail -1 "$tmp/$name.cmp"))" [ $rc = 0 ] ||
		head -20 "$tmp/$name.cmp"
}

# the known sequence: every field of every call, allocation stacks included
both known -- "$WL/cuda_known"
for via in uprobe inject; do
	EXPECT_LAUNCH_STACKS=0 $EXPECT known "$tmp/known-$via.json" \
		"$(pid_of_launched "$tmp/known-$via.json")" - \
		>"$tmp/known-$via.expect" || { failed=1; cat "$tmp/known-$via.expect"; }
	check "known answers hold with --cuda-via $via" \
		[ "$(grep -c '^ok' "$tmp/known-$via.expect")" -gt 20 ]
	check "... and the leak report: 2126776 device + 65536 managed + 12288 host bytes" \
		python3 -c '
import json, sys
[p] = json.load(sys.stdin)["leaks"]
got = (p["bytes"], p["allocations"], p["managed"]["bytes"], p["host"]["bytes"], p["frees"])
assert got == (2126776, 4, 65536, 12288, 5), got' \
		< <("$GRT" report "$tmp/known-$via.grt" --leaks --format json)
done
# launch stacks in-process: every launch carries one, in the workload's code (the uprobe path's
# stack walk may fail on a loaded machine, so the comparison above leaves them out)
record inject known_stacks --launch-stacks -- "$WL/cuda_known"
$EXPECT known "$tmp/known_stacks-inject.json" "$(pid_of_launched "$tmp/known_stacks-inject.json")" - \
	>"$tmp/known_stacks.expect" || { failed=1; cat "$tmp/known_stacks.expect"; }
check "in-process launch stacks: the known answers hold" \
	[ "$(grep -c '^ok' "$tmp/known_stacks.expect")" -gt 20 ]
# a call left by siglongjmp from a signal raised inside the driver never returns: it is counted
# lost, and the thread's later calls are recorded (they were held behind it, all lost)
record inject longjmp -- "$WL/cuda_longjmp" 10
check "a call left by longjmp: the 10 launches, the allocation and the free after it" python3 -c '
import collections, json, sys
c = collections.Counter(r["api"] for r in map(json.loads, open(sys.argv[1])) if "api" in r)
want = {"cuModuleLoad": 1, "cuModuleGetFunction": 1, "cuLaunchKernel": 10, "cuMemAlloc_v2": 1,
        "cuMemFree_v2": 1}
assert dict(c) == want, dict(c)' "$tmp/longjmp-inject.json"
check "... the call left counted lost, said for its thread" grep -q \
	"tid [0-9]*: 1 CUDA calls lost (its in-process ring was full, or they were left inside the driver)" \
	"$tmp/longjmp-inject.json"
check "the in-process trace says how it recorded (cuda_config)" \
	grep -q '"launch_probes":"in-process"' "$tmp/known-inject.json"
check "... and which path recorded the process" \
	grep -q 'CUDA calls recorded in-process (libgrtrace-inject)' "$tmp/known-inject.json"

# threads: exact totals both ways
both threads -- "$WL/cuda_threads" 4 2000
for via in uprobe inject; do
	$EXPECT threads "$tmp/threads-$via.json" "$(pid_of_launched "$tmp/threads-$via.json")" 4 2000 ||
		failed=1
done

# a libcuda dlopen()ed late, at another path
both late -- "$WL/cuda_late_dlopen" "$(realpath "$FAKE_COPY")" 100 1500 9
$EXPECT late "$tmp/late-inject.json" "$(pid_of_launched "$tmp/late-inject.json")" 9 || failed=1

# fork without exec: the child records through its own rings
both fork -- "$WL/cuda_family" fork
check "fork: parent and child both recorded in-process" python3 -c '
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
msgs = [r["message"] for r in lines if r["type"] == "source_status"]
assert len([m for m in msgs if "recorded in-process" in m]) == 2, msgs' "$tmp/fork-inject.json"

# a child whose LD_PRELOAD was cleared: recorded by uprobes, once; its parent in-process.
# The child calls after 1.5 s: the libcuda probes are attached at the next scan of the
# traced processes (every 0.5 s)
both clean -- "$WL/cuda_family" exec-clean 1500
check "clean: the parent in-process, the child by uprobes" python3 -c '
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
msgs = [r["message"] for r in lines if r["type"] == "source_status"]
inproc = [m for m in msgs if "recorded in-process" in m]
uprobe = [m for m in msgs if "recorded by uprobes" in m]
assert len(inproc) == 1 and len(uprobe) == 1, msgs' "$tmp/clean-inject.json"

# rings far too small: every launch is in the trace or counted lost, per thread
small_ring_loses GRTRACE_CUDA_RING_KB calls inject
check "... and the thread that lost them" bash -c \
	"'$GRT' parse '$tmp/x.grt' | grep -q 'tid [0-9]*: $lost CUDA calls lost'"

# more threads than rings: their calls are counted lost, never blocked
GRTRACE_CUDA_RINGS=1 "$GRT" record -f -o "$tmp/r.grt" --libcuda "$FAKE" -- \
	"$WL/cuda_threads" 4 100 >/dev/null 2>"$tmp/err"
check "one ring for 5 threads: status 0" [ $? = 0 ]
check "... the threads without a ring are counted lost" bash -c \
	"'$GRT' parse '$tmp/r.grt' | grep -q 'CUDA calls lost: more threads than rings'"

# a call the thread is still inside when recording stops is recorded without a return, from the
# record left open in its ring: a launch's short record (hang-launch) and a synchronisation's long
# one (hang)
inproc_hung() {
	local how=$1 wpid
	rm -f "$tmp/fifo"
	mkfifo "$tmp/fifo"
	"$GRT" record -f -o "$tmp/$how.grt" --cuda-via inject --libcuda "$FAKE" -- \
		"$WL/cuda_wait" 3 "$how" <"$tmp/fifo" >"$tmp/$how.ready" 2>"$tmp/$how.err" &
	GRT_BG=$!
	exec 7>"$tmp/fifo"
	for _ in $(seq 100); do grep -q ready "$tmp/$how.ready" 2>/dev/null && break; sleep 0.1; done
	wpid=$(awk '/^ready/ { print $2 }' "$tmp/$how.ready")
	echo go >&7
	exec 7>&-
	sleep 1
	check "$how, in-process: record stops on SIGINT with status 0" grt_stop
	[ -n "$wpid" ] && kill "$wpid" 2>/dev/null
	"$GRT" parse --format json --all "$tmp/$how.grt" >"$tmp/$how.json"
	check "$how, in-process: the open call is recorded, without a return" python3 -c '
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
launches = [r for r in recs if r.get("type") == "launch"]
syncs = [r for r in recs if r.get("type") == "sync"]
timed = [r for r in launches if r.get("api_ns") is not None]
assert len(timed) == 4 and all(r["kernel"] == "waited" for r in launches), launches
if sys.argv[2] == "hang-launch":
    last = launches[-1]
    assert len(launches) == 5 and last.get("api_ns") is None, launches
    assert last["grid"] == [3, 1, 1] and last["stream"] == 0xDEAD0 and last["block"] == [64, 1, 1], last
    assert not syncs, syncs
else:
    assert len(launches) == 4, launches
    assert len(syncs) == 1 and syncs[0].get("api_ns") is None and syncs[0]["stream"] == 0xDEAD0, syncs
' "$tmp/$how.json" "$how"
}
inproc_hung hang-launch
inproc_hung hang

# the benchmarks' in-process A/B switch (bench/gpu_inproc/record_switch.py) turns the recording
# off and on inside the process: 10 of 30 allocations and frees recorded; untraced it does nothing
"$GRT" record -f -o "$tmp/switch.grt" --libcuda "$FAKE" -s cuda -- \
	python3 tests/e2e/lib/record_switch_calls.py "$FAKE" >"$tmp/switch.out" 2>&1
check "record switch: live in a recorded process" grep -q "^switch live" "$tmp/switch.out"
check "... 10 of 30 allocations recorded" [ "$("$GRT" parse "$tmp/switch.grt" | grep -c cuMemAlloc_v2)" = 10 ]
check "... and 10 of 30 frees" [ "$("$GRT" parse "$tmp/switch.grt" | grep -c cuMemFree_v2)" = 10 ]
check "record switch: none untraced" grep -q "^switch none" \
	<(python3 tests/e2e/lib/record_switch_calls.py "$FAKE")

# option errors: one line, exit 2
"$GRT" record --cuda-via bpf -- true >/dev/null 2>"$tmp/err"
check "--cuda-via bpf: exit 2" [ $? = 2 ]
check "... saying what to give" grep -q "bad value 'bpf' for --cuda-via; give inject or uprobe" \
	"$tmp/err"
"$GRT" record --cuda-via inject -p 1 >/dev/null 2>"$tmp/err"
check "--cuda-via inject -p: exit 2" [ $? = 2 ]
check "... saying why" grep -q "needs a command to launch" "$tmp/err"
exit $failed
