#!/bin/bash
# Throughput of the cuda source: a launch storm against the fake libcuda, recorded with
# `grtrace record`; events/s recorded, events lost, and the highest paced rate with no loss.
#
# usage: bench/cuda_storm.sh BUILD [SECONDS] [THREADS] [RATES]
#   BUILD    build directory (make BUILD=...), with its fixtures
#   SECONDS  length of each storm (default 3)
#   THREADS  storm threads (default: the number of CPUs)
#   RATES    paced rates to try, launches/s, space separated
#            (default "100000 200000 300000 400000 600000 800000 1000000 1500000 2000000")
# environment: GRT_RECORD_FLAGS, record flags added to every run (e.g. --launch-returns 0)
# Needs root. Prints one table row per run and a summary line; the trace files are deleted.
set -u
BUILD=${1:?usage: bench/cuda_storm.sh BUILD [SECONDS] [THREADS] [RATES]}
SECONDS_EACH=${2:-3}
THREADS=${3:-$(nproc)}
RATES=${4:-100000 200000 300000 400000 600000 800000 1000000 1500000 2000000}
GRT=$BUILD/grtrace
FAKE=$BUILD/fixtures/fake/libcuda.so.1
STORM=$BUILD/fixtures/workloads/cuda_storm
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

for f in "$GRT" "$FAKE" "$STORM"; do
	[ -e "$f" ] || { echo "cuda_storm: missing $f (run make BUILD=$BUILD)" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "cuda_storm: needs root" >&2; exit 1; }

# cpu_ticks PID: user+system clock ticks the process itself has used so far
cpu_ticks() {
	awk '{ sub(/.*\) /, ""); print $12 + $13 }' /proc/"$1"/stat 2>/dev/null || echo 0
}

# run RATE: records one storm (RATE 0 = as fast as it goes); prints "offered/s recorded/s
# lost missing recorder_ns_per_event", recorded counting launch records in the trace and the
# last the recorder's own CPU time (sampled just before the storm ends) per recorded event.
run() {
	local rate=$1 made seconds recorded lost rpid ticks
	# shellcheck disable=SC2086 # the flags are words
	"$GRT" record -f -o "$TMP/s.grt" --libcuda "$FAKE" ${GRT_RECORD_FLAGS:-} \
		-- "$STORM" "$SECONDS_EACH" "$THREADS" "$rate" \
		>"$TMP/out" 2>"$TMP/err" &
	rpid=$!
	sleep "$(awk -v s="$SECONDS_EACH" 'BEGIN { print s - 0.2 }')"
	ticks=$(cpu_ticks $rpid)
	wait $rpid || { echo "record failed: $(cat "$TMP/err")" >&2; return 1; }
	made=$(awk '/^launches/ { print $2 }' "$TMP/out")
	seconds=$(awk '/^launches/ { print $4 }' "$TMP/out")
	"$GRT" report "$TMP/s.grt" --kernels --drops --format json >"$TMP/r.json" || return 1
	read -r recorded lost < <(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(sum(k["launches"] for k in r["kernels"]), r["drops"]["lost"])' "$TMP/r.json")
	rm -f "$TMP/s.grt"
	awk -v m="$made" -v s="$seconds" -v r="$recorded" -v l="$lost" -v t="$ticks" -v hz="$(getconf CLK_TCK)" \
		-v run_s="$SECONDS_EACH" 'BEGIN {
		# events recorded up to the sample, assuming a steady rate
		seen = r * (run_s - 0.2) / run_s
		printf "%.0f %.0f %d %d %.0f\n", m / s, r / s, l, m - r - l, seen ? t / hz * 1e9 / seen : 0 }'
}

untraced=$("$STORM" "$SECONDS_EACH" "$THREADS" | awk '/^launches/ { print $6 }')
echo "machine: $(nproc) CPUs, $(uname -r), load $(cut -d" " -f1-3 /proc/loadavg); storm: $THREADS threads x ${SECONDS_EACH}s; untraced: $untraced launches/s; record flags: ${GRT_RECORD_FLAGS:-none}"
printf "%-12s %14s %14s %10s %10s %16s\n" "paced_at" "offered/s" "recorded/s" "lost" "missing" \
	"recorder_ns/ev"
read -r offered recorded lost missing cost < <(run 0)
printf "%-12s %14s %14s %10s %10s %16s\n" "unpaced" "$offered" "$recorded" "$lost" "$missing" "$cost"
best=0
for rate in $RATES; do
	read -r offered recorded lost missing cost < <(run "$rate")
	printf "%-12s %14s %14s %10s %10s %16s\n" "$rate" "$offered" "$recorded" "$lost" "$missing" "$cost"
	# a rate counts when the storm kept up with it (95%) and nothing was lost
	if [ "$lost" = 0 ] && [ "$missing" = 0 ] && [ "$offered" -ge $((rate * 95 / 100)) ]; then
		best=$rate
	fi
done
echo "highest paced rate recorded without loss: $best events/s (target >= 1000000)"
