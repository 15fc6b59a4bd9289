#!/bin/bash
# GPU proof of the uvm source: raw queue samples (v1+v2), migrated bytes vs what the program did,
# two processes attributed to their pids, late binding on -p, snoop CSV, overhead traced vs untraced.
#
# usage: bench/gpu_uvm.sh [BINDIR]   (BINDIR holds grtrace and uvm_tool; default: build with build/fixtures)
# Needs root, an NVIDIA GPU with nvidia_uvm loaded, nvcc and python3. Logs and results go to $OUT
# (default /tmp/gpu_uvm/out). Allocates at most 256 MiB of managed memory per process.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
BIN=${1:-build}
GRTRACE=$BIN/grtrace
UVM_TOOL=$BIN/uvm_tool
[ -x "$UVM_TOOL" ] || UVM_TOOL=$BIN/fixtures/uvm_tool
OUT=${OUT:-/tmp/gpu_uvm/out}
WORK=/tmp/gpu_uvm
W=$WORK/uvm_workload
mkdir -p "$OUT" "$WORK"
SUMMARY=$OUT/summary.txt
LOG=$OUT/log.txt
: >"$SUMMARY"
: >"$LOG"
failed=0

say() { echo "$@" | tee -a "$SUMMARY"; }
run() { echo "+ $*" >>"$LOG"; "$@" >>"$LOG" 2>&1; }
check() { # python checker output lines go to the summary
	python3 "$HERE/gpu_uvm_check.py" "$@" >"$WORK/check.txt" 2>&1
	local rc=$?
	cat "$WORK/check.txt" | tee -a "$SUMMARY"
	[ $rc -eq 0 ] || failed=1
}

export PATH=$PATH:/usr/local/cuda/bin
mountpoint -q /sys/kernel/tracing 2>/dev/null || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
say "== $(date -u +%FT%TZ) $(nvidia-smi -L 2>/dev/null | head -1)"
say "== nvidia_uvm $(cat /sys/module/nvidia_uvm/version 2>/dev/null), kernel $(uname -r)"
ls -l /dev/nvidia-uvm /dev/nvidia-uvm-tools >>"$LOG" 2>&1
nvcc -O2 -arch=sm_90 -o "$W" "$HERE/uvm_workload.cu" >>"$LOG" 2>&1 || { say "FAIL nvcc"; exit 1; }

# 1. raw queue samples: the same process seen through a v1 and a v2 tracker at once
say "== 1. raw samples: uvm_workload 8 2 under uvm_tool rawcap"
rm -f "$WORK/go1"
"$W" 8 2 --wait-file "$WORK/go1" >"$WORK/raw_workload.json" &
wp=$!
timeout 60 "$UVM_TOOL" rawcap -p $wp -o "$OUT" >"$WORK/rawcap.txt" 2>&1 &
cp=$!
sleep 0.3
touch "$WORK/go1"
wait $wp
wait $cp || failed=1
cat "$WORK/raw_workload.json" >>"$WORK/rawcap.txt"
cp "$WORK/rawcap.txt" "$OUT/rawcap.txt"
tee -a "$SUMMARY" <"$WORK/rawcap.txt"

# 2. record a launched program: late binding (CUDA opens its UVM file after the launch is released)
say "== 2. grtrace record -s uvm -- uvm_workload 256 3"
timeout 45 "$GRTRACE" record -f -s uvm -o "$WORK/launch.grt" -- "$W" 256 3 >"$WORK/launch.json" 2>>"$LOG"
"$GRTRACE" parse "$WORK/launch.grt" --format json --filter type=uvm >"$WORK/launch.jsonl" 2>>"$LOG"
check expect "$WORK/launch.jsonl" "$WORK/launch.json"
"$GRTRACE" parse "$WORK/launch.grt" | head -60 >"$OUT/parse_head.txt"
{ echo "### launch: uvm_workload 256 3"; "$GRTRACE" report "$WORK/launch.grt" --uvm; } >"$OUT/reports.txt"

# 3. two processes at once, each attributed to its own pid
say "== 3. two processes: grtrace record -s uvm -- sh -c 'uvm_workload 64 3 & uvm_workload 128 3 & wait'"
timeout 45 "$GRTRACE" record -f -s uvm -o "$WORK/two.grt" -- sh -c "$W 64 3 >$WORK/two_a.json & $W 128 3 >$WORK/two_b.json & wait" 2>>"$LOG"
"$GRTRACE" parse "$WORK/two.grt" --format json --filter type=uvm >"$WORK/two.jsonl" 2>>"$LOG"
check expect "$WORK/two.jsonl" "$WORK/two_a.json" "$WORK/two_b.json"
{ echo "### two processes"; "$GRTRACE" report "$WORK/two.grt" --uvm; "$GRTRACE" report "$WORK/two.grt" --uvm --format json; } >>"$OUT/reports.txt"

# 4. attach with -p before the program opens its UVM file
say "== 4. grtrace record -s uvm -p PID (attached before CUDA starts)"
rm -f "$WORK/go4"
"$W" 32 2 --wait-file "$WORK/go4" >"$WORK/attach.json" &
wp=$!
timeout 60 "$GRTRACE" record -f -s uvm -p $wp -o "$WORK/attach.grt" 2>>"$LOG" &
rp=$!
sleep 0.5
touch "$WORK/go4"
wait $wp
wait $rp
"$GRTRACE" parse "$WORK/attach.grt" --format json --filter type=uvm >"$WORK/attach.jsonl" 2>>"$LOG"
check expect "$WORK/attach.jsonl" "$WORK/attach.json"

# 5. live view, system-wide, CSV
say "== 5. uvm_tool snoop -c (system-wide) while uvm_workload 16 2 runs"
"$UVM_TOOL" snoop -c -d 8 >"$WORK/snoop.csv" 2>>"$LOG" &
sp=$!
sleep 0.5
"$W" 16 2 >"$WORK/snoop.json"
wait $sp
head -3000 "$WORK/snoop.csv" >"$OUT/snoop.csv"
say "snoop: $(($(wc -l <"$WORK/snoop.csv") - 1)) rows; by event: $(tail -n +2 "$WORK/snoop.csv" | cut -d, -f2 | sort | uniq -c | tr '\n' ' ')"

# 6. overhead: untraced, traced by grtrace, and the driver's share alone (trackers drained, nothing decoded)
say "== 6. overhead: uvm_workload 256 3, 5 runs each: untraced, grtrace record -s uvm, uvm_tool rawcap only"
: >"$WORK/untraced.json"
: >"$WORK/traced.json"
: >"$WORK/driver_only.json"
for i in 1 2 3 4 5; do
	"$W" 256 3 >>"$WORK/untraced.json"
	timeout 45 "$GRTRACE" record -f -s uvm -o "$WORK/ovh.grt" -- "$W" 256 3 >>"$WORK/traced.json" 2>"$WORK/ovh_stderr.txt"
	cat "$WORK/ovh_stderr.txt" >>"$LOG"
	rm -f "$WORK/go6"
	"$W" 256 3 --wait-file "$WORK/go6" >>"$WORK/driver_only.json" &
	wp=$!
	timeout 45 "$UVM_TOOL" rawcap -2 -p $wp -o "$WORK" >>"$LOG" 2>&1 &
	cp=$!
	sleep 0.2
	touch "$WORK/go6"
	wait $wp
	wait $cp
done
check overhead untraced="$WORK/untraced.json" grtrace_record="$WORK/traced.json" \
	driver_events_only="$WORK/driver_only.json"
tail -1 "$WORK/ovh_stderr.txt" | tee -a "$SUMMARY"

# 7. thrashing: CPU and GPU writing the same pages at once (informational: the driver decides)
say "== 7. thrashing: grtrace record -s uvm -- uvm_workload 4 500 --thrash"
timeout 60 "$GRTRACE" record -f -s uvm -o "$WORK/thrash.grt" -- "$W" 4 500 --thrash >"$WORK/thrash.json" 2>>"$LOG"
tee -a "$SUMMARY" <"$WORK/thrash.json"
{ echo "### thrashing: uvm_workload 4 500 --thrash"; "$GRTRACE" report "$WORK/thrash.grt" --uvm --top 10; } | tee -a "$OUT/reports.txt" "$SUMMARY" >/dev/null
"$GRTRACE" parse "$WORK/thrash.grt" --filter type=uvm | awk '{print $5}' | sort | uniq -c | tee -a "$SUMMARY"

say "== result: $([ $failed -eq 0 ] && echo ALL PASS || echo SOME FAILED)"
exit $failed
