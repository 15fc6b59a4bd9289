#!/bin/bash
# snoop cuda on T threads x K launches: exact totals, per-thread counts, no loss.
BUILD=${1:-build}
. tests/e2e/lib/cuda.bash
T=4
K=2500

grt_start "$tmp/json" "$tmp/err" snoop cuda --libcuda "$FAKE" --json || { fail "snoop starts"; exit 1; }
"$WL/cuda_threads" $T $K &
wpid=$!
wait $wpid
check "workload ran" [ $? = 0 ]
check "snoop stops with status 0" grt_stop
$EXPECT threads "$tmp/json" "$wpid" $T $K || failed=1

# a ring buffer far too small: the text view shows every launch or counts it lost
export GRT_CUDA_RING_KB=4
grt_start "$tmp/text" "$tmp/err" snoop cuda --libcuda "$FAKE" || { fail "snoop starts"; exit 1; }
"$WL/cuda_storm" 1 1 >"$tmp/storm"
grt_stop
unset GRT_CUDA_RING_KB
made=$(awk '/^launches/ { print $2 }' "$tmp/storm")
shown=$(grep -c "\[GPU\] KERNEL storm GRID (1,1,1) BLOCK (32,1,1)" "$tmp/text")
lost=$(awk '/\[GPU\] LOST/ { n += $3 } END { print n + 0 }' "$tmp/text")
check "snoop with a 4 KiB ring lost events ($lost)" [ "$lost" -gt 0 ]
check "... shown + lost = launches made ($shown + $lost = $made)" [ $((shown + lost)) = "$made" ]
exit $failed
