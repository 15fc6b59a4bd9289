#!/bin/bash
# grtrace record of the fake-CUDA workloads, read back with parse --format json:
# exact records for a launched command, many threads, a late second libcuda copy,
# a running pid, a call cut off by the stop, and the leak total in report.
BUILD=${1:-build}
. tests/e2e/lib/cuda.bash

parse() { "$GRT" parse --format json --all "$1" >"$1.json"; }

# a launched command, libcuda named on the command line
"$GRT" record -f -o "$tmp/k.grt" --launch-stacks --libcuda "$FAKE" -- "$WL/cuda_known" 2>"$tmp/err" &
rpid=$!
wait $rpid
check "record of a command: status 0" [ $? = 0 ]
check "record says it stopped with the target and lost nothing" \
	grep -q "(0 events lost), stopped: target-exit" "$tmp/err"
parse "$tmp/k.grt"
# a launched command records in-process by default; the uprobes' status line is --cuda-via uprobe's
"$GRT" record -f -o "$tmp/ku.grt" --cuda-via uprobe --libcuda "$FAKE" -- "$WL/cuda_known" 2>/dev/null
parse "$tmp/ku.grt"
check "the trace's status line names the refused entry point (launched, --cuda-via uprobe)" \
	one_refused "$tmp/ku.grt.json"
wpid=$(pid_of_launched "$tmp/k.grt.json")
$EXPECT known "$tmp/k.grt.json" "$wpid" "$rpid" || failed=1
check "report: leaks of 2126776 device + 65536 managed + 12288 host bytes" python3 -c '
import json, sys
[p] = json.load(sys.stdin)["leaks"]
got = (p["bytes"], p["allocations"], p["managed"]["bytes"], p["host"]["bytes"], p["frees"])
assert got == (2126776, 4, 65536, 12288, 5), got' < <("$GRT" report "$tmp/k.grt" --leaks --format json)

# a program that exits right after its last free, before the recorder's next drain: its exit
# and its free are both counted, its allocation stack is symbolized from the memory map read
# while it ran
"$GRT" record -f -o "$tmp/s.grt" --libcuda "$FAKE" -- "$WL/cuda_short_leak" 2>"$tmp/err"
check "record of a short-lived program: status 0" [ $? = 0 ]
check "report: its leak, exited, stack symbolized" python3 -c '
import json, sys
[p] = json.load(sys.stdin)["leaks"]
assert p["exited"] and p["exit_code"] == 0, p
assert (p["bytes"], p["allocations"], p["frees"], p["unknown_frees"]) == (4096, 1, 1, 0), p
frames = p["stacks"][0]["frames"]
assert frames[0].startswith("cuMemAlloc_v2+") and frames[0].endswith("/libcuda.so.1)"), frames
assert frames[1].startswith("main+") and frames[1].endswith("/cuda_short_leak)"), frames
' < <("$GRT" report "$tmp/s.grt" --leaks --format json)

# 512 allocations from 512 stacks, through the uprobes and in-process: each keeps its own
# frames (a hashed stack map gave the ones whose hash shared a bucket no stack at all)
for via in uprobe inject; do
	"$GRT" record -f -o "$tmp/st.grt" --cuda-via $via --libcuda "$FAKE" -- "$WL/cuda_stack_sites" \
		2>"$tmp/err"
	check "record of 512 allocation sites ($via): status 0" [ $? = 0 ]
	parse "$tmp/st.grt"
	check "512 allocations, 512 stack ids, 512 different frame lists ($via)" python3 -c '
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
allocs = [r for r in recs if r["type"] == "alloc"]
stacks = {r["stack_id"]: tuple(r["ips"]) for r in recs if r["type"] == "stack"}
assert len(allocs) == 512, len(allocs)
missing = [a["stack_id"] for a in allocs if a["stack_id"] not in stacks]
assert not missing, f"{len(missing)} without a stack: {missing[:8]}"
assert len({a["stack_id"] for a in allocs}) == 512
assert len({stacks[a["stack_id"]] for a in allocs}) == 512
' "$tmp/st.grt.json"
done

# libcuda found the way the loader will find it (LD_LIBRARY_PATH)
LD_LIBRARY_PATH=$(dirname "$FAKE") "$GRT" record -f -o "$tmp/l.grt" -- "$WL/cuda_known" 2>"$tmp/err"
check "record finds libcuda through LD_LIBRARY_PATH" [ $? = 0 ]
parse "$tmp/l.grt"
EXPECT_LAUNCH_STACKS=0 $EXPECT known "$tmp/l.grt.json" "$(pid_of_launched "$tmp/l.grt.json")" - >"$tmp/out" || {
	failed=1
	cat "$tmp/out"
}
check "... and records the same known answers" [ "$(grep -c '^ok' "$tmp/out")" -gt 20 ]

# many threads: exact totals, nothing lost
"$GRT" record -f -o "$tmp/t.grt" --libcuda "$FAKE" -- "$WL/cuda_threads" 4 25000 2>"$tmp/err"
check "record of 4 x 25000 launches: status 0" [ $? = 0 ]
parse "$tmp/t.grt"
$EXPECT threads "$tmp/t.grt.json" "$(pid_of_launched "$tmp/t.grt.json")" 4 25000 || failed=1

# a ring buffer far too small: every launch is either in the trace or counted lost
small_ring_loses GRT_CUDA_RING_KB events uprobe

# a second libcuda copy dlopen()ed late is found by the rescan (GRT_E2E_LATE_MS: longer after it)
"$GRT" record -f -o "$tmp/d.grt" --libcuda "$FAKE" -- \
	"$WL/cuda_late_dlopen" "$(realpath "$FAKE_COPY")" 100 "${GRT_E2E_LATE_MS:-1500}" 9 2>"$tmp/err"
check "record of a late dlopen: status 0" [ $? = 0 ]
parse "$tmp/d.grt"
$EXPECT late "$tmp/d.grt.json" "$(pid_of_launched "$tmp/d.grt.json")" 9 || failed=1

# a running process, its libcuda found in its maps; then one stuck in a call when recording stops
rm -f "$tmp/fifo"
mkfifo "$tmp/fifo"
"$WL/cuda_wait" 3 hang <"$tmp/fifo" >"$tmp/ready" &
wpid=$!
exec 7>"$tmp/fifo"
# attach only once the workload runs with libcuda mapped (it says "ready" then), not while
# the shell is still starting it: record -p refuses a process without libcuda
for _ in $(seq 100); do grep -q ready "$tmp/ready" 2>/dev/null && break; sleep 0.1; done
"$GRT" record -f -o "$tmp/p.grt" -p $wpid 2>"$tmp/err" &
GRT_BG=$!
check "record -p attached every probe" wait_probes $GRT_BG
echo go >&7
exec 7>&-
sleep 1
check "record -p stops on SIGINT with status 0" grt_stop
check "... saying so" grep -q "stopped: signal" "$tmp/err"
kill $wpid
wait $wpid 2>/dev/null
parse "$tmp/p.grt"
check "the trace's status line names the refused entry point (-p)" one_refused "$tmp/p.grt.json"
$EXPECT wait "$tmp/p.grt.json" $wpid 3 hang || failed=1
exit $failed
