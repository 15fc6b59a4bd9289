#!/bin/bash
# snoop cuda -p PID on a process already running: libcuda found through its maps, names
# learned late through cuFuncGetName, snoop ending with the process, and a call that never
# returns recorded as such when snooping stops.
BUILD=${1:-build}
. tests/e2e/lib/cuda.bash
K=5

# start_waiting [hang]: the workload runs with its stdin on a fifo we hold open
start_waiting() {
	rm -f "$TMP/fifo"
	mkfifo "$TMP/fifo"
	"$WL/cuda_wait" $K "$@" <"$TMP/fifo" >"$TMP/ready" &
	wpid=$!
	exec 7>"$TMP/fifo"
	for _ in $(seq 100); do
		grep -q "^ready $wpid" "$TMP/ready" && return 0
		sleep 0.1
	done
	return 1
}

check "workload is ready" start_waiting
grt_start "$TMP/json" "$TMP/err" snoop cuda -p "$wpid" --json || { fail "snoop -p starts"; exit 1; }
check "snoop names the pid" grep -q "snooping cuda in pid $wpid" "$TMP/err"
echo go >&7
exec 7>&-
wait $wpid
check "workload ran" [ $? = 0 ]
check "snoop ends by itself when its process exits, status 0" grt_wait
$EXPECT wait "$TMP/json" "$wpid" $K || { FAILED=1; cut -c1-150 "$TMP/json"; cat "$TMP/err"; }
check "the probed library was found through the process's maps" \
	grep -q "\"message\":\"[^\"]*fake/libcuda.so.1: [0-9]* of [0-9]* entry points probed" "$TMP/json"
# the fake's cuMemcpyPeer_ptds starts with a lock prefix, which the kernel will not probe
# in a library already mapped; everything else still is
check "one refused entry point is skipped and counted, the rest probed" \
	grep -q "fake/libcuda.so.1: \([0-9]*\) of \([0-9]*\) entry points probed, 0 absent, 1 refused" "$TMP/json"
check "... exactly one fewer than the entry points present" python3 -c '
import json, re, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["type"] == "source_status" and "entry points" in r["message"]:
        probed, total = map(int, re.search(r"(\d+) of (\d+) entry", r["message"]).groups())
        sys.exit(0 if probed == total - 1 else 1)
sys.exit(1)' "$TMP/json"

check "workload (hang) is ready" start_waiting hang
grt_start "$TMP/json2" "$TMP/err" snoop cuda -p "$wpid" --json || { fail "snoop -p starts"; exit 1; }
echo go >&7
exec 7>&-
sleep 1 # it is now stuck in cuStreamSynchronize
check "snoop stops on SIGINT with status 0" grt_stop
$EXPECT wait "$TMP/json2" "$wpid" $K hang || FAILED=1
kill "$wpid"
wait "$wpid" 2>/dev/null

# a pid that does not exist
"$GRT" snoop cuda -p 999999999 >"$TMP/out" 2>"$TMP/err"
check "snoop -p of a missing process: status 1" [ $? = 1 ]
check "... and one line saying so" [ "$(cat "$TMP/err")" = "grtrace: snoop: no process 999999999" ]
exit $FAILED
