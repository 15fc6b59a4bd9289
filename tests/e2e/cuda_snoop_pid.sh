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
# the fake's cuMemcpyPeer_ptds starts with a lock prefix, which the kernel will not probe;
# everything else still is
check "the library found through the process's maps: one refused entry point, named" \
	one_refused "$tmp/json"

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
