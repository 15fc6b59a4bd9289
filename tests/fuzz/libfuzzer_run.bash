# Shared by the tests/fuzz/run_*.sh scripts (sourced): one bounded libFuzzer run and its ok/FAIL
# line, and the replay of the inputs that once failed. libfuzzer_run NAME FUZZER SECONDS BUILD_DIR
# DIRS... -- EXTRA_FLAGS...: runs FUZZER over the corpus directories with the sanitizers' stack
# traces, the log in BUILD_DIR/fuzz/NAME.log.
libfuzzer_run() {
	local name=$1 fuzzer=$2 seconds=$3 build=$4 dirs=() extra=() log rc runs
	shift 4
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do dirs+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	extra=("$@")
	log=$build/fuzz/$name.log
	UBSAN_OPTIONS=print_stacktrace=1 "$fuzzer" -max_total_time="$seconds" -timeout=10 \
		-rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$build/fuzz/$name-" \
		"${extra[@]}" "${dirs[@]}" >"$log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	if [ $rc -eq 0 ]; then
		echo "ok - $name (${runs:-?} inputs in ${seconds}s, corpus $(ls "${dirs[0]}" | wc -l) files)"
		return 0
	fi
	echo "FAIL - $name (exit $rc)"
	grep -m1 -o 'Test unit written to .*' "$log" | sed 's/^/  /'
	grep -m1 -A 25 -E 'ERROR: |fuzz assertion failed|runtime error' "$log" | sed 's/^/  /'
	return 1
}

# libfuzzer_replay NAME FUZZER DIR: runs FUZZER once on each input committed in DIR (inputs that
# once failed), if there are any; prints a FAIL line and returns 1 when one fails again.
libfuzzer_replay() {
	local name=$1 fuzzer=$2 dir=$3 log
	compgen -G "$dir/*" >/dev/null || return 0
	log=$(dirname "$fuzzer")/regressions.log
	if ! "$fuzzer" -rss_limit_mb=2048 "$dir"/* >"$log" 2>&1; then
		tail -20 "$log"
		echo "FAIL - $name (a committed regression input fails again)"
		return 1
	fi
}
