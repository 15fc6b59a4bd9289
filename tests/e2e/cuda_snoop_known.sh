#!/bin/bash
# snoop cuda on the known workload: every record type with exact counts and field values,
# in JSON (the records) and in the live text lines.
BUILD=${1:-build}
. tests/e2e/lib/cuda.bash

grt_start "$tmp/json" "$tmp/err" snoop cuda --launch-stacks --libcuda "$FAKE" --json || { fail "snoop starts"; exit 1; }
"$WL/cuda_known" &
wpid=$!
wait $wpid
check "workload ran" [ $? = 0 ]
check "snoop stops on SIGINT with status 0" grt_stop
$EXPECT known "$tmp/json" "$wpid" $$ || failed=1
check "a launched process: the same refused entry point, named" one_refused "$tmp/json"

grt_start "$tmp/text" "$tmp/err" snoop cuda --libcuda "$FAKE" || { fail "snoop (text) starts"; exit 1; }
"$WL/cuda_known" &
wpid=$!
wait $wpid
grt_stop
lines() { grep -c -- "$1" "$tmp/text"; }
check "text: PROBED line for the fake library" \
	grep -q "^\[GPU\] PROBED .*fake/libcuda.so.1: [0-9]* of [0-9]* entry points probed, 0 absent, 1 refused (cuMemcpyPeer_ptds)$" "$tmp/text"
check "text: the column header, exactly" \
	[ "$(grep -m1 "^time_s" "$tmp/text")" = "time_s          pid     tid comm             event" ]
check "text: 10 vecAdd lines with grid and block" \
	[ "$(lines "$wpid .*\[GPU\] KERNEL vecAdd GRID (4,1,1) BLOCK (256,1,1) SHMEM 0 STREAM 0x0  (cuLaunchKernel ")" = 10 ]
check "text: 5 reduce lines" \
	[ "$(lines "\[GPU\] KERNEL reduce GRID (8,2,1) BLOCK (128,1,1) SHMEM 1024 STREAM 0x5000  (cuLaunchKernel ")" = 5 ]
check "text: the failed launch shows its error" \
	[ "$(lines "\[GPU\] KERNEL func@unknown GRID (1,1,1) BLOCK (1,1,1) .*ERR 400)")" = 1 ]
check "text: sync HtoD copy with bandwidth" \
	[ "$(lines "\[GPU\] COPY HtoD 1048576 B 0x[0-9a-f]* -> 0x700000000000 sync [0-9.]* GB/s")" = 1 ]
check "text: async copy without bandwidth" \
	[ "$(lines "\[GPU\] COPY DtoH 256 B 0x700000000000 -> 0x[0-9a-f]* async STREAM 0x5000  (")" = 1 ]
check "text: allocation line" [ "$(lines "\[GPU\] ALLOC pitch 10240 B at 0x700000a00000  (cuMemAllocPitch_v2")" = 1 ]
check "text: free lines" [ "$(lines "\[GPU\] FREE ")" = 5 ]
check "text: sync lines" [ "$(lines "\[GPU\] SYNC ")" = 8 ]
check "text: memset lines" [ "$(lines "\[GPU\] MEMSET ")" = 5 ]
check "text: module lines" [ "$(lines "\[GPU\] MODULE ")" = 7 ]
check "text: comm column" [ "$(grep -c " cuda_known *\[GPU\]" "$tmp/text")" = 87 ]
exit $failed
