#!/bin/bash
# On the GPU machine: the in-process CUDA calls' timestamps against the syscall source's, with
# the real driver (whose calls make ioctls inside them). The launch micro-benchmark
# (bench/gpu_inproc/launch_loop.cu, driver API and runtime) recorded with `-s cuda,syscall
# --cuda-via inject` on the TSC clock (the default) and on clock_gettime; for each, the check of
# tests/e2e/lib/clock_nesting.py: on each thread no system call lies across a CUDA call's entry
# or return by more than SLACK ns (default 1000), how many lie inside one, and the largest
# overshoot seen.
# usage: bench/gpu_clock_nesting.sh BUILD OUTDIR [SLACK]   (root, nvcc, a GPU)
set -u
BUILD=$(cd "${1:?usage: bench/gpu_clock_nesting.sh BUILD OUTDIR [SLACK]}" && pwd)
OUT=${2:?usage: bench/gpu_clock_nesting.sh BUILD OUTDIR [SLACK]}
SLACK=${3:-1000}
HERE=$(cd "$(dirname "$0")" && pwd)
NAME=gpu_clock_nesting
. "$HERE/gpu_summary.bash"
[ "$(id -u)" = 0 ] || die "needs root"
"$NVCC" -O2 -o "$OUT/launch_loop" "$HERE/gpu_inproc/launch_loop.cu" -lcuda || die "nvcc launch_loop"
say "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)," \
	"$(uname -r), clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource), slack $SLACK ns"
failed=0
for api in driver runtime; do
	for clock in auto monotonic; do
		n=$OUT/${api}_$clock
		GRTRACE_INJECT_DEBUG=1 GRTRACE_INJECT_CLOCK=$clock "$BUILD/grtrace" record -f -s cuda,syscall \
			--cuda-via inject ${LIBCUDA:+--libcuda $LIBCUDA} -o "$n.grt" -- "$OUT/launch_loop" "$api" 256 20 \
			>"$n.out" 2>"$n.err" || { say "record failed: $n ($(tail -1 "$n.err"))"; failed=1; continue; }
		"$BUILD/grtrace" parse --format json --all "$n.grt" >"$n.json"
		line=$(python3 "$HERE/../tests/e2e/lib/clock_nesting.py" "$n.json" --slack "$SLACK") || failed=1
		say "$api $clock ($(grep -o 'call timestamps: .*' "$n.err" | head -1)): $line"
		rm -f "$n.grt" "$n.json"
	done
done
exit $failed
