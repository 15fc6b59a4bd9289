#!/bin/bash
# Builds the .grt reader/printer fuzzer and runs it for FUZZ_SECONDS (60) from a generated seed corpus.
set -u
cd "$(dirname "$0")/../.."
build=${1:-build}
seconds=${FUZZ_SECONDS:-60}
name=fuzz_trace_reader
fuzzer=$build/fuzz/$name
corpus=$build/fuzz/$name.corpus # grows across runs; git-ignored with the build
seeds=$build/fuzz/$name.seeds
log=$build/fuzz/$name.log
mkdir -p "$build/fuzz" "$corpus"

# run.sh may be running under make: the nested make must not join that make's jobserver
if ! env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s --no-print-directory -j2 BUILD="$build" \
	"$fuzzer" "$build/fixtures/gen_trace" >"$log" 2>&1; then
	echo "FAIL - $name: build failed"
	tail -20 "$log" | sed 's/^/  /'
	exit 1
fi
rm -rf "$seeds"
if ! "$build/fixtures/gen_trace" corpus "$seeds" >"$log" 2>&1; then
	echo "FAIL - $name: seed corpus"
	sed 's/^/  /' "$log"
	exit 1
fi

. tests/fuzz/libfuzzer_run.bash
libfuzzer_run "$name" "$fuzzer" "$seconds" "$build" "$corpus" "$seeds" -- -max_len=16384
