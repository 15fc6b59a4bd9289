#!/bin/bash
# The cuda source's in-process path against its uprobe path on the development machine (fake
# libcuda, no GPU), side by side in one run:
#  1. a 2-thread launch storm, unpaced and paced at RATE launches/s in total: the rate the
#     threads reached, launches recorded per second, launches lost; untraced, with
#     libgrtrace-inject.so loaded but not recording, --cuda-via inject, --cuda-via uprobe;
#     ROUNDS rounds, interleaved, every number printed;
#  2. callgrind: instructions per launch, untraced and recorded in-process (rings that nobody
#     drains, so the recorder's work is not counted: the traced thread's own cost).
#
# usage: bench/cuda_inproc.sh BUILD [SECONDS] [RATE] [ROUNDS]   (root; RATE default 5000000)
# environment: PACE=spin|sleep how a paced thread ahead of its rate waits (cuda_storm's PACE;
#   default spin: the threads keep both CPUs, the recorder gets what the scheduler gives it;
#   sleep: they give the CPU back between batches, as threads that wait between calls);
#   MODES (default "untraced library inject uprobe"); VARIANT_BUILD (another build's directory:
#   its grtrace and library record in-process as one more mode, "variant", in the same rounds);
#   PACED_ONLY=1 (only the paced storms: an unpaced one writes gigabytes the next round's
#   storm shares the machine's writeback with); VARIANT_ENV (VAR=VALUE words the variant mode
#   records with, e.g. GRTRACE_CUDA_RING_KB=16384; the variant is then this BUILD unless
#   VARIANT_BUILD names another); TRACE_DIR (where the traces go, default a temporary directory
#   under $TMPDIR; /dev/shm leaves the disk's writeback out)
set -u
BUILD=${1:?usage: bench/cuda_inproc.sh BUILD [SECONDS] [RATE] [ROUNDS]}
SECONDS_EACH=${2:-2}
RATE=${3:-5000000}
ROUNDS=${4:-3}
GRT=$BUILD/grtrace
LIB=$BUILD/libgrtrace-inject.so
FAKE=$BUILD/fixtures/fake/libcuda.so.1
STORM=$BUILD/fixtures/workloads/cuda_storm
TMP=$(mktemp -d)
TRACES=$TMP
[ -n "${TRACE_DIR:-}" ] && TRACES=$(mktemp -d -p "$TRACE_DIR")
trap 'rm -rf "$TMP" "$TRACES"' EXIT

for f in "$GRT" "$LIB" "$FAKE" "$STORM"; do
	[ -e "$f" ] || { echo "cuda_inproc: missing $f (run make BUILD=$BUILD)" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "cuda_inproc: needs root" >&2; exit 1; }
PACE=${PACE:-spin}
case $PACE in spin | sleep) ;; *) echo "cuda_inproc: PACE is spin or sleep, not $PACE" >&2; exit 1 ;; esac
cc -std=gnu11 -O2 -D_GNU_SOURCE -Isrc -o "$TMP/inproc_rings" bench/inproc_rings.c || exit 1

# storm MODE RATE: one 2-thread storm; prints "reached/s recorded/s lost"
storm() {
	local mode=$1 rate=$2 made seconds recorded=0 lost=0

	sync # the trace before this one is written back first, not during this storm
	case $mode in
	untraced) "$STORM" "$SECONDS_EACH" 2 "$rate" "$PACE" >"$TMP/out" ;;
	library) LD_PRELOAD=$LIB "$STORM" "$SECONDS_EACH" 2 "$rate" "$PACE" >"$TMP/out" ;;
	inject | uprobe | variant)
		local grt=$GRT via=$mode envs=()
		[ "$mode" = variant ] && grt=${VARIANT_BUILD:-$BUILD}/grtrace via=inject &&
			read -r -a envs <<<"${VARIANT_ENV:-}"
		env ${envs[@]+"${envs[@]}"} "$grt" record -f -o "$TRACES/s.grt" --cuda-via "$via" \
			--libcuda "$FAKE" -- "$STORM" "$SECONDS_EACH" 2 "$rate" "$PACE" >"$TMP/out" \
			2>"$TMP/err" || { echo "record failed: $(cat "$TMP/err")" >&2; return 1; }
		"$grt" report "$TRACES/s.grt" --kernels --drops --format json >"$TMP/r.json" || return 1
		read -r recorded lost < <(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(sum(k["launches"] for k in r["kernels"]), r["drops"]["lost"])' "$TMP/r.json")
		rm -f "$TRACES/s.grt"
		;;
	esac
	made=$(awk '/^launches/ { print $2 }' "$TMP/out")
	seconds=$(awk '/^launches/ { print $4 }' "$TMP/out")
	awk -v m="$made" -v s="$seconds" -v r="$recorded" -v l="$lost" \
		'BEGIN { printf "%.0f %.0f %d\n", m / s, r / s, l }'
}

read -r -a modes <<<"${MODES:-untraced library inject uprobe}"
rates=(0 "$RATE")
[ "${PACED_ONLY:-0}" = 1 ] && rates=("$RATE")
if [ -n "${VARIANT_BUILD:-}${VARIANT_ENV:-}" ]; then
	[ -x "${VARIANT_BUILD:-$BUILD}/grtrace" ] ||
		{ echo "cuda_inproc: no ${VARIANT_BUILD:-$BUILD}/grtrace" >&2; exit 1; }
	modes+=(variant)
fi
echo "# machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $(uname -r)"
echo "# storm: 2 threads, ${SECONDS_EACH} s each, $ROUNDS rounds interleaved, paced by $PACE"
case " ${modes[*]} " in
*" variant "*) echo "# variant: ${VARIANT_BUILD:-$BUILD}/grtrace${VARIANT_ENV:+ with $VARIANT_ENV}" ;;
esac
echo "# traces written in $TRACES"
printf '%-6s %-9s %-9s %14s %14s %12s\n' round mode paced reached/s recorded/s lost
for round in $(seq "$ROUNDS"); do
	for rate in "${rates[@]}"; do
		for mode in "${modes[@]}"; do
			read -r reached recorded lost < <(storm $mode "$rate") || continue
			printf '%-6s %-9s %-9s %14s %14s %12s\n' "$round" $mode \
				"$([ "$rate" = 0 ] && echo no || echo "$rate")" "$reached" \
				"$([ $mode = untraced ] || [ $mode = library ] && echo - || echo "$recorded")" \
				"$([ $mode = untraced ] || [ $mode = library ] && echo - || echo "$lost")"
		done
	done
done

# instructions per launch: inclusive cost of cuLaunchKernel as the storm thread calls it
ir_per_launch() {
	local log=$TMP/cg.log launches ir
	"$@" valgrind --tool=callgrind --callgrind-out-file="$TMP/cg.out" \
		--toggle-collect=cuLaunchKernel "$STORM" 1 1 >"$TMP/out" 2>"$log"
	launches=$(awk '/^launches/ { print $2 }' "$TMP/out")
	ir=$(sed -n 's/^==[0-9]*== Collected : //p' "$log")
	echo "$ir $launches" | awk '{ printf "%.0f", $1 / $2 }'
}
if command -v valgrind >/dev/null; then
	base=$(ir_per_launch env)
	traced=$(ir_per_launch "$TMP/inproc_rings" "$LIB" 256 --)
	echo "# callgrind, instructions per cuLaunchKernel: untraced $base, recorded in-process" \
		"$traced: $((traced - base)) added per recorded launch (return, kernel argument" \
		"words, comm, cpu and both timestamps included)"
fi
