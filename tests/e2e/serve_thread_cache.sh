#!/bin/bash
# grtrace serve remembers per thread that its process is counted (no map lookups for that on
# each call): a thread lent to grtrace (renamed grtrace-*) is still left out for exactly its
# lent calls, a process that execs is counted again from its new program's first call on that
# same thread, and a launch storm on two threads at once is counted exactly.
BUILD=${1:-build}
. tests/e2e/lib/cuda.bash
. tests/e2e/lib/serve.bash

[ -x "$WL/cuda_lend_exec" ] || { fail "missing $WL/cuda_lend_exec (make BUILD=$BUILD)"; exit 1; }
serve_start a --libcuda "$FAKE" --idle-timeout 120 || { fail "serve starts"; exit 1; }
URL=http://127.0.0.1:$SERVE_PORT/metrics

# has LINE: a scrape holds exactly this line within 60 s (the last calls' returns come late;
# under the sanitizer build with the whole suite running, 30 s was once not enough)
has() {
	for _ in $(seq 240); do
		curl -s "$URL" | grep -qxF "$1" && return 0
		sleep 0.25
	done
	echo "not in the scrape: $1; the scrape has: $(curl -s "$URL" | grep -F "${1%%\{*}" | grep -F "pid=\"$(echo "$1" | sed -n 's/.*pid="\([0-9]*\)".*/\1/p')\"" | tr '\n' ';')" >&2
	return 1
}
# series PATTERN: how many lines of the last scrape match
series() { curl -s "$URL" | grep -c "$1"; }

# a loan: 20 launches, 20 under the name grtrace-lent, 20 more under its own name again
"$WL/cuda_lend_exec" 20 &
P=$!
wait $P
check "lend workload ran" [ $? = 0 ]
L="pid=\"$P\",comm=\"cuda_lend_exec\""
check "the thread's own launches, before and after the loan" \
	has "grtrace_cuda_launches_total{$L,kernel=\"mine\"} 40"
check "... and its launch calls: the lent ones not counted" \
	has "grtrace_cuda_api_calls_total{$L,api=\"cuLaunchKernel\"} 40"
check "... nor timed" has "grtrace_cuda_api_duration_seconds_count{$L,api=\"cuLaunchKernel\"} 40"
check "no launches of the lent kernel" [ "$(series "^grtrace_cuda_launches_total{$L,kernel=\"lent\"}")" = 0 ]

# the main thread lent to grtrace (named grtrace-lent) while another thread makes every call:
# the process is not labelled with grtrace's name
"$WL/cuda_lend_exec" 12 lent-main &
M=$!
wait $M
check "lent-main workload ran" [ $? = 0 ]
check "its launches, under the calling thread's name, not grtrace's" \
	has "grtrace_cuda_launches_total{pid=\"$M\",comm=\"lend_worker\",kernel=\"mine\"} 12"

# the gate itself: a workload that opens it while an earlier writer is still open, and sees that
# writer close without a byte for it, waits for the next opening (the exec below meets this when
# the first byte's writer closes late on a loaded machine; before, it exited and the script hung)
mkfifo "$tmp/stale"
exec 3<>"$tmp/stale" # a writer (and reader) that never writes
WORKLOAD_GATE=$tmp/stale "$WL/cuda_lend_exec" 1 3>&- &
G=$!
for _ in $(seq 200); do
	ls -l "/proc/$G/fd" 2>/dev/null | grep -q "$tmp/stale" && break
	sleep 0.05
done
exec 3>&-
sleep 0.3
check "a stale writer closing does not open the gate" kill -0 $G
check "... the next opening does" open_gate "$tmp/stale"
wait $G
check "... and the workload ran" [ $? = 0 ]

# an exec: 15 + 15 launches (and 15 lent), then the process execs itself and, past the gate
# again, its main thread (the same thread) launches 15 times in the new program
# each opening of the gate writes one byte: the rest of a longer write could still be in the
# FIFO when the exec'd program opens it (the writer not yet closed, on a loaded machine) and
# let it through at once, before the first program's final series were scraped; and the exec'd
# program, finding the first byte's writer not yet closed, reads an end of file and waits for
# the next opening (workload_gate)
mkfifo "$tmp/gate"
WORKLOAD_GATE=$tmp/gate "$WL/cuda_lend_exec" 15 exec &
E=$!
check "the workload opened its gate" open_gate "$tmp/gate"
X="pid=\"$E\",comm=\"cuda_lend_exec\""
check "the first program's launches, final at its exec" \
	has "grtrace_cuda_launches_total{$X,kernel=\"mine\"} 30"
check "... which ended it" has "grtrace_cuda_process_exited{$X} 1"
check "the exec'd program opened its gate" open_gate "$tmp/gate"
wait $E
check "exec workload ran" [ $? = 0 ]
check "the new program's launches on the same thread are counted" \
	has "grtrace_cuda_launches_total{$X,kernel=\"after_exec\"} 15"
check "... and its launch calls" has "grtrace_cuda_api_calls_total{$X,api=\"cuLaunchKernel\"} 15"
check "... and its allocation, in the process's own counters" \
	has "grtrace_cuda_alloc_bytes_total{$X,kind=\"device\"} 4096"

# two threads launching at once, on both CPUs: every launch counted once
"$WL/cuda_storm" 1 2 >"$tmp/storm.out" &
S=$!
wait $S
launches=$(sed -n 's/^launches \([0-9]*\) .*/\1/p' "$tmp/storm.out")
check "storm on two threads ran" [ -n "$launches" ]
check "the storm's $launches launches on two threads all counted" \
	has "grtrace_cuda_launches_total{pid=\"$S\",comm=\"cuda_storm\",kernel=\"storm\"} $launches"
check "... and returned: the histogram's count" \
	has "grtrace_cuda_api_duration_seconds_count{pid=\"$S\",comm=\"cuda_storm\",api=\"cuLaunchKernel\"} $launches"
check "serve stops on SIGINT with status 0" serve_stop "$SERVE_PID"
exit $failed
