#!/bin/bash
# Host time the cuda source adds to each kernel launch, on a GPU machine: one process launches
# an empty kernel in batches untraced, then under `grtrace record -p`, then untraced again;
# the medians per launch are compared (added = traced - mean of the untraced phases), and the
# trace is checked to hold every traced launch.
#
# usage: bench/cuda_launch_overhead.sh BUILD [OUT] [LAUNCHES_PER_BATCH] [BATCHES]
#   BUILD   directory with the grtrace binary (built on the development machine)
#   OUT     where logs and traces go (default: a temporary directory, removed)
# Needs root, nvcc (/usr/local/cuda/bin) and a GPU. Target: added_us <= 1.5 per launch.
set -u
BUILD=${1:?usage: bench/cuda_launch_overhead.sh BUILD [OUT] [LAUNCHES_PER_BATCH] [BATCHES]}
OUT=${2:-}
PER_BATCH=${3:-256}
BATCHES=${4:-200}
GRT=$BUILD/grtrace
HERE=$(cd "$(dirname "$0")" && pwd)
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
KEEP=1
if [ -z "$OUT" ]; then
	OUT=$(mktemp -d)
	KEEP=0
fi
mkdir -p "$OUT"
REC=
cleanup() {
	[ -n "$REC" ] && kill -INT "$REC" 2>/dev/null
	exec 7>&- 2>/dev/null
	[ $KEEP = 1 ] || rm -rf "$OUT"
}
trap cleanup EXIT
die() {
	echo "cuda_launch_overhead: $*" >&2
	exit 1
}

[ "$(id -u)" = 0 ] || die "needs root"
. "$HERE/../tests/e2e/lib/bpf_links.bash" || die "no tests/e2e/lib/bpf_links.bash beside bench/"
[ -x "$GRT" ] || die "no grtrace in $BUILD"
"$NVCC" -O2 -std=c++17 -o "$OUT/cuda_launch_overhead" "$HERE/cuda_launch_overhead.cu" -lcuda \
	>"$OUT/nvcc.log" 2>&1 || die "nvcc failed: $(tail -3 "$OUT/nvcc.log")"

# wait_line FILE TEXT PID: until FILE has a line TEXT while PID lives; 120 s at most
wait_line() {
	for _ in $(seq 1200); do
		grep -qx "$2" "$1" 2>/dev/null && return 0
		kill -0 "$3" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# wait_probes PID: until PID holds BPF links whose number has not changed for 0.5 s
wait_probes() {
	wait_bpf_links "$1" "^link_type:" 2 600
}

# measure MODE: writes "MODE untraced traced again added traced_launches recorded lost"
# to OUT/MODE.row (runs in this shell, so the EXIT trap can stop a recorder left running)
measure() {
	local mode=$1 log=$OUT/$1.log trace=$OUT/$1.grt pid
	rm -f "$OUT/fifo"
	mkfifo "$OUT/fifo"
	exec 7<>"$OUT/fifo"
	"$OUT/cuda_launch_overhead" "$mode" "$PER_BATCH" "$BATCHES" <"$OUT/fifo" >"$log" 2>&1 &
	pid=$!
	wait_line "$log" "phase untraced done" $pid || die "$mode: untraced phase failed: $(tail -3 "$log")"
	"$GRT" record -o "$trace" -p $pid 2>"$OUT/$mode.record.log" &
	REC=$!
	wait_probes $REC || die "$mode: grtrace did not attach: $(cat "$OUT/$mode.record.log")"
	echo go >&7
	wait_line "$log" "phase traced done" $pid || die "$mode: traced phase failed: $(tail -3 "$log")"
	kill -INT $REC
	wait $REC || die "$mode: grtrace record failed: $(cat "$OUT/$mode.record.log")"
	REC=
	echo go >&7
	wait $pid || die "$mode: the program failed: $(tail -3 "$log")"
	exec 7>&-
	"$GRT" report "$trace" --kernels --drops --format json >"$OUT/$mode.report.json" ||
		die "$mode: report failed"
	python3 - "$mode" "$log" "$OUT/$mode.report.json" >"$OUT/$mode.row" <<'EOF' ||
import json, sys
mode, log, report = sys.argv[1:4]
values = {}
for line in open(log):
    words = line.split()
    for k, v in zip(words[::2], words[1::2]):
        values[k] = v
r = json.load(open(report))
recorded = sum(k["launches"] for k in r["kernels"])
print(mode, values["untraced_us"], values["traced_us"], values["untraced_again_us"],
      values["added_us"], values["traced_launches"], recorded, r["drops"]["lost"])
EOF
		die "$mode: unreadable results in $log"
}

echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
echo "launches: $BATCHES batches x $PER_BATCH per phase; median host time per launch"
printf "%-8s %12s %10s %12s %9s %16s %9s %6s\n" mode untraced_us traced_us untraced2_us added_us \
	traced_launches recorded lost
status=0
for mode in driver runtime; do
	measure $mode || exit 1
	read -r m a b c d n rec lost <"$OUT/$mode.row"
	printf "%-8s %12s %10s %12s %9s %16s %9s %6s\n" "$m" "$a" "$b" "$c" "$d" "$n" "$rec" "$lost"
	[ "$rec" = "$n" ] && [ "$lost" = 0 ] || status=1
	awk -v d="$d" 'BEGIN { exit !(d <= 1.5) }' || status=1
done
[ $status = 0 ] && echo "result: every traced launch recorded, added time within 1.5 us" ||
	echo "result: FAILED (a launch missing or lost, or more than 1.5 us added)"
exit $status
