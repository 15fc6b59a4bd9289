#!/bin/bash
# record --launch-returns N on the fake driver: every launch recorded, the returns of exactly
# one in N per thread (uprobe sessions), the fallback without sessions, and what report says.
BUILD=${1:-build}
. tests/e2e/lib/cuda.bash

# record_known NAME ARGS...: records cuda_known with ARGS into $tmp/NAME.grt and its JSON
record_known() {
	local name=$1
	shift
	"$GRT" record -f -o "$tmp/$name.grt" --libcuda "$FAKE" "$@" -- "$WL/cuda_known" 2>"$tmp/$name.err"
	check "record ${*:-(defaults)}: status 0, nothing lost" \
		grep -q "(0 events lost), stopped: target-exit" "$tmp/$name.err"
	"$GRT" parse --format json --all "$tmp/$name.grt" >"$tmp/$name.json"
}

expect_returns() {
	local name=$1 every=$2 probes=$3
	$EXPECT returns "$tmp/$name.json" "$(pid_of_launched "$tmp/$name.json")" "$every" "$probes" ||
		failed=1
}

# uprobe sessions (Linux 6.13+; make vmtest runs this on kernels without): 1 = every return,
# 4 = launches 1, 5, 9..., 0 = none
record_known every
if ! grep -q '"launch_probes":"uprobe-session"' "$tmp/every.json"; then
	echo "ok - no uprobe sessions in this kernel: their cases are left out, the default is the pair"
	expect_returns every 1 uprobe+uretprobe
	sessions=0
else
	sessions=1
	expect_returns every 1 uprobe-session
fi
if [ $sessions = 1 ]; then # (the cases up to the fallback's need sessions)
record_known n4 --launch-returns 4
expect_returns n4 4 uprobe-session
record_known n0 --launch-returns 0
expect_returns n0 0 uprobe-session
"$GRT" parse "$tmp/n4.grt" >"$tmp/n4.txt"
check "parse text: a launch without its return says so" \
	grep -q "api=cuLaunchKernel ppid=[0-9]* comm=cuda_known ret=- api_ns=- return=not-sampled$" \
	"$tmp/n4.txt"

# the count is per thread: 4 threads x 1000 launches, 1 in 3 -> 334 returns each
"$GRT" record -f -o "$tmp/t.grt" --launch-returns 3 --libcuda "$FAKE" -- "$WL/cuda_threads" 4 1000 \
	2>"$tmp/t.err"
check "record of 4 threads with --launch-returns 3: status 0" [ $? = 0 ]
"$GRT" parse --format json --all "$tmp/t.grt" >"$tmp/t.json"
$EXPECT threads_returns "$tmp/t.json" "$(pid_of_launched "$tmp/t.json")" 4 1000 3 || failed=1

# report: launch times from the sampled launches only, and it says so; jobs still built
"$GRT" report "$tmp/n4.grt" --kernels >"$tmp/r4.txt"
check "report --kernels: sampled 1 in 4, 7 kernel launches timed" grep -qx \
	"5 kernels, 27 launches (API time = cuLaunchKernel entry to return, sampled 1 in 4 per thread: 7 launches)" \
	"$tmp/r4.txt"
"$GRT" report "$tmp/n0.grt" --kernels >"$tmp/r0.txt"
check "report --kernels with --launch-returns 0: not recorded" grep -qx \
	"5 kernels, 27 launches (API time not recorded: --launch-returns 0)" "$tmp/r0.txt"
"$GRT" report "$tmp/n4.grt" --jobs --format json >"$tmp/j4.json"
check "report --jobs: 48 jobs, the 21 unsampled launches flagged, not missing a submit" python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"]
launches = [r for r in j["jobs"] if r["kind"] in ("kernel", "graph")]
unsampled = [r for r in launches if "return-unsampled" in r["flags"]]
got = (j["totals"]["jobs"], j["totals"]["no_submit"], len(launches), len(unsampled),
       sum(r["submit_ns"] is not None for r in launches),
       all(r["submit_ns"] is None and r["t_submit_host_ns"] is None and
           "no-submit" not in r["missing"] for r in unsampled))
assert got == (48, 0, 29, 21, 8, True), got' "$tmp/j4.json"

# export: a launch without its return is an instant saying so, and the timeline stays valid
"$GRT" export "$tmp/n4.grt" --format json -o "$tmp/n4.json" 2>/dev/null
check "export: 20 unsampled launches as instants, valid trace events" python3 -c '
import json, subprocess, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
ins = [e for e in ev if e.get("ph") == "i" and e["name"].startswith("cuLaunch")]
assert len(ins) == 20 and all(e["args"]["note"] == "return not sampled" for e in ins), len(ins)
subprocess.run([sys.executable, sys.argv[2], sys.argv[1]], check=True, stdout=subprocess.DEVNULL)
' "$tmp/n4.json" "$(dirname "$0")/../tools/check_trace_events.py"
fi

# without uprobe sessions: an entry + return probe pair for 1, entry probes alone for 0, and
# any other N refused in one line
GRT_CUDA_NO_UPROBE_SESSION=1 record_known pair
expect_returns pair 1 uprobe+uretprobe
GRT_CUDA_NO_UPROBE_SESSION=1 record_known entry --launch-returns 0
expect_returns entry 0 uprobe
GRT_CUDA_NO_UPROBE_SESSION=1 "$GRT" record -f -o "$tmp/x.grt" --launch-returns 4 --libcuda "$FAKE" \
	-- "$WL/cuda_known" >/dev/null 2>"$tmp/x.err"
check "--launch-returns 4 without sessions: status 1" [ $? = 1 ]
check "... one line naming the kernel feature" [ "$(wc -l <"$tmp/x.err")" = 1 ] &&
	grep -q "needs uprobe sessions (BPF_TRACE_UPROBE_SESSION, Linux 6.13+)" "$tmp/x.err"

# a launch the thread is still inside when recording stops is recorded, flagged no-return, with
# sessions and without (its entry waits in the thread's launch slot)
hung_launch() {
	local name=$1 wpid
	rm -f "$tmp/fifo"
	mkfifo "$tmp/fifo"
	"$WL/cuda_wait" 3 hang-launch <"$tmp/fifo" >"$tmp/ready" &
	wpid=$!
	exec 7>"$tmp/fifo"
	for _ in $(seq 100); do grep -q ready "$tmp/ready" 2>/dev/null && break; sleep 0.1; done
	"$GRT" record -f -o "$tmp/$name.grt" -p $wpid 2>"$tmp/$name.err" &
	GRT_BG=$!
	check "$name: record -p attached every probe" wait_probes $GRT_BG
	echo go >&7
	exec 7>&-
	sleep 1
	check "$name: record -p stops on SIGINT with status 0" grt_stop
	kill $wpid
	wait $wpid 2>/dev/null
	"$GRT" parse --format json --all "$tmp/$name.grt" >"$tmp/$name.json"
	$EXPECT wait "$tmp/$name.json" $wpid 3 hang-launch || failed=1
	check "$name: launch probes $2" grep -q "\"launch_probes\":\"$2\"" "$tmp/$name.json"
}
[ $sessions = 1 ] && hung_launch hung-session uprobe-session
GRT_CUDA_NO_UPROBE_SESSION=1 hung_launch hung-uretprobe uprobe+uretprobe

for bad in x -1 4x ""; do
	"$GRT" record -f -o "$tmp/b.grt" --launch-returns "$bad" -- true >/dev/null 2>"$tmp/b.err"
	check "--launch-returns '$bad': usage error" [ $? = 2 ]
	check "... naming the option" grep -q "bad value '$bad' for --launch-returns" "$tmp/b.err"
done
exit $failed
