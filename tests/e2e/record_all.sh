#!/bin/bash
# record -a: every process, system-wide. The known workload is recorded exactly as with -p,
# a process that dlopen()s a libcuda copy nobody probed yet is found and recorded too.
BUILD=${1:-build}
. tests/e2e/lib/cuda.bash

parse() { "$GRT" parse --format json --all "$1" >"$1.json"; }

grt_start "$tmp/out" "$tmp/err" record -a -o "$tmp/a.grt" --libcuda "$FAKE" ||
	{ fail "record -a starts"; exit 1; }
"$WL/cuda_known" &
kpid=$!
wait $kpid
check "known workload ran" [ $? = 0 ]
"$WL/cuda_late_dlopen" "$(realpath "$FAKE_COPY")" 300 700 7 &
lpid=$!
wait $lpid
check "late-dlopen workload ran" [ $? = 0 ]
check "record -a stops on SIGINT with status 0" grt_stop
check "... saying it stopped on the signal" grep -q "stopped: signal" "$tmp/err"
parse "$tmp/a.grt"
EXPECT_LAUNCH_STACKS=0 $EXPECT known "$tmp/a.grt.json" "$kpid" $$ || failed=1
$EXPECT late "$tmp/a.grt.json" "$lpid" 7 || failed=1
check "the copy found by discovery is named by its own path" \
	grep -q "\"message\":\"$(realpath "$FAKE_COPY"): " "$tmp/a.grt.json"

"$GRT" record -f -a -p 1 -o "$tmp/x.grt" 2>"$tmp/u.err"
check "-a with -p: usage error" [ $? = 2 ]
check "... in one line" grep -q "^grtrace: record: -a traces every process; give it without -p PID or a command$" "$tmp/u.err"
exit $failed
