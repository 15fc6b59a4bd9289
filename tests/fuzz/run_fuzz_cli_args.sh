#!/bin/bash
# Fuzzes every command's option parser for FUZZ_SECONDS (default 30) with libFuzzer + ASan/UBSan.
# Usage: tests/fuzz/run_fuzz_cli_args.sh BUILD_DIR; prints "ok - fuzz_cli_args" or "FAIL - ...".
set -u
cd "$(dirname "$0")/../.."
build=${1:-build}
seconds=${FUZZ_SECONDS:-30}
name=fuzz_cli_args
fuzzer=$build/fuzz/$name
corpus=$build/fuzz/$name.corpus
seeds=$build/fuzz/$name.seeds
log=$build/fuzz/$name.log
mkdir -p "$build/fuzz" "$corpus"

# run.sh may be running under make: the nested make must not join that make's jobserver
if ! env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s --no-print-directory -j2 BUILD="$build" \
	"$fuzzer" >"$log" 2>&1; then
	echo "FAIL - $name: build failed"
	tail -20 "$log" | sed 's/^/  /'
	exit 1
fi
# seeds: one real command line per parser (the first byte picks it)
rm -rf "$seeds"
mkdir -p "$seeds"
seed() { # name, command index, args...
	local f=$seeds/$1 i=$2
	shift 2
	printf "\\x0$i" >"$f"
	printf '%s\0' "$@" >>"$f"
}
seed record 0 -o x.grt -s cuda,syscall --duration 1.5 --launch-returns 4 --gpu-kernels 'vec.*' -- true
seed record-pid 0 -p 1 --idle-timeout 2 --libcuda /nonexistent --syscalls ioctl,read
seed parse 1 x.grt --format json --filter type=launch,pid=3 --all
seed report 2 x.grt --format csv --top 5 --threshold leak_min_bytes=100,queue-wait=50%,1ms --jobs
seed export 3 x.grt --perfetto out.json --threshold vm-fault=1
seed snoop 4 cuda -p 1 --duration 0.5 --json

UBSAN_OPTIONS=print_stacktrace=1 "$fuzzer" -max_total_time="$seconds" -timeout=10 \
	-rss_limit_mb=2048 -max_len=512 -close_fd_mask=3 -print_final_stats=1 \
	-artifact_prefix="$build/fuzz/$name-" "$corpus" "$seeds" >"$log" 2>&1
rc=$?
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
if [ $rc -eq 0 ]; then
	echo "ok - $name (${runs:-?} inputs in ${seconds}s, corpus $(ls "$corpus" | wc -l) files)"
	exit 0
fi
echo "FAIL - $name (exit $rc)"
grep -m1 -o 'Test unit written to .*' "$log" | sed 's/^/  /'
grep -m1 -A 25 -E 'ERROR: |fuzz assertion failed|runtime error' "$log" | sed 's/^/  /'
exit 1
