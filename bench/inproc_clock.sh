#!/bin/bash
# What the in-process cuda source adds per call, by the clock its timestamps come from, on the
# fake driver (any machine, no GPU): cuda_storm (one thread) alone, recorded with the TSC clock
# (the default where the kernel's clocksource is the TSC) and recorded with
# GRTRACE_INJECT_CLOCK=monotonic (clock_gettime for both timestamps), ROUNDS rounds of SECONDS
# each with the three runs' order rotated; the median ns per launch of each, its spread, and
# each round's added ns against that round's run alone. Every recorded launch is checked.
# usage: bench/inproc_clock.sh BUILD [ROUNDS] [SECONDS]     (root)
set -u
BUILD=${1:?usage: bench/inproc_clock.sh BUILD [ROUNDS] [SECONDS]}
ROUNDS=${2:-9}
SECONDS_PER=${3:-1}
GRT=$BUILD/grtrace
FAKE=$BUILD/fixtures/fake/libcuda.so.1
STORM=$BUILD/fixtures/workloads/cuda_storm
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
die() {
	echo "inproc_clock: $*" >&2
	exit 1
}
[ "$(id -u)" = 0 ] || die "needs root"
[ -x "$STORM" ] && [ -x "$GRT" ] || die "build first: make BUILD=$BUILD"

# one MODE: one storm; appends "MODE ns_per_launch" to TMP/rows
one() {
	local mode=$1 made recorded clock=auto
	case $mode in
	alone) "$STORM" "$SECONDS_PER" 1 >"$TMP/out" ;;
	tsc | monotonic)
		[ "$mode" = monotonic ] && clock=monotonic
		GRTRACE_INJECT_CLOCK=$clock "$GRT" record -f -s cuda --cuda-via inject --libcuda "$FAKE" -o "$TMP/r.grt" \
			-- "$STORM" "$SECONDS_PER" 1 >"$TMP/out" 2>"$TMP/err" || die "record: $(tail -1 "$TMP/err")"
		made=$(awk '/^launches/ { print $2 }' "$TMP/out")
		recorded=$("$GRT" report "$TMP/r.grt" --kernels --format json |
			python3 -c 'import json,sys; print(sum(k["launches"] for k in json.load(sys.stdin)["kernels"]))')
		[ "$made" = "$recorded" ] || echo "# $mode: recorded $recorded of $made launches" >&2
		rm -f "$TMP/r.grt"
		;;
	esac
	awk -v m="$mode" '/^launches/ { printf "%s %.2f\n", m, $4 * 1e9 / $2 }' "$TMP/out" >>"$TMP/rows"
}

echo "# $(date -u +%FT%TZ) $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)," \
	"$(uname -r), clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
echo "# $ROUNDS rounds of ${SECONDS_PER} s, one storm thread, modes rotated"
modes=(alone tsc monotonic)
for r in $(seq "$ROUNDS"); do
	for k in 0 1 2; do one "${modes[$(((k + r) % 3))]}"; done
	echo "round" >>"$TMP/rows"
done
python3 - "$TMP/rows" <<'PY'
import statistics, sys
rounds, cur = [], {}
for line in open(sys.argv[1]):
    w = line.split()
    if w[0] == "round":
        rounds.append(cur)
        cur = {}
    else:
        cur[w[0]] = float(w[1])
alone = statistics.median(r["alone"] for r in rounds)
for mode in ("alone", "tsc", "monotonic"):
    v = sorted(r[mode] for r in rounds)
    added = sorted(round(r[mode] - r["alone"]) for r in rounds)
    print("%-9s median %6.1f ns per launch (rounds %.1f..%.1f)  added %+6.1f ns  per round %s"
          % (mode, statistics.median(v), v[0], v[-1], statistics.median(v) - alone,
             " ".join(map(str, added)) if mode != "alone" else "-"))
PY
