#!/bin/bash
# The in-process cuda source's cost per launch on a GPU, two builds side by side: the launch
# micro-benchmark (bench/gpu_inproc/launch_loop.cu, driver API and runtime) untraced and
# recorded with `-s cuda --cuda-via inject` by build A and build B, rounds interleaved with the
# order of the three rotated, the benchmark pinned to one CPU (PIN, default 4) so that rounds
# differ by the builds and not by where the scheduler put the thread. Prints per API and mode the
# median of the rounds' medians, their spread, the ns added per launch, and each round's added ns
# against the untraced run of the same round (sorted); every trace must hold every launch.
#
# usage: bench/inproc_launch_builds.sh BUILD_A BUILD_B OUTDIR [ROUNDS]
#   BUILD_A, BUILD_B  directories with grtrace and libgrtrace-inject.so
# environment: MODES (default "untraced A B"; also L: build A's library preloaded, not
#   recording, for what interposing alone costs), PIN (a CPU, or "none"), NOASLR=1 (every run with the same address layout, through
#   setarch -R), LAUNCH_BATCHES (default 200 x 256 launches),
#   GRT_RECORD_FLAGS (more record flags for both builds), A_ENV / B_ENV (VAR=VALUE words set
#   for build A's / B's recorded runs: one build against itself with another setting, e.g.
#   B_ENV=GRTRACE_INJECT_CLOCK=monotonic)
# Needs root, nvcc and a GPU.
set -u
A=$(cd "${1:?usage: bench/inproc_launch_builds.sh BUILD_A BUILD_B OUTDIR [ROUNDS]}" && pwd)
B=$(cd "${2:?usage: bench/inproc_launch_builds.sh BUILD_A BUILD_B OUTDIR [ROUNDS]}" && pwd)
OUT=${3:?usage: bench/inproc_launch_builds.sh BUILD_A BUILD_B OUTDIR [ROUNDS]}
ROUNDS=${4:-7}
BATCHES=${LAUNCH_BATCHES:-200}
PIN=${PIN:-4}
HERE=$(cd "$(dirname "$0")" && pwd)
NAME=inproc_launch_builds
. "$HERE/gpu_summary.bash"
[ "$(id -u)" = 0 ] || die "needs root"
for b in "$A" "$B"; do [ -x "$b/grtrace" ] && [ -e "$b/libgrtrace-inject.so" ] || die "no grtrace or library in $b"; done
"$NVCC" -O2 -o "$OUT/launch_loop" "$HERE/gpu_inproc/launch_loop.cu" -lcuda || die "nvcc launch_loop"
pin=()
[ "$PIN" = none ] || pin=(taskset -c "$PIN")
[ "${NOASLR:-0}" = 1 ] && pin=(setarch "$(uname -m)" -R "${pin[@]}")
say "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1), $(uname -r), $ROUNDS rounds, pinned to ${PIN}, NOASLR=${NOASLR:-0}"
say "# A=$A ${A_ENV:-} B=$B ${B_ENV:-}"

# one MODE API ROUND: one run of the loop, its median ns appended to OUT/API_MODE.ns
one() {
	local mode=$1 api=$2 round=$3 n=$OUT/$2_$1_$3 build envs
	case $mode in
	untraced) "${pin[@]}" "$OUT/launch_loop" "$api" 256 "$BATCHES" >"$n.out" 2>&1 ;;
	L) LD_PRELOAD=$A/libgrtrace-inject.so "${pin[@]}" "$OUT/launch_loop" "$api" 256 "$BATCHES" >"$n.out" 2>&1 ;;
	*)
		build=$A
		envs=${A_ENV:-}
		[ "$mode" = B ] && build=$B && envs=${B_ENV:-}
		# shellcheck disable=SC2086 # GRT_RECORD_FLAGS and the environments are words
		env $envs timeout 300 "$build/grtrace" record -f -s cuda --cuda-via inject ${LIBCUDA:+--libcuda $LIBCUDA} \
			${GRT_RECORD_FLAGS:-} -o "$n.grt" -- "${pin[@]}" "$OUT/launch_loop" "$api" 256 "$BATCHES" \
			>"$n.out" 2>"$n.err" || say "record failed: $n ($(tail -1 "$n.err"))"
		got=$(launches_in "$build/grtrace" "$n.grt")
		[ "$got" = $((256 * (BATCHES + 10))) ] || say "MISSING: $n recorded $got of $((256 * (BATCHES + 10))) launches"
		rm -f "$n.grt"
		;;
	esac
	sed -n 's/.*median_ns=\([0-9.]*\).*/\1/p' "$n.out" | tee -a "$OUT/${api}_$mode.ns" >"$n.ns"
	[ -s "$n.ns" ] || die "$api $mode round $round: the benchmark printed no median ($(cat "$n.out" "$n.err" 2>/dev/null | grep . | tail -1))"
}

rm -f "$OUT"/*.ns # an earlier run's rounds must not join this one's medians
read -r -a modes <<<"${MODES:-untraced A B}"
[ "${modes[0]}" = untraced ] || die "MODES must start with untraced"
for round in $(seq "$ROUNDS"); do
	for api in driver runtime; do
		# the order rotates by round: no mode always first after the GPU sat idle
		for k in "${!modes[@]}"; do one "${modes[$(((k + round) % ${#modes[@]}))]}" "$api" "$round"; done
	done
done

for api in driver runtime; do
	base=$(sort -g "$OUT/${api}_untraced.ns" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
	for mode in "${modes[@]}"; do
		paired=$(for r in $(seq "$ROUNDS"); do
			awk -v a="$(cat "$OUT/${api}_untraced_$r.ns")" '{ printf "%.0f\n", $1 - a }' "$OUT/${api}_${mode}_$r.ns"
		done | sort -g | tr '\n' ' ')
		sort -g "$OUT/${api}_$mode.ns" | awk -v b="$base" -v api="$api" -v mode="$mode" -v p="$paired" '
			{ v[NR] = $1 } END {
				m = v[int((NR + 1) / 2)]
				printf "%-8s %-9s median %7.1f ns (rounds %.1f..%.1f)  added %6.1f ns  per round %s\n",
					api, mode, m, v[1], v[NR], m - b, p }' | tee -a "$SUMMARY"
	done
done
