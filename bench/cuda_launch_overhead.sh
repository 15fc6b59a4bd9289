#!/bin/bash
# Host time the cuda source adds to each kernel launch, on a GPU machine: one process launches
# an empty kernel in batches untraced, then once under `grtrace record -p` per configuration,
# then untraced again; the medians per launch are compared (added = traced - mean of the two
# untraced phases), and each trace is checked to hold every traced launch and exactly the
# launch returns its --launch-returns asks for.
#
# usage: bench/cuda_launch_overhead.sh BUILD [OUT] [LAUNCHES_PER_BATCH] [BATCHES]
#   BUILD   directory with the grtrace binary (built on the development machine)
#   OUT     where logs and traces go (default: a temporary directory, removed)
# environment:
#   GRT_OVERHEAD_CONFIGS  the traced configurations, record flags separated by '|'
#                         (default "--launch-returns 1|--launch-returns 16|--launch-returns 0")
#   GRT_RECORD_FLAGS      record flags added to every configuration (e.g. --launch-stacks)
#   MODES                 "driver runtime" (default) or either one
#   LAUNCHER              a launcher binary to use instead of building cuda_launch_overhead.cu
# Needs root, nvcc (/usr/local/cuda/bin) and a GPU. Prints one row per phase, side by side;
# target: added_us <= 1.5 per launch. Exits 1 when a trace misses a launch or a return it
# should hold (not for the target, which the last line reports).
set -u
BUILD=${1:?usage: bench/cuda_launch_overhead.sh BUILD [OUT] [LAUNCHES_PER_BATCH] [BATCHES]}
OUT=${2:-}
PER_BATCH=${3:-256}
BATCHES=${4:-200}
CONFIGS=${GRT_OVERHEAD_CONFIGS:---launch-returns 1|--launch-returns 16|--launch-returns 0}
EXTRA_FLAGS=${GRT_RECORD_FLAGS:-}
MODES=${MODES:-driver runtime}
IFS='|' read -r -a CONFIG_LIST <<<"$CONFIGS"
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
if [ -n "${LAUNCHER:-}" ]; then
	cp "$LAUNCHER" "$OUT/cuda_launch_overhead" || die "cannot copy $LAUNCHER"
else
	"$NVCC" -O2 -std=c++17 -o "$OUT/cuda_launch_overhead" "$HERE/cuda_launch_overhead.cu" -lcuda \
		>"$OUT/nvcc.log" 2>&1 || die "nvcc failed: $(tail -3 "$OUT/nvcc.log")"
fi

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

# trace_phase MODE I PID: records traced phase I of the program PID with configuration I
trace_phase() {
	local mode=$1 i=$2 pid=$3 log=$OUT/$1.log trace=$OUT/$1.$2.grt
	# the flags are words: split them
	# shellcheck disable=SC2086
	"$GRT" record -f -o "$trace" $EXTRA_FLAGS ${CONFIG_LIST[$((i - 1))]} -p "$pid" \
		2>"$OUT/$mode.$i.record.log" &
	REC=$!
	wait_probes $REC || die "$mode: grtrace did not attach: $(cat "$OUT/$mode.$i.record.log")"
	echo go >&7
	wait_line "$log" "phase traced$i done" "$pid" ||
		die "$mode: traced phase $i failed: $(tail -3 "$log")"
	kill -INT $REC
	wait $REC || die "$mode: grtrace record failed: $(cat "$OUT/$mode.$i.record.log")"
	REC=
	"$GRT" report "$trace" --kernels --drops --format json >"$OUT/$mode.$i.report.json" ||
		die "$mode: report of phase $i failed"
}

# measure MODE: runs every phase of one program, then writes its rows to OUT/MODE.rows (runs
# in this shell, so the EXIT trap can stop a recorder left running)
measure() {
	local mode=$1 log=$OUT/$1.log pid i
	rm -f "$OUT/fifo"
	mkfifo "$OUT/fifo"
	exec 7<>"$OUT/fifo"
	"$OUT/cuda_launch_overhead" "$mode" "$PER_BATCH" "$BATCHES" "${#CONFIG_LIST[@]}" \
		<"$OUT/fifo" >"$log" 2>&1 &
	pid=$!
	wait_line "$log" "phase untraced done" $pid || die "$mode: untraced phase failed: $(tail -3 "$log")"
	for ((i = 1; i <= ${#CONFIG_LIST[@]}; i++)); do
		trace_phase "$mode" $i $pid
	done
	echo go >&7
	wait $pid || die "$mode: the program failed: $(tail -3 "$log")"
	exec 7>&-
	python3 - "$mode" "$log" "$OUT" "$EXTRA_FLAGS" "${CONFIG_LIST[@]}" >"$OUT/$mode.rows" <<'EOF' ||
import json, re, sys
mode, log, out, extra, configs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
values = {}
for line in open(log):
    words = line.split()
    for k, v in zip(words[::2], words[1::2]):
        values[k] = v
launches = int(values["traced_launches"])
print(mode, "untraced", values["untraced_us"], "-", "-", "-", "-", "-", "-")
for i, config in enumerate(configs, 1):
    r = json.load(open(f"{out}/{mode}.{i}.report.json"))
    recorded = sum(k["launches"] for k in r["kernels"])
    returns = sum(k["api_ns"]["count"] for k in r["kernels"])
    m = re.search(r"--launch-returns[= ]+(\d+)", f"{extra} {config}")
    every = int(m.group(1)) if m else 1
    # one launching thread: its 1st, N+1st... launch keeps its return
    want = (launches + every - 1) // every if every else 0
    ok = recorded == launches and r["drops"]["lost"] == 0 and returns == want
    name = "_".join(f"{extra} {config}".split()) or "default"
    print(mode, name, values[f"traced{i}_us"], values[f"added{i}_us"], launches, recorded,
          r["drops"]["lost"], f"{returns}/{want}", "ok" if ok else "WRONG")
print(mode, "untraced_again", values["untraced_again_us"], "-", "-", "-", "-", "-", "-")
EOF
		die "$mode: unreadable results in $log"
}

echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
echo "launches: $BATCHES batches x $PER_BATCH per phase; median host time per launch;" \
	"added = traced - mean of the untraced phases"
row() {
	printf "%-8s %-36s %10s %9s %9s %9s %6s %13s %6s\n" "$@"
}
row mode phase us/launch added_us launches recorded lost returns/want trace
status=0
within=
for mode in $MODES; do
	measure "$mode" || exit 1
	while read -r m name us added n rec lost returns verdict; do
		row "$m" "$name" "$us" "$added" "$n" "$rec" "$lost" "$returns" "$verdict"
		[ "$verdict" = WRONG ] && status=1
		[ "$added" != - ] && awk -v d="$added" 'BEGIN { exit !(d <= 1.5) }' &&
			within="$within $m:$name"
	done <"$OUT/$mode.rows"
done
[ $status = 0 ] && echo "result: every trace holds every traced launch and the returns asked for" ||
	echo "result: FAILED (a launch or a launch return missing, or events lost)"
echo "within the 1.5 us target:${within:- none}"
exit $status
