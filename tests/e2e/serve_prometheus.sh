#!/bin/bash
# grtrace serve scraped by a real Prometheus: exact values through the query API (launches per
# kernel, bytes allocated, memory in use after frees, copies, leaks after exit, UVM faults and
# migrations, NVML device gauges), a libcuda copy found by system-wide discovery, the kernel label
# limit, every Grafana panel's PromQL, promtool, and series gone after the idle timeout.
# No NVIDIA driver here: NVML is tests/fixtures/fake_nvml.c, and the UVM events are the H100
# queue capture of tests/data/uvm (GRTRACE_UVM_REPLAY gives it to every process the agent sees).
BUILD=${1:-build}
. tests/e2e/lib/cuda.bash
. tests/e2e/lib/serve.bash

for t in prometheus promtool curl; do
	command -v $t >/dev/null || { fail "missing $t (make deps)"; exit 1; }
done
NVML=$BUILD/fixtures/libnvidia-ml.so.1

# A: every process, device gauges from the stand-in NVML, UVM counts from the capture.
# B: only this script's children, two kernel names per process.
GRTRACE_NVML_LIBRARY=$NVML GRTRACE_UVM_REPLAY=tests/data/uvm/v2.bin \
	serve_start a -s cuda,pcie,uvm --libcuda "$FAKE" --idle-timeout 45 ||
	{ fail "serve (system-wide) starts"; exit 1; }
A=$SERVE_PORT
A_PID=$SERVE_PID
serve_start b -p $$ --libcuda "$FAKE" --kernel-labels 2 --idle-timeout 45 ||
	{ fail "serve -p starts"; exit 1; }
B=$SERVE_PORT
ok "two agents start side by side on ports $A and $B"

PP=$($PROMPY free-port)
PROM=http://127.0.0.1:$PP
cat >"$tmp/prometheus.yml" <<YML
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: all
    static_configs: [{targets: ['127.0.0.1:$A']}]
  - job_name: mine
    static_configs: [{targets: ['127.0.0.1:$B']}]
YML
prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/prom" \
	--web.listen-address=127.0.0.1:$PP --log.level=error >"$tmp/prom.log" 2>&1 &
PROM_PID=$!
SERVE_PIDS="$SERVE_PIDS $PROM_PID"
check "prometheus is ready" $PROMPY wait-ready "$PROM"

# the workloads: the known sequence, a late dlopen() of a libcuda copy nobody probed yet,
# and a paced launch storm that keeps the rates above zero while the panels are evaluated
"$WL/cuda_storm" 8 1 2000 >/dev/null &
SPID=$!
"$WL/cuda_known" &
KPID=$!
wait $KPID
check "known workload ran" [ $? = 0 ]
"$BUILD/fixtures/workloads/cuda_late_dlopen" "$FAKE_COPY" 300 1500 7 &
LPID=$!
wait $LPID
check "late-dlopen workload ran" [ $? = 0 ]
# grtrace's own threads inside a target (grtrace-*, as the inject library names them) are not
# the application: two such threads launch 50 times each, only the main thread's calls count
"$WL/cuda_threads" 2 50 grtrace-worker &
OPID=$!
wait $OPID
check "own-threads workload ran" [ $? = 0 ]

# eq NAME EXPR WANT: one check, run with the others by expect_all
: >"$tmp/expect"
eq() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$tmp/expect"; }
expect_all() {
	$PROMPY expect "$PROM" "$tmp/expect" || failed=1
	: >"$tmp/expect"
}
K="job=\"all\",pid=\"$KPID\""
check "the exited process is scraped as exited" \
	$PROMPY wait "$PROM" "grtrace_cuda_process_exited{$K} == 1 and on() grtrace_cuda_process_exited{job=\"all\",pid=\"$LPID\"} == 1 and on() grtrace_cuda_process_exited{job=\"mine\",pid=\"$LPID\"} == 1 and on() grtrace_cuda_process_exited{job=\"mine\",pid=\"$OPID\"} == 1" 15
eq "vecAdd launches" "grtrace_cuda_launches_total{$K,kernel=\"vecAdd\"}" 13
eq "reduce launches" "grtrace_cuda_launches_total{$K,kernel=\"reduce\"}" 6
eq "saxpy launches" "grtrace_cuda_launches_total{$K,kernel=\"saxpy\"}" 3
eq "scale launches (a CUkernel launched as a function)" "grtrace_cuda_launches_total{$K,kernel=\"scale\"}" 4
eq "kernels of the process" "count(grtrace_cuda_launches_total{$K})" 4
eq "cuLaunchKernel calls, the failed one too" "grtrace_cuda_api_calls_total{$K,api=\"cuLaunchKernel\"}" 21
eq "cuLaunchKernel errors" "grtrace_cuda_api_errors_total{$K,api=\"cuLaunchKernel\"}" 1
eq "cuLaunchKernel durations observed" "grtrace_cuda_api_duration_seconds_count{$K,api=\"cuLaunchKernel\"}" 21
eq "cuLaunchKernel +Inf bucket" "grtrace_cuda_api_duration_seconds_bucket{$K,api=\"cuLaunchKernel\",le=\"+Inf\"}" 21
eq "bytes allocated" "sum(grtrace_cuda_alloc_bytes_total{$K})" 7464768
eq "device bytes allocated" "grtrace_cuda_alloc_bytes_total{$K,kind=\"device\"}" 7348032
eq "device memory in use after the frees" "grtrace_cuda_memory_in_use_bytes{$K,kind=\"device\"}" 2100152
eq "pitch memory in use" "grtrace_cuda_memory_in_use_bytes{$K,kind=\"pitch\"}" 10240
eq "all memory never freed" "sum(grtrace_cuda_memory_in_use_bytes{$K})" 2204600
eq "HtoD bytes" "grtrace_cuda_memcpy_bytes_total{$K,direction=\"htod\"}" 1050889
eq "DtoH bytes" "grtrace_cuda_memcpy_bytes_total{$K,direction=\"dtoh\"}" 4864
eq "DtoD bytes" "grtrace_cuda_memcpy_bytes_total{$K,direction=\"dtod\"}" 2476
eq "peer bytes" "grtrace_cuda_memcpy_bytes_total{$K,direction=\"peer\"}" 12288
eq "unified-addressing bytes" "grtrace_cuda_memcpy_bytes_total{$K,direction=\"unified\"}" 3000
eq "late dlopen of an unprobed libcuda copy: its launches" \
	"grtrace_cuda_launches_total{job=\"all\",pid=\"$LPID\",kernel=\"late_kernel\"}" 7
# B sees only this script's children: its node-wide leak counters are exact
eq "leaked bytes (agent -p)" "sum(grtrace_cuda_leaked_bytes_total{job=\"mine\"})" 2204600
eq "leaked device bytes (agent -p)" "grtrace_cuda_leaked_bytes_total{job=\"mine\",kind=\"device\"}" 2100152
eq "leaking processes (agent -p)" "grtrace_cuda_leaking_processes_total{job=\"mine\"}" 1
eq "kernel labels (agent -p): two names and other" "count(grtrace_cuda_launches_total{job=\"mine\",pid=\"$KPID\"})" 3
eq "launches (agent -p), other included" "sum(grtrace_cuda_launches_total{job=\"mine\",pid=\"$KPID\"})" 26
eq "grtrace-* threads' launches are not the application's" "count(grtrace_cuda_launches_total{job=\"mine\",pid=\"$OPID\"}) or vector(0)" 0
eq "... nor their allocations" "count(grtrace_cuda_alloc_bytes_total{job=\"mine\",pid=\"$OPID\"}) or vector(0)" 0
eq "... nor their launch calls" "count(grtrace_cuda_api_calls_total{job=\"mine\",pid=\"$OPID\",api=\"cuLaunchKernel\"}) or vector(0)" 0
eq "the main thread's calls are counted" "grtrace_cuda_api_calls_total{job=\"mine\",pid=\"$OPID\",api=\"cuModuleGetFunction\"}" 1
eq "time waiting in synchronize: some, under a second" "count(grtrace_cuda_sync_wait_seconds_total{$K} > 0 < 1)" 1
eq "processes seen (agent -p): the four CUDA children" "grtrace_processes_seen_total{job=\"mine\"}" 4
eq "nothing lost (agent -p): calls" "grtrace_events_lost_total{job=\"mine\",source=\"cuda\"}" 0
eq "nothing lost (agent -p): notifications" "grtrace_events_lost_total{job=\"mine\",source=\"notifications\"}" 0
eq "BPF programs ran and were timed" "count(grtrace_bpf_runs_total{job=\"mine\"} > 0 and on() grtrace_bpf_run_seconds_total{job=\"mine\"} > 0)" 1
eq "'other' holds the rest" "count(grtrace_cuda_launches_total{job=\"mine\",pid=\"$KPID\",kernel=\"other\"})" 1
eq "device gauges from NVML" "grtrace_gpu_pcie_rx_bytes_per_second{job=\"all\",device=\"0\"}" 256000000
eq "GPU utilization (NVML)" "grtrace_gpu_utilization_ratio{job=\"all\",device=\"0\",pci=\"0000:3b:00.0\"}" 0.37
eq "no utilization where NVML has none" "count(grtrace_gpu_utilization_ratio{job=\"all\"})" 1
eq "GPU memory used (NVML)" "grtrace_gpu_memory_used_bytes{job=\"all\",device=\"1\",pci=\"0000:86:00.0\"}" 268435456
eq "GPU memory total (NVML)" "grtrace_gpu_memory_total_bytes{job=\"all\",device=\"0\"}" 85899345920
eq "GPU power (NVML)" "grtrace_gpu_power_watts{job=\"all\",device=\"0\"}" 123.456
eq "UVM CPU faults of the exited process" "grtrace_uvm_faults_total{$K,processor=\"cpu\"}" 72
eq "UVM GPU faults (replays not counted again)" "grtrace_uvm_faults_total{$K,processor=\"gpu\"}" 1383
eq "UVM bytes migrated to the GPU" "grtrace_uvm_migrated_bytes_total{$K,direction=\"htod\"}" 16777216
eq "UVM bytes migrated to the host" "grtrace_uvm_migrated_bytes_total{$K,direction=\"dtoh\"}" 16777216
eq "UVM bytes between GPUs" "grtrace_uvm_migrated_bytes_total{$K,direction=\"dtod\"}" 0
eq "UVM events lost" "grtrace_events_lost_total{job=\"all\",source=\"uvm\"}" 0
eq "no UVM families without -s uvm" "count(grtrace_uvm_faults_total{job=\"mine\"}) or vector(0)" 0
expect_all
check "leak logged once with its allocation stack" \
	[ "$(grep -c "pid $KPID (cuda_known) exited with 2204600 bytes of CUDA memory in 6 allocations not freed; the largest, 2097152 bytes, allocated at cuMemAlloc_v2.* <- main+0x[0-9a-f]* (.*cuda_known)" "$tmp/a.err")" = 1 ]

# every panel of the dashboard, while the storm runs
$PROMPY dashboard "$PROM" contrib/grafana/grtrace-node.json || failed=1

# the exposition itself
curl -s "127.0.0.1:$A/metrics" >"$tmp/metrics.txt"
check "promtool check metrics passes" promtool check metrics <"$tmp/metrics.txt"
curl -s -D "$tmp/om.h" -H 'Accept: application/openmetrics-text; version=1.0.0' \
	"127.0.0.1:$A/metrics" >"$tmp/om.txt"
check "OpenMetrics when Accept asks for it" \
	grep -qi '^Content-Type: application/openmetrics-text; version=1.0.0' "$tmp/om.h"
check "OpenMetrics ends with # EOF" [ "$(tail -n1 "$tmp/om.txt")" = "# EOF" ]
check "OpenMetrics counter family without _total" grep -q '^# TYPE grtrace_cuda_launches counter$' "$tmp/om.txt"
check "text format names the counter family with _total" \
	grep -q '^# TYPE grtrace_cuda_launches_total counter$' "$tmp/metrics.txt"

# series of the exited process are gone after --idle-timeout (45 s after its exit: room for a loaded machine to run the queries before)
check "series of the exited process gone from /metrics after the idle timeout" \
	bash -c "for i in \$(seq 280); do curl -s 127.0.0.1:$A/metrics | grep -q 'pid=\"$KPID\"' || exit 0; sleep 0.25; done; exit 1"
check "... and from Prometheus" $PROMPY wait-absent "$PROM" "grtrace_cuda_launches_total{$K}" 10
eq "leaked bytes stay after the process's series went" "sum(grtrace_cuda_leaked_bytes_total{job=\"mine\"})" 2204600
expect_all
wait $SPID
check "serve stops on SIGINT with status 0" serve_stop "$A_PID"
exit $failed
