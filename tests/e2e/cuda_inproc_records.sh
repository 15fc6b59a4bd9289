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
exit $failed
