#!/bin/bash
# grtrace serve with calls made inside calls on the same thread (a profiler's CUPTI callback
# calling the driver): every call is timed and has its effect, the call around it included.
# The fake driver's FAKE_CUDA_NESTED records an event inside each launch and launches a kernel
# inside each cuMemAlloc_v2; the known sequence's own numbers must come out as without them.
BUILD=${1:-build}
. tests/e2e/lib/cuda.bash
. tests/e2e/lib/serve.bash

serve_start a -p $$ --libcuda "$FAKE" --idle-timeout 120 || { fail "serve starts"; exit 1; }
URL=http://127.0.0.1:$SERVE_PORT/metrics

# scrape: the metrics page (python3, not curl: the VM tests' userland has python3)
scrape() { python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1]).read().decode())' "$URL" 2>/dev/null; }
# has LINE: a scrape holds exactly this line within 60 s
has() {
	for _ in $(seq 240); do
		scrape | grep -qxF "$1" && return 0
		sleep 0.25
	done
	echo "not in the scrape: $1; it has: $(scrape | grep -F "${1%%\{*}{" | tr '\n' ';')" >&2
	return 1
}
# value METRIC{LABELS}: its value in a scrape, empty when absent
value() { scrape | grep -F "$1 " | awk '{ print $2 }'; }

"$WL/cuda_known" &
PLAIN=$!
wait $PLAIN
check "known workload ran" [ $? = 0 ]
FAKE_CUDA_NESTED=1 "$WL/cuda_known" &
NESTED=$!
wait $NESTED
check "known workload ran with calls inside calls" [ $? = 0 ]

for pid in $PLAIN $NESTED; do
	P="pid=\"$pid\",comm=\"cuda_known\""
	what=plain
	[ $pid = $NESTED ] && what=nested
	# the launches around the nested event records, and the allocations around nested launches
	check "$what: vecAdd's 13 launches" has "grtrace_cuda_launches_total{$P,kernel=\"vecAdd\"} 13"
	check "$what: reduce's 6" has "grtrace_cuda_launches_total{$P,kernel=\"reduce\"} 6"
	check "$what: device bytes allocated" has "grtrace_cuda_alloc_bytes_total{$P,kind=\"device\"} 7348032"
	check "$what: device memory in use after the frees" \
		has "grtrace_cuda_memory_in_use_bytes{$P,kind=\"device\"} 2100152"
	check "$what: every cuLaunchKernel timed" \
		[ "$(value "grtrace_cuda_api_duration_seconds_count{$P,api=\"cuLaunchKernel\"}")" = \
			"$(value "grtrace_cuda_api_calls_total{$P,api=\"cuLaunchKernel\"}")" ]
done
P="pid=\"$NESTED\",comm=\"cuda_known\""
# inside: an event record in each of the sequence's 27 launch calls of every entry point (the
# failed one too) besides its own 1, and a launch in each of the 4 cuMemAlloc_v2 that succeed
# besides its 21 cuLaunchKernel: each counted and timed
check "nested: 28 event records, each timed" \
	has "grtrace_cuda_api_duration_seconds_count{$P,api=\"cuEventRecord\"} 28"
check "... and counted" has "grtrace_cuda_api_calls_total{$P,api=\"cuEventRecord\"} 28"
check "nested: 25 cuLaunchKernel calls, each timed" \
	has "grtrace_cuda_api_duration_seconds_count{$P,api=\"cuLaunchKernel\"} 25"
# the nested function has no name (FAKE_NESTED_FUNCTION, tests/fake_libcuda/fake_cuda.h)
check "... the 4 inside allocations launched the nested kernel" \
	has "grtrace_cuda_launches_total{$P,kernel=\"0xe5e700\"} 4"
check "nothing lost" has "grtrace_events_lost_total{source=\"cuda\"} 0"
exit $failed
