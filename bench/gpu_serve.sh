#!/bin/bash
# The H100 proof of grtrace serve (issue 14): the agent runs system-wide while a PyTorch training
# loop and a second CUDA program run at the same time; each one's launch counter must equal the
# program's own count: the PyTorch profiler's kernel count (from a separate, untraced-by-grtrace
# run of the same deterministic loop) and the second program's known launches. Then serve -s
# uvm,pcie on a managed-memory program (bench/uvm_workload.cu): its UVM migrated bytes must equal
# what the program moved, its faults be counted, and the NVML device gauges agree with
# nvidia-smi. Then the added host time per launch of serve beside record, alternating in one
# launcher process (bench/cuda_launch_overhead.cu), SERVE_ROUNDS rounds (default 3), with the
# BPF programs' own time per launch of each (kernel.bpf_stats_enabled, on during that part).
#
# usage: bench/gpu_serve.sh BUILD [STEPS] [SECOND_LAUNCHES]
# environment: LIBCUDA (default: the loader cache's libcuda.so.1), PYTHON (default python3),
#   SERVE_PARTS (default "train uvm overhead": which parts run), SERVE_ROUNDS (default 3),
#   SERVE_BPF_STATS (default 1: BPF run-time statistics on for both tools in the overhead part)
# Needs root, nvcc, python3 with torch (cuda), the nvidia_uvm module. Prints ok/FAIL lines and the overhead rows;
# exits 1 on a FAIL.
set -u
BUILD=${1:?usage: bench/gpu_serve.sh BUILD [STEPS] [SECOND_LAUNCHES]}
STEPS=${2:-50}
SECOND=${3:-5000}
HERE=$(cd "$(dirname "$0")" && pwd)
GRT=$BUILD/grtrace
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
PY=${PYTHON:-python3}
TMP=$(mktemp -d)
SERVE=
failed=0
OLD_BPF_STATS=
cleanup() {
	[ -n "$SERVE" ] && kill -INT "$SERVE" 2>/dev/null && wait "$SERVE" 2>/dev/null
	[ -n "$OLD_BPF_STATS" ] && sysctl -q -w kernel.bpf_stats_enabled="$OLD_BPF_STATS"
	exec 7>&- 8>&- 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
die() {
	echo "gpu_serve: $*" >&2
	exit 1
}
[ "$(id -u)" = 0 ] || die "needs root"
"$NVCC" -O2 -o "$TMP/second" "$HERE/gpu_serve_second.cu" >"$TMP/nvcc.log" 2>&1 ||
	die "nvcc failed: $(tail -3 "$TMP/nvcc.log")"
echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"

# The host's libcuda is named so that it is probed before a program starts (discovery would find
# it too, but only once PyTorch dlopen()s it).
LIBCUDA=${LIBCUDA:-$(ldconfig -p | awk '/libcuda\.so\.1 .*x86-64/ {print $NF; exit}')}
[ -z "$LIBCUDA" ] && [ -e /usr/local/nvidia/lib64/libcuda.so.1 ] && LIBCUDA=/usr/local/nvidia/lib64/libcuda.so.1
# start_serve LOG ARGS...: the agent system-wide on a free port; sets SERVE and PORT
start_serve() {
	local log=$1
	shift
	"$GRT" serve --listen 127.0.0.1:0 --idle-timeout 600 ${LIBCUDA:+--libcuda "$LIBCUDA"} "$@" \
		2>"$log" &
	SERVE=$!
	PORT=
	for _ in $(seq 300); do
		PORT=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\)/metrics.*|\1|p' "$log")
		[ -n "$PORT" ] && return 0
		sleep 0.1
	done
	die "serve $* did not start: $(cat "$log")"
}

# SERVE_PARTS: which parts run (default all): "train" (1 and 2), "uvm" (2b), "overhead" (3)
PARTS=${SERVE_PARTS:-train uvm overhead}
part() { [[ " $PARTS " == *" $1 "* ]]; }

# 1. the profiler's count, in a run grtrace does not see
if part train; then
want=$("$PY" "$HERE/gpu_serve_check.py" profile "$STEPS" | sed -n 's/^kernels //p')
[ -n "$want" ] || die "the profiler run failed"
echo "PyTorch profiler: $want kernels in $STEPS steps"

# 2. serve system-wide, both programs at once.
start_serve "$TMP/serve.err"
mkfifo "$TMP/train.in" "$TMP/second.in"
"$PY" "$HERE/gpu_serve_check.py" train "$STEPS" <"$TMP/train.in" >"$TMP/train.out" &
TRAIN=$!
"$TMP/second" "$SECOND" <"$TMP/second.in" >"$TMP/second.out" &
SEC=$!
exec 7>"$TMP/train.in" 8>"$TMP/second.in"
for _ in $(seq 1200); do
	grep -q done "$TMP/train.out" && grep -q launched "$TMP/second.out" && break
	sleep 0.1
done
sleep 2 # one scrape interval's worth: the last calls' returns
curl -s "127.0.0.1:$PORT/metrics" >"$TMP/metrics.txt"
echo x >&7
echo x >&8
wait $TRAIN $SEC
"$PY" "$HERE/gpu_serve_check.py" compare "$TMP/metrics.txt" "$SEC" "$((2 * SECOND))" || failed=1
"$PY" "$HERE/gpu_serve_check.py" compare "$TMP/metrics.txt" "$TRAIN" "$want" || failed=1
echo "the training process's busiest kernels:"
grep "^grtrace_cuda_launches_total{pid=\"$TRAIN\"" "$TMP/metrics.txt" | sort -t' ' -k2 -n -r | head -5
kill -INT "$SERVE"
wait "$SERVE"
SERVE=
cat "$TMP/serve.err"
fi

# 2b. -s uvm,pcie: UVM counts of a managed-memory program, NVML gauges against nvidia-smi.
# The program holds after its context and allocation exist until the agent shows its UVM series
# (a tracker bound), so every migration of its loop is seen.
if part uvm; then
"$NVCC" -O2 -o "$TMP/uvm_workload" "$HERE/uvm_workload.cu" >"$TMP/nvcc3.log" 2>&1 ||
	die "nvcc failed: $(tail -3 "$TMP/nvcc3.log")"
start_serve "$TMP/serve3.err" -s cuda,uvm,pcie
"$TMP/uvm_workload" 64 3 --hold-file "$TMP/uvm.go" >"$TMP/uvm.json" &
UW=$!
bound=
for _ in $(seq 300); do
	curl -s "127.0.0.1:$PORT/metrics" | grep -q "^grtrace_uvm_migrated_bytes_total{pid=\"$UW\"" && bound=1 && break
	sleep 0.1
done
[ -n "$bound" ] || echo "FAIL - no UVM tracker bound to pid $UW within 30 s: $(tail -3 "$TMP/serve3.err")"
touch "$TMP/uvm.go"
wait $UW || echo "FAIL - uvm_workload failed: $(cat "$TMP/uvm.json")"
sleep 1
curl -s "127.0.0.1:$PORT/metrics" >"$TMP/metrics3.txt"
nvidia-smi --query-gpu=index,memory.total,power.draw --format=csv,noheader,nounits >"$TMP/smi.csv"
kill -INT "$SERVE"
wait "$SERVE"
SERVE=
"$PY" - "$TMP/metrics3.txt" "$TMP/uvm.json" "$UW" "$TMP/smi.csv" <<'PY' || failed=1
import json, re, sys
metrics, run, pid, smi = open(sys.argv[1]).read(), json.load(open(sys.argv[2])), sys.argv[3], sys.argv[4]
def value(name, **labels):
    pat = re.compile(r'^%s\{([^}]*)\} (\S+)$' % name, re.M)
    for m in pat.finditer(metrics):
        if all('%s="%s"' % kv in m.group(1) for kv in labels.items()):
            return float(m.group(2))
    return None
failed = 0
def check(ok, what):
    global failed
    print("%s - %s" % ("ok" if ok else "FAIL", what))
    failed |= not ok
htod = value("grtrace_uvm_migrated_bytes_total", pid=pid, direction="htod")
dtoh = value("grtrace_uvm_migrated_bytes_total", pid=pid, direction="dtoh")
cpu = value("grtrace_uvm_faults_total", pid=pid, processor="cpu")
gpu = value("grtrace_uvm_faults_total", pid=pid, processor="gpu")
check(run.get("ok"), "uvm_workload's own check")
check(htod == run["expected_htod"], "UVM bytes to the GPU: serve %s, the program moved %d" % (htod, run["expected_htod"]))
check(dtoh == run["expected_dtoh"], "UVM bytes to the host: serve %s, the program moved %d" % (dtoh, run["expected_dtoh"]))
check((cpu or 0) > 0 and (gpu or 0) > 0, "UVM faults counted: cpu %s, gpu %s" % (cpu, gpu))
check(value("grtrace_events_lost_total", source="uvm") == 0, "no UVM events lost")
for line in open(smi):
    index, total_mib, watts = [x.strip() for x in line.split(",")]
    total = value("grtrace_gpu_memory_total_bytes", device=index)
    used = value("grtrace_gpu_memory_used_bytes", device=index)
    power = value("grtrace_gpu_power_watts", device=index)
    util = value("grtrace_gpu_utilization_ratio", device=index)
    check(total is not None and abs(total / 2**20 - float(total_mib)) < 2,
          "GPU %s memory total: serve %s bytes, nvidia-smi %s MiB" % (index, total, total_mib))
    check(used is not None and 0 < used <= total, "GPU %s memory used: %s bytes" % (index, used))
    check(power is not None and 10 < power < 1500 and abs(power - float(watts)) < 0.5 * float(watts) + 50,
          "GPU %s power: serve %s W, nvidia-smi %s W" % (index, power, watts))
    check(util is not None and 0 <= util <= 1, "GPU %s utilization: %s" % (index, util))
sys.exit(failed)
PY

fi

# 3. added host time per launch, serve -p and record -p side by side in one launcher process:
# untraced, then ROUNDS x (serve, record) traced phases alternating, then untraced again; the
# median per launch of each phase, and per tool the median and spread over its phases.
if part overhead; then
ROUNDS=${SERVE_ROUNDS:-3}
. "$HERE/../tests/e2e/lib/bpf_links.bash" || die "no tests/e2e/lib/bpf_links.bash beside bench/"
"$NVCC" -O2 -std=c++17 -o "$TMP/launcher" "$HERE/cuda_launch_overhead.cu" -lcuda >"$TMP/nvcc2.log" 2>&1 ||
	die "nvcc failed: $(tail -3 "$TMP/nvcc2.log")"
wait_line() { # FILE TEXT PID
	for _ in $(seq 1200); do
		grep -qx "$2" "$1" 2>/dev/null && return 0
		kill -0 "$3" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
# the programs' own time per launch too: the kernel's run-time statistics, on for both tools
# during this part (serve keeps them on by itself anyway, so record then pays their two clock
# reads per program run as serve always does), the old setting restored after.
# SERVE_BPF_STATS=0 leaves the setting alone: record's phases then run without statistics, as
# it runs anywhere, and show no BPF time.
if [ "${SERVE_BPF_STATS:-1}" = 1 ]; then
	OLD_BPF_STATS=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null)
	sysctl -q -w kernel.bpf_stats_enabled=1 2>/dev/null ||
		echo "note: no kernel.bpf_stats_enabled; no BPF times"
	echo "note: kernel.bpf_stats_enabled=1 for both tools in this part (SERVE_BPF_STATS=0: not)"
fi
# bpf_times PID: "all uprobes" run time in ns of the tracer's programs, and of its uprobe ones
bpf_times() {
	bpf_prog_times "$1" | awk '{all += $3} $2 == 2 {up += $3} END {printf "%d %d\n", all, up}'
}
mkfifo "$TMP/go"
exec 9<>"$TMP/go"
"$TMP/launcher" driver 256 100 $((2 * ROUNDS)) <"$TMP/go" >"$TMP/launcher.log" 2>&1 &
LP=$!
wait_line "$TMP/launcher.log" "phase untraced done" $LP || die "launcher failed: $(tail -3 "$TMP/launcher.log")"
: >"$TMP/phases"
for ((p = 1; p <= 2 * ROUNDS; p++)); do
	if ((p % 2)); then
		"$GRT" serve --listen 127.0.0.1:0 -p $LP 2>"$TMP/serve2.err" &
		tool=serve
	else
		"$GRT" record -f -o "$TMP/side.grt" -p $LP 2>"$TMP/record2.err" &
		tool=record
	fi
	TRACER=$!
	SERVE=$TRACER
	wait_bpf_links $TRACER "^link_type:" 2 600 || die "$tool did not attach"
	before=$(bpf_times $TRACER)
	echo go >&9
	wait_line "$TMP/launcher.log" "phase traced$p done" $LP || die "traced phase $p failed"
	echo "$p $before $(bpf_times $TRACER)" >>"$TMP/bpf_times"
	if [ $tool = serve ] && [ $p = 1 ]; then
		PORT=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\)/metrics.*|\1|p' "$TMP/serve2.err")
		sleep 1
		curl -s "127.0.0.1:$PORT/metrics" >"$TMP/metrics2.txt"
	fi
	kill -INT $TRACER
	wait $TRACER
	SERVE=
	echo "$p $tool" >>"$TMP/phases"
done
echo go >&9
wait $LP || die "launcher failed: $(tail -3 "$TMP/launcher.log")"
exec 9>&-
[ -n "$OLD_BPF_STATS" ] && sysctl -q -w kernel.bpf_stats_enabled="$OLD_BPF_STATS"
launched=$(sed -n 's/.*traced_launches \([0-9]*\).*/\1/p' "$TMP/launcher.log")
"$PY" "$HERE/gpu_serve_check.py" compare "$TMP/metrics2.txt" "$LP" "$launched" || failed=1
"$PY" - "$TMP/launcher.log" "$TMP/phases" "$TMP/bpf_times" <<'PY' || failed=1
import statistics, sys
values = {}
for line in open(sys.argv[1]):
    w = line.split()
    values.update(zip(w[::2], w[1::2]))
tools = dict(l.split() for l in open(sys.argv[2]))
# per phase: the BPF ns of all the tracer's programs, and of its uprobe programs, per launch
launches = int(values["traced_launches"])
bpf = {}
for line in open(sys.argv[3]):
    p, all0, up0, all1, up1 = line.split()
    bpf[p] = ((int(all1) - int(all0)) / launches, (int(up1) - int(up0)) / launches)
added = {"serve": [], "record": []}
bpf_all = {"serve": [], "record": []}
bpf_up = {"serve": [], "record": []}
for p, tool in sorted(tools.items(), key=lambda kv: int(kv[0])):
    added[tool].append(float(values["added%s_us" % p]))
    bpf_all[tool].append(bpf.get(p, (0, 0))[0])
    bpf_up[tool].append(bpf.get(p, (0, 0))[1])
    print("phase %s %-6s %.3f us per launch (+%.3f); BPF %.0f ns per launch (uprobe programs %.0f)"
          % (p, tool, float(values["traced%s_us" % p]), added[tool][-1], bpf_all[tool][-1], bpf_up[tool][-1]))
print("untraced %s us, again %s us" % (values["untraced_us"], values["untraced_again_us"]))
med = {t: statistics.median(v) for t, v in added.items()}
for t, v in added.items():
    print("%s -p added per launch: median %.3f us, spread %.3f..%.3f over %d phases" % (t, med[t], min(v), max(v), len(v)))
for t in added:
    a, u = bpf_all[t], bpf_up[t]
    print("%s -p BPF ns per launch (bpf_stats): all programs median %.0f (%.0f..%.0f), uprobe programs median %.0f (%.0f..%.0f)"
          % (t, statistics.median(a), min(a), max(a), statistics.median(u), min(u), max(u)))
ok = med["serve"] <= med["record"]
print("%s - serve's added host time per launch <= record's (%.3f vs %.3f us)" % ("ok" if ok else "FAIL", med["serve"], med["record"]))
sys.exit(0 if ok else 1)
PY
fi
exit $failed
