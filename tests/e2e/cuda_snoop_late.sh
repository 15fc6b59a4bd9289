#!/bin/bash
# A process that dlopen()s libcuda late: the probed copy is caught from its first call;
# a second copy at another path is found by the maps rescan and probed too.
BUILD=${1:-build}
. tests/e2e/lib/cuda.bash
N=7

grt_start "$tmp/json" "$tmp/err" snoop cuda --libcuda "$FAKE" --json || { fail "snoop starts"; exit 1; }
"$WL/cuda_late_dlopen" "$(realpath "$FAKE")" 300 0 $N &
wpid=$!
wait $wpid
check "workload (same copy) ran" [ $? = 0 ]
grt_stop
$EXPECT late "$tmp/json" "$wpid" $N || failed=1

# another copy: pid mode, the workload held at a gate until snoop is attached
mkfifo "$tmp/gate"
WORKLOAD_GATE=$tmp/gate "$WL/cuda_late_dlopen" "$(realpath "$FAKE_COPY")" 100 "${GRT_E2E_LATE_MS:-1500}" $N &
wpid=$!
grt_start "$tmp/json2" "$tmp/err" snoop cuda -p "$wpid" --libcuda "$FAKE" --json ||
	{ fail "snoop -p starts"; exit 1; }
check "the workload opened its gate" open_gate "$tmp/gate"
wait $wpid
check "workload (other copy) ran" [ $? = 0 ]
check "snoop ends with its process" grt_wait
$EXPECT late "$tmp/json2" "$wpid" $N || failed=1
check "both copies were probed" \
	[ "$(grep -c '"type":"source_status".*entry points probed' "$tmp/json2")" = 2 ]
check "the second one by its own path" grep -q "\"message\":\"$(realpath "$FAKE_COPY"): " "$tmp/json2"
exit $failed
