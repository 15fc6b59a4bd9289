#!/bin/bash
# snoop cuda on T threads x K launches: exact totals, per-thread counts, no loss.
BUILD=${1:-build}
. tests/e2e/lib/cuda.bash
T=4
K=2500

grt_start "$TMP/json" "$TMP/err" snoop cuda --libcuda "$FAKE" --json || { fail "snoop starts"; exit 1; }
"$WL/cuda_threads" $T $K &
wpid=$!
wait $wpid
check "workload ran" [ $? = 0 ]
check "snoop stops with status 0" grt_stop
$EXPECT threads "$TMP/json" "$wpid" $T $K || FAILED=1
exit $FAILED
