#!/bin/bash
# Runs every test program and end-to-end script for each build directory given;
# prints one ok/FAIL line per case and a closing "N passed, N failed" line.
set -u
cd "$(dirname "$0")/.."
passed=0
failed=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

count() {
	local p f
	p=$(grep -c '^ok - ' "$log")
	f=$(grep -c '^FAIL - ' "$log")
	passed=$((passed + p))
	failed=$((failed + f))
}

# One case may take this long (the slowest, a sanitized GPU-eBPF or fuzz script, takes a few
# minutes): a case that hangs fails by name instead of holding the whole run past CI's limit.
CASE_TIMEOUT=${GRT_CASE_TIMEOUT:-1200}

run_case() { # label, command...
	local label=$1
	shift
	timeout --kill-after=10 "$CASE_TIMEOUT" "$@" >"$log" 2>&1
	local rc=$?
	if [ $rc = 124 ] || [ $rc = 137 ]; then
		echo "FAIL - still running after ${CASE_TIMEOUT} s: stopped" >>"$log"
	fi
	# A test that replaces /dev/null (a tool unlinking its -o output, say) breaks every later
	# one and the machine: name the culprit and put the device back.
	if [ ! -c /dev/null ]; then
		rm -f /dev/null && mknod -m 666 /dev/null c 1 3
		echo "FAIL - /dev/null was no longer a character device after this case" >>"$log"
	fi
	# '#' as the delimiter: labels contain '/'
	sed "s#^\(ok\|FAIL\) - #\1 - [$label] #" "$log"
	if [ $rc -ne 0 ] && ! grep -q '^FAIL - ' "$log"; then
		echo "FAIL - [$label] exited with status $rc"
		echo "FAIL - exit" >>"$log"
	fi
	count
}

for build in "$@"; do
	for t in "$build"/tests/test_*; do
		[ -x "$t" ] || continue
		run_case "$(basename "$build")/$(basename "$t")" "$t"
	done
	for s in tests/e2e/*.sh; do
		[ -f "$s" ] || continue
		run_case "$(basename "$build")/$(basename "$s")" bash "$s" "$build"
	done
	for s in tests/fuzz/run_*.sh; do
		[ -f "$s" ] || continue
		[ "$build" = "$1" ] || continue # fuzz once, with its own sanitizer build
		run_case "fuzz/$(basename "$s")" bash "$s" "$build"
	done
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
