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
log=$build/fuzz/$name.build.log
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

. tests/fuzz/libfuzzer_run.bash
# the parsers' usage and error lines are not what is tested: the target's stdout and stderr closed
libfuzzer_run "$name" "$fuzzer" "$seconds" "$build" "$corpus" "$seeds" -- -max_len=512 -close_fd_mask=3
