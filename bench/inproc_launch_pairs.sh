#!/bin/bash
# The in-process cuda source's cost per driver-API launch on a GPU, paired inside each process
# (bench/gpu_inproc/launch_pairs.cu: recorded batches through the library's wrapper alternate
# with batches through libcuda's own entry point). RUNS processes per mode, the modes' order
# rotated: untraced (both batches reach libcuda directly: the method's own error), library
# (libgrtrace-inject.so preloaded, not recording: what the wrapper alone costs), recorded
# with `-s cuda --cuda-via inject` on the TSC clock (the default) and with
# GRTRACE_INJECT_CLOCK=monotonic. Prints each process's median added ns per launch and, per
# mode, the median over processes; every trace must hold exactly the wrapped launches.
# usage: bench/inproc_launch_pairs.sh BUILD OUTDIR [RUNS] [PAIRS]   (root, nvcc, a GPU)
# environment: MODES (default "untraced library tsc monotonic"), VARIANT_LIB (another
#   libgrtrace-inject.so: adds the mode "variant", recorded
#   with it through GRTRACE_INJECT_LIB), VARIANT_BUILD (another build's directory, grtrace and
#   its library: adds the mode "variant", recorded by that build; for a change of the rings'
#   format, where one build's library cannot serve the other's recorder); FAKE=1 (no GPU: bench/fake_launch_pairs.c on BUILD's
#   fake driver, each launch working through FAKE_CUDA_LAUNCH_TOUCH_KB, default 128, of memory)
set -u
BUILD=$(cd "${1:?usage: bench/inproc_launch_pairs.sh BUILD OUTDIR [RUNS] [PAIRS]}" && pwd)
OUT=${2:?usage: bench/inproc_launch_pairs.sh BUILD OUTDIR [RUNS] [PAIRS]}
RUNS=${3:-9}
PAIRS=${4:-300}
HERE=$(cd "$(dirname "$0")" && pwd)
NAME=inproc_launch_pairs
. "$HERE/gpu_summary.bash"
[ "$(id -u)" = 0 ] || die "needs root"
[ -x "$BUILD/grtrace" ] && [ -e "$BUILD/libgrtrace-inject.so" ] || die "no grtrace or library in $BUILD"
if [ "${FAKE:-0}" = 1 ]; then
	LIBCUDA=$BUILD/fixtures/fake/libcuda.so.1
	export FAKE_CUDA_LAUNCH_TOUCH_KB=${FAKE_CUDA_LAUNCH_TOUCH_KB:-128}
	cc -O2 -I"$HERE/../tests/fake_libcuda" -I"$HERE" -o "$OUT/launch_pairs" "$HERE/fake_launch_pairs.c" \
		-L"$(dirname "$LIBCUDA")" -l:libcuda.so.1 -Wl,-rpath,"$(dirname "$LIBCUDA")" || die "cc fake_launch_pairs"
else
	"$NVCC" -O2 -o "$OUT/launch_pairs" "$HERE/gpu_inproc/launch_pairs.cu" -lcuda || die "nvcc launch_pairs"
fi
say "# $(date -u +%FT%TZ) ${FAKE:+fake driver touching ${FAKE_CUDA_LAUNCH_TOUCH_KB:-} KiB a launch, }$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)," \
	"$(uname -r), clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)," \
	"$RUNS processes per mode, $PAIRS pairs of 256 launches each"

# one MODE RUN: one process; appends its added_ns to OUT/MODE.added
one() {
	local mode=$1 run=$2 n=$OUT/$1_$2 clock=auto got want lib grt
	case $mode in
	untraced) "$OUT/launch_pairs" 256 "$PAIRS" >"$n.out" 2>&1 ;;
	library) LD_PRELOAD=$BUILD/libgrtrace-inject.so "$OUT/launch_pairs" 256 "$PAIRS" >"$n.out" 2>&1 ;;
	tsc | monotonic | variant)
		[ "$mode" = monotonic ] && clock=monotonic
		lib=$BUILD/libgrtrace-inject.so grt=$BUILD/grtrace
		[ "$mode" = variant ] && [ -n "${VARIANT_LIB:-}" ] && lib=$VARIANT_LIB
		[ "$mode" = variant ] && [ -n "${VARIANT_BUILD:-}" ] &&
			lib=$VARIANT_BUILD/libgrtrace-inject.so grt=$VARIANT_BUILD/grtrace
		GRTRACE_INJECT_LIB=$lib GRTRACE_INJECT_CLOCK=$clock timeout 300 "$grt" record -f -s cuda --cuda-via inject \
			${LIBCUDA:+--libcuda $LIBCUDA} -o "$n.grt" -- "$OUT/launch_pairs" 256 "$PAIRS" \
			>"$n.out" 2>"$n.err" || say "record failed: $n ($(tail -1 "$n.err"))"
		got=$(launches_in "$BUILD/grtrace" "$n.grt")
		want=$(sed -n 's/.*launches_wrapped=\([0-9]*\).*/\1/p' "$n.out")
		[ "$got" = "$want" ] || say "MISMATCH: $n recorded $got launches, the wrapper made $want"
		rm -f "$n.grt"
		;;
	esac
	sed -n 's/.*added_ns=\([-0-9.]*\).*/\1/p' "$n.out" | tee -a "$OUT/$mode.added" >"$n.added"
	[ -s "$n.added" ] || die "$mode run $run printed nothing ($(grep . "$n.out" "$n.err" 2>/dev/null | tail -1))"
	say "$(printf '%-9s %2d ' "$mode" "$run")$(cat "$n.out")"
}

rm -f "$OUT"/*.added
read -r -a modes <<<"${MODES:-untraced library tsc monotonic}"
[ -n "${VARIANT_LIB:-}${VARIANT_BUILD:-}" ] && modes+=(variant)
for run in $(seq "$RUNS"); do
	for k in "${!modes[@]}"; do one "${modes[$(((k + run) % ${#modes[@]}))]}" "$run"; done
done
for mode in "${modes[@]}"; do
	sort -g "$OUT/$mode.added" | awk -v mode="$mode" '{ v[NR] = $1 } END {
		printf "%-9s added per launch, median of %d processes %6.1f ns (processes %.1f..%.1f)\n",
			mode, NR, v[int((NR + 1) / 2)], v[1], v[NR] }' | tee -a "$SUMMARY"
done
