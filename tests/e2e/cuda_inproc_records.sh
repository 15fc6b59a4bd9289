#!/bin/bash
# The records the in-process path gives for known fake-CUDA workloads, against the expected
# records in tests/data/inproc_*.jsonl (written by cuda_golden.py from a recording made before
# the recorder's launch path was shortened): API, arguments, kernel names, grid/block, stream,
# return code, whether each call is timed, and the count of every record type, exact.
#
# The expected files follow the workloads and the fake driver: after a change to either, record
# again and rewrite them with tests/e2e/lib/cuda_golden.py (the three commands below, output
# to the file), and read the diff.
BUILD=${1:-build}
. tests/e2e/lib/cuda.bash

GOLDEN="python3 tests/e2e/lib/cuda_golden.py"

# expect NAME GOLDEN_OPTIONS RECORD_ARGS...: records in-process with ASLR off, compares
expect_records() {
	local name=$1 sorted=$2
	shift 2
	setarch -R "$GRT" record -f -o "$tmp/$name.grt" --cuda-via inject --libcuda "$FAKE" "$@" \
		>"$tmp/$name.out" 2>"$tmp/$name.err"
	check "$name: recorded, status 0" [ $? = 0 ]
	check "$name: no call lost" grep -q "(0 events lost)" "$tmp/$name.err"
	"$GRT" parse --format json --all "$tmp/$name.grt" >"$tmp/$name.json"
	$GOLDEN "$tmp/$name.json" $sorted >"$tmp/$name.got"
	check "$name: every call record as expected ($(tail -1 "$tmp/$name.got"))" \
		diff -u "tests/data/inproc_$name.jsonl" "$tmp/$name.got" ||
		diff -u "tests/data/inproc_$name.jsonl" "$tmp/$name.got" | head -20
}

# every call class of the fake driver, launches after the first through the short path
expect_records known "" -- "$WL/cuda_known"
# one launch return in 4 recorded: the others are flagged not sampled, without time or result
expect_records known_returns4 "" --launch-returns 4 -- "$WL/cuda_known"
# 4 named threads, 300 launches each: per-thread names and exact counts
expect_records threads --sorted -- "$WL/cuda_threads" 4 300
# The calls' timestamps are CLOCK_MONOTONIC, as the kernel-side sources' are (the raw TSC by
# default, converted by the recorder; clock_gettime with GRTRACE_INJECT_CLOCK=monotonic): on the
# calling thread every
# system call lies inside a CUDA call or outside it, never across its entry or return (1 us
# allowed), and cuda_known's closing sleep starts after its last CUDA call returned.
clock_agrees() { # JSON
	python3 tests/e2e/lib/clock_nesting.py "$1" --sleep-after-last cuda_known
}
# The workload waits at its gate for 0.1 s once it runs (its calls then fall between the
# recorder's clock samples of a later drain, not its first); the library says which clock it took.
tsc_here=clock_gettime
[ "$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)" = tsc ] &&
	tsc_here="the TSC, converted by the recorder"
mkfifo "$tmp/clock_gate"
for clock in auto monotonic; do
	WORKLOAD_GATE=$tmp/clock_gate GRTRACE_INJECT_DEBUG=1 GRTRACE_INJECT_CLOCK=$clock \
		"$GRT" record -f -o "$tmp/clock.grt" -s cuda,syscall --cuda-via inject \
		--libcuda "$FAKE" -- "$WL/cuda_known" >/dev/null 2>"$tmp/clock.err" &
	rec=$!
	for _ in $(seq 200); do
		pgrep -x cuda_known >/dev/null && break
		sleep 0.05
	done
	sleep 0.1
	check "clock $clock: the workload opened its gate" open_gate "$tmp/clock_gate"
	wait $rec
	check "clock $clock: cuda_known recorded with system calls" [ $? = 0 ]
	want=$tsc_here
	[ $clock = monotonic ] && want=clock_gettime
	check "clock $clock: the library timed the calls with $want" \
		grep -q "call timestamps: $want" "$tmp/clock.err"
	"$GRT" parse --format json --all "$tmp/clock.grt" >"$tmp/clock.json"
	said=$(clock_agrees "$tmp/clock.json")
	check "clock $clock: calls and system calls on one clock ($said)" [ $? = 0 ]
done
exit $failed
