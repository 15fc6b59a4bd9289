#!/bin/bash
# snoop cuda -p PID on a process already running: libcuda found through its maps, names
# learned late through cuFuncGetName, snoop ending with the process, and a call that never
# returns recorded as such when snooping stops.
BUILD=${1:-build}
. tests/e2e/lib/cuda.bash
K=5

# start_waiting [hang]: the workload runs with its stdin on a fifo we hold open
start_waiting() {
	rm -f "$tmp/fifo"
	mkfifo "$tmp/fifo"
	"$WL/cuda_wait" $K "$@" <"$tmp/fifo" >"$tmp/ready" &
	wpid=$!
	exec 7>"$tmp/fifo"
	for _ in $(seq 100); do
		grep -q "^ready $wpid" "$tmp/ready" && return 0
		sleep 0.1
	done
	return 1
}

check "workload is ready" start_waiting
grt_start "$tmp/json" "$tmp/err" snoop cuda -p "$wpid" --json || { fail "snoop -p starts"; exit 1; }
check "snoop names the pid" grep -q "snooping cuda in pid $wpid" "$tmp/err"
echo go >&7
exec 7>&-
wait $wpid
check "workload ran" [ $? = 0 ]
check "snoop ends by itself when its process exits, status 0" grt_wait
$EXPECT wait "$tmp/json" "$wpid" $K || { failed=1; cut -c1-150 "$tmp/json"; cat "$tmp/err"; }
check "the probed library was found through the process's maps" \
	grep -q "\"message\":\"[^\"]*fake/libcuda.so.1: [0-9]* of [0-9]* entry points probed" "$tmp/json"
# the fake's cuMemcpyPeer_ptds starts with a lock prefix, which the kernel will not probe
# in a library already mapped; everything else still is
check "one refused entry point is skipped and counted, the rest probed" \
	grep -q "fake/libcuda.so.1: \([0-9]*\) of \([0-9]*\) entry points probed, 0 absent, 1 refused" "$tmp/json"
check "... exactly one fewer than the entry points present" python3 -c '
import json, re, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["type"] == "source_status" and "entry points" in r["message"]:
        probed, total = map(int, re.search(r"(\d+) of (\d+) entry", r["message"]).groups())
        sys.exit(0 if probed == total - 1 else 1)
sys.exit(1)' "$tmp/json"

check "workload (hang) is ready" start_waiting hang
grt_start "$tmp/json2" "$tmp/err" snoop cuda -p "$wpid" --json || { fail "snoop -p starts"; exit 1; }
echo go >&7
exec 7>&-
sleep 1 # it is now stuck in cuStreamSynchronize
check "snoop stops on SIGINT with status 0" grt_stop
$EXPECT wait "$tmp/json2" "$wpid" $K hang || failed=1
kill "$wpid"
wait "$wpid" 2>/dev/null

# a pid that does not exist
"$GRT" snoop cuda -p 999999999 >"$tmp/out" 2>"$tmp/err"
check "snoop -p of a missing process: status 1" [ $? = 1 ]
check "... and one line saying so" [ "$(cat "$tmp/err")" = "grtrace: snoop: no process 999999999" ]
exit $failed
