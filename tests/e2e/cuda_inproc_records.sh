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
# The calls' timestamps are CLOCK_MONOTONIC, as the kernel-side sources' are (from the TSC by
# default, from clock_gettime with GRTRACE_INJECT_CLOCK=monotonic): on the calling thread every
# system call lies inside a CUDA call or outside it, never across its entry or return (1 us
# allowed), and cuda_known's closing sleep starts after its last CUDA call returned.
clock_agrees() { # JSON
	python3 - "$1" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
calls = [(r["ts_ns"], r["ts_ns"] + r["api_ns"]) for r in rows
         if r.get("api_ns") is not None and r.get("type") != "syscall" and r.get("comm") == "cuda_known"]
main = {r["pid"] for r in rows if r.get("comm") == "cuda_known"}
sys_ = [(r["ts_ns"], r["ts_ns"] + (r.get("duration_ns") or 0), r["name"]) for r in rows
        if r.get("type") == "syscall" and r["tid"] in main and r.get("state") == "returned"]
SLACK = 1000
across = [(n, s - a, e - b) for s, e, n in sys_ for a, b in calls
          if (a + SLACK < s < b - SLACK and e > b + SLACK) or (s < a - SLACK and a + SLACK < e < b - SLACK)]
sleep = [s for s, e, n in sys_ if n == "clock_nanosleep"]
last = max(b for a, b in calls)
ok = calls and sys_ and not across and sleep and sleep[-1] >= last
print("%d calls, %d system calls, %d across a call%s, sleep %d ns after the last return"
      % (len(calls), len(sys_), len(across), (" " + str(across[:3])) if across else "",
         (sleep[-1] - last) if sleep else -1))
sys.exit(0 if ok else 1)
PY
}
for clock in auto monotonic; do
	GRTRACE_INJECT_CLOCK=$clock "$GRT" record -f -o "$tmp/clock.grt" -s cuda,syscall --cuda-via inject \
		--libcuda "$FAKE" -- "$WL/cuda_known" >/dev/null 2>"$tmp/clock.err"
	check "clock $clock: cuda_known recorded with system calls" [ $? = 0 ]
	"$GRT" parse --format json --all "$tmp/clock.grt" >"$tmp/clock.json"
	said=$(clock_agrees "$tmp/clock.json")
	check "clock $clock: calls and system calls on one clock ($said)" [ $? = 0 ]
done
exit $failed
