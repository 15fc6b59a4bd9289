#!/bin/bash
# grtrace serve's costs on the fake driver (any machine, no GPU), side by side with record:
#  1. host time added per launch: cuda_storm alone, under `record`, under `serve` (system-wide),
#     ROUNDS rounds of SECONDS each, alternating; the median ns per launch of each.
#  2. the agent's own CPU (user+system of the serve process, /proc/PID/stat) while a workload
#     launches 10,000 times a second for 10 s; and the BPF programs' time (charged to the workload).
#  3. RSS of the agent and the time of one scrape with 100 processes x 50 kernels alive.
# usage: bench/serve_overhead.sh BUILD [ROUNDS] [SECONDS]     (root; prints one line per number)
# targets (issue 14): serve's added time <= record's; agent CPU <= 2% of one core at 10k
# launches/s; RSS <= 50 MB and one scrape <= 50 ms with 100 processes x 50 kernels.
set -u
BUILD=${1:?usage: bench/serve_overhead.sh BUILD [ROUNDS] [SECONDS]}
ROUNDS=${2:-5}
SECONDS_PER=${3:-2}
GRT=$BUILD/grtrace
FAKE=$BUILD/fixtures/fake/libcuda.so.1
WL=$BUILD/fixtures/workloads
TMP=$(mktemp -d)
SERVE=
cleanup() {
	[ -n "$SERVE" ] && kill -INT "$SERVE" 2>/dev/null && wait "$SERVE" 2>/dev/null
	pkill -P $$ cuda_many_kern 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
die() {
	echo "serve_overhead: $*" >&2
	exit 1
}
[ "$(id -u)" = 0 ] || die "needs root"
[ -x "$WL/cuda_many_kernels" ] || die "build first: make BUILD=$BUILD"

# start_serve ARGS: the agent on a free port; sets SERVE (pid) and PORT
start_serve() {
	"$GRT" serve --listen 127.0.0.1:0 --libcuda "$FAKE" "$@" 2>"$TMP/serve.err" &
	SERVE=$!
	for _ in $(seq 300); do
		PORT=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\)/metrics.*|\1|p' "$TMP/serve.err")
		[ -n "$PORT" ] && return 0
		sleep 0.1
	done
	die "serve did not start: $(cat "$TMP/serve.err")"
}
stop_serve() {
	kill -INT "$SERVE"
	wait "$SERVE"
	SERVE=
}
rate() { sed -n 's/.* rate \([0-9]*\)$/\1/p' "$1"; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

echo "machine: $(nproc) CPUs, $(uname -r); fake libcuda (tests/fake_libcuda)"
# 1. added time per launch
for r in $(seq "$ROUNDS"); do
	"$WL/cuda_storm" "$SECONDS_PER" 1 >"$TMP/alone"
	"$GRT" record -f -o "$TMP/r.grt" --libcuda "$FAKE" -- "$WL/cuda_storm" "$SECONDS_PER" 1 \
		>"$TMP/rec" 2>/dev/null
	start_serve
	"$WL/cuda_storm" "$SECONDS_PER" 1 >"$TMP/srv"
	stop_serve
	echo "$(rate "$TMP/alone") $(rate "$TMP/rec") $(rate "$TMP/srv")" >>"$TMP/rates"
done
python3 - "$TMP/rates" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1])]
ns = [statistics.median(1e9 / r[i] for r in rows) for i in range(3)]
print("per launch (median of %d rounds): alone %.0f ns, record %.0f ns (+%.0f), serve %.0f ns (+%.0f)"
      % (len(rows), ns[0], ns[1], ns[1] - ns[0], ns[2], ns[2] - ns[0]))
print("serve's added time <= record's:", "yes" if ns[2] - ns[0] <= ns[1] - ns[0] else "NO")
PY

# 2. the agent's CPU at 10,000 launches/s, with Prometheus-like scrapes every second
start_serve
hz=$(getconf CLK_TCK)
before=$(cpu_ticks "$SERVE")
"$WL/cuda_storm" 10 1 10000 >"$TMP/paced" &
STORM=$!
for _ in $(seq 10); do
	curl -s -o /dev/null "127.0.0.1:$PORT/metrics"
	sleep 1
done
wait $STORM
after=$(cpu_ticks "$SERVE")
bpf=$(curl -s "127.0.0.1:$PORT/metrics" | sed -n 's/^grtrace_bpf_run_seconds_total \(.*\)/\1/p')
python3 -c "
ticks, hz, rate, bpf = $after - $before, $hz, $(rate "$TMP/paced"), float('$bpf' or 0)
print('agent CPU at %d launches/s over 10 s: %.2f%% of one core (target <= 2%%); BPF programs %.2f%% (in the workload)'
      % (rate, 100.0 * ticks / hz / 10, 100.0 * bpf / 10))"
stop_serve

# 3. 100 processes x 50 kernels
start_serve
for _ in $(seq 100); do
	"$WL/cuda_many_kernels" 50 1 60 &
done
for _ in $(seq 300); do
	n=$(curl -s "127.0.0.1:$PORT/metrics" | grep -c '^grtrace_cuda_launches_total{.*comm="cuda_many_kerne')
	[ "$n" = 5000 ] && break
	sleep 0.2
done
[ "$n" = 5000 ] || echo "WARNING: only $n of 5000 kernel series seen"
for _ in 1 2 3 4 5; do
	curl -s -o "$TMP/scrape" -w '%{time_total}\n' "127.0.0.1:$PORT/metrics" >>"$TMP/times"
done
rss=$(awk '/^VmRSS/ {print $2}' "/proc/$SERVE/status")
python3 -c "
import statistics
t = sorted(float(x) for x in open('$TMP/times'))
print('100 processes x 50 kernels: %d kernel series, scrape %d bytes in %.1f ms (median of 5, target <= 50), agent RSS %.1f MB (target <= 50)'
      % ($n, $(stat -c %s "$TMP/scrape"), 1000 * statistics.median(t), $rss / 1024.0))"
pkill -P $$ cuda_many_kern
stop_serve
