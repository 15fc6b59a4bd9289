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

UBSAN_OPTIONS=print_stacktrace=1 "$fuzzer" -max_total_time="$seconds" -timeout=10 \
	-rss_limit_mb=2048 -max_len=16384 -print_final_stats=1 \
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
