#!/bin/bash
# Probes hold file descriptors: two per entry point and direction where the kernel has no
# uprobe_multi (forced here), so two copies of libcuda pass the usual soft limit of 1024.
# grtrace raises its soft limit to the hard one, gives the programs it launches their own back,
# and where even the hard limit is too low says so rather than listing entry points as refused.
BUILD=${1:-build}
. tests/e2e/lib/cuda.bash
N=7
export GRT_CUDA_NO_UPROBE_MULTI=1

# soft 1024 under a hard limit of 4096: the late second copy is probed like the first
(
	ulimit -Sn 1024 && ulimit -Hn 4096 || exit 1
	mkfifo "$tmp/gate"
	WORKLOAD_GATE=$tmp/gate "$WL/cuda_late_dlopen" "$(realpath "$FAKE_COPY")" 100 "${GRT_E2E_LATE_MS:-1500}" $N &
	wpid=$!
	echo $wpid >"$tmp/wpid"
	grt_start "$tmp/json" "$tmp/err" snoop cuda -p "$wpid" --libcuda "$FAKE" --json || exit 1
	open_gate "$tmp/gate" || echo "no workload at the gate" >&2
	wait $wpid
	grt_wait
)
check "snoop -p with soft limit 1024: ran" [ $? = 0 ]
$EXPECT late "$tmp/json" "$(cat "$tmp/wpid")" $N || failed=1
check "... the second copy probed as the first (only the deliberately unprobeable entry point refused)" \
	grep -q "\"message\":\"$(realpath "$FAKE_COPY"): 117 of 118 entry points probed, 0 absent, 1 refused (cuMemcpyPeer_ptds)\"" "$tmp/json"

# the launched command sees the limits it was started with
(ulimit -Sn 1024 && ulimit -Hn 4096 &&
	"$GRT" record -s cuda --libcuda "$FAKE" -o "$tmp/r.grt" -- sh -c 'echo $(ulimit -Sn) $(ulimit -Hn) >"$0"' "$tmp/limits" 2>"$tmp/err")
check "record: status 0" [ $? = 0 ]
check "... the command's own limits: soft 1024, hard 4096" [ "$(cat "$tmp/limits")" = "1024 4096" ]

# a hard limit below what the probes need: one line naming it, status 1
(ulimit -n 200 && "$GRT" record -s cuda --libcuda "$FAKE" --cuda-via uprobe -o "$tmp/low.grt" -- true 2>"$tmp/err")
check "hard limit 200: record fails with status 1" [ $? = 1 ]
check "... in one line that says to raise ulimit -n" \
	[ "$(wc -l <"$tmp/err")" = 1 -a "$(grep -c 'out of file descriptors.*raise ulimit -n' "$tmp/err")" = 1 ]
exit $failed
