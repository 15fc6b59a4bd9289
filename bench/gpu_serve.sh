#!/bin/bash
# The H100 proof of grtrace serve (issue 14): the agent runs system-wide while a PyTorch training
# loop and a second CUDA program run at the same time; each one's launch counter must equal the
# program's own count: the PyTorch profiler's kernel count (from a separate, untraced-by-grtrace
# run of the same deterministic loop) and the second program's known launches. Then serve -s
# uvm,pcie on a managed-memory program (bench/uvm_workload.cu): its UVM migrated bytes must equal
# what the program moved, its faults be counted, and the NVML device gauges agree with
# nvidia-smi. Then the added host time per launch of serve beside record
# (bench/cuda_launch_overhead.sh's launcher).
#
# usage: bench/gpu_serve.sh BUILD [STEPS] [SECOND_LAUNCHES]
# environment: LIBCUDA (default: the loader cache's libcuda.so.1), PYTHON (default python3)
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
cleanup() {
	[ -n "$SERVE" ] && kill -INT "$SERVE" 2>/dev/null && wait "$SERVE" 2>/dev/null
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

# 1. the profiler's count, in a run grtrace does not see
want=$("$PY" "$HERE/gpu_serve_check.py" profile "$STEPS" | sed -n 's/^kernels //p')
[ -n "$want" ] || die "the profiler run failed"
echo "PyTorch profiler: $want kernels in $STEPS steps"

# 2. serve system-wide, both programs at once. The host's libcuda is named so that it is probed
# before either program starts (discovery would find it too, but only once PyTorch dlopen()s it).
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

# 2b. -s uvm,pcie: UVM counts of a managed-memory program, NVML gauges against nvidia-smi.
# The program holds after its context and allocation exist until the agent shows its UVM series
# (a tracker bound), so every migration of its loop is seen.
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

# 3. added host time per launch, the same driver-mode launcher under serve and under record
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
mkfifo "$TMP/go"
exec 9<>"$TMP/go"
"$TMP/launcher" driver 256 200 1 <"$TMP/go" >"$TMP/launcher.log" 2>&1 &
LP=$!
wait_line "$TMP/launcher.log" "phase untraced done" $LP || die "launcher failed: $(tail -3 "$TMP/launcher.log")"
"$GRT" serve --listen 127.0.0.1:0 -p $LP 2>"$TMP/serve2.err" &
SERVE=$!
wait_bpf_links $SERVE "^link_type:" 2 600 || die "serve did not attach: $(cat "$TMP/serve2.err")"
PORT=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\)/metrics.*|\1|p' "$TMP/serve2.err")
echo go >&9
wait_line "$TMP/launcher.log" "phase traced1 done" $LP || die "traced phase failed"
sleep 1
curl -s "127.0.0.1:$PORT/metrics" >"$TMP/metrics2.txt"
kill -INT $SERVE
wait $SERVE
SERVE=
echo go >&9
wait $LP || die "launcher failed: $(tail -3 "$TMP/launcher.log")"
exec 9>&-
launched=$(sed -n 's/.*traced_launches \([0-9]*\).*/\1/p' "$TMP/launcher.log")
"$PY" "$HERE/gpu_serve_check.py" compare "$TMP/metrics2.txt" "$LP" "$launched" || failed=1
echo "serve -p (entry + return probe on every launch): $(grep -o 'untraced_us [^ ]*\|traced1_us [^ ]*\|added1_us [^ ]*' "$TMP/launcher.log" | tr '\n' ' ')"
echo "record -p beside it (same launcher, same machine):"
GRT_OVERHEAD_CONFIGS="--launch-returns 1|--launch-returns 0" MODES=driver \
	bash "$HERE/cuda_launch_overhead.sh" "$BUILD" || failed=1
exit $failed
