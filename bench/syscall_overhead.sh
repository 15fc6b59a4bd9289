#!/bin/bash
# Overhead of the syscall source on a syscall-heavy loop, traced and untraced side by side in one
# run: the loop times its own N getppid() calls; each mode runs REPS times and the median counts.
# Usage: bench/syscall_overhead.sh [BUILD_DIR] [N] [REPS]     (root; prints a table)
set -eu
BUILD=${1:-build}
N=${2:-1000000}
REPS=${3:-5}
G=$BUILD/grtrace
LOOP=$BUILD/bench/syscall_loop
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

mkdir -p "$(dirname "$LOOP")"
cc -O2 -o "$LOOP" "$(dirname "$0")/syscall_loop.c"

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# run_mode LABEL [grtrace record args...]: prints "LABEL median_ns lost_events"
run_mode() {
	local label=$1 lost=0
	shift
	for _ in $(seq "$REPS"); do
		if [ $# -eq 0 ]; then
			"$LOOP" "$N"
		else
			"$G" record -f "$@" -o "$T/t.grt" -- "$LOOP" "$N" 2>"$T/err"
			lost=$((lost + $(sed -n 's/.*(\([0-9]*\) events lost).*/\1/p' "$T/err")))
			rm -f "$T/t.grt"
		fi
	done >"$T/ns"
	echo "$label $(median <"$T/ns") $lost"
}

{
	run_mode untraced
	run_mode "syscall:all" -s syscall
	run_mode "syscall:--syscalls=getppid" -s syscall --syscalls getppid
	run_mode "syscall:--syscalls=read(filtered-out)" -s syscall --syscalls read
	run_mode "untraced(again)"
} >"$T/results"

base=$(awk 'NR == 1 { print $2 }' "$T/results")
printf "%s getppid() calls per run, median of %s runs, %s, %s CPUs\n" "$N" "$REPS" "$(uname -r)" "$(nproc)"
printf "%-40s %10s %12s %12s\n" MODE NS/CALL ADDED_NS LOST_EVENTS
while read -r label ns lost; do
	printf "%-40s %10.1f %12.1f %12s\n" "$label" "$ns" "$(awk -v a="$ns" -v b="$base" 'BEGIN { print a - b }')" "$lost"
done <"$T/results"
