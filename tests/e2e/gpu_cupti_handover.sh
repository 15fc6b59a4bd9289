#!/bin/bash
# CUPTI never breaks the application's profiler (fake driver and CUPTI, which allows one subscriber
# like the real one): a profiler in the program that starts before CUDA or in mid-run, and another
# tool's injection library, get CUPTI with every call succeeding and see what they see untraced; the
# trace says what device timing grtrace lost and from when, and the block probes go on.
set -u
. tests/e2e/lib/inject.bash
N=10

# facts NAME: application kernels timed by CUPTI, probe launches, the handover line and whether
# every CUPTI kernel record's call came before it
facts() {
	"$G" parse --format json "$T/$1.grt" | python3 -c '
import json, sys
recs = [json.loads(l) for l in sys.stdin]
lines = [r for r in recs if r["type"] == "source_status" and r["status"] == -16]
kernels = [r for r in recs if r["type"] == "gpu_kernel" and not r["kernel"].startswith("__grt_")]
at = lines[0]["ts_ns"] if len(lines) == 1 else 0
print(len(kernels), len([r for r in recs if r["type"] == "gpu_launch"]),
      all(k["api_enter_ns"] < at for k in kernels))
for l in lines:
    print(l["message"])'
}
# notes NAME: the recorder's notes about the gpu source, pid left out
notes() { grep "^grtrace: note: gpu: pid" "$T/$1.err" | sed 's/pid [0-9]*: //'; }

lost_after="grtrace's CUPTI kernel, copy and memset records end here; launches of instrumented kernels keep their block-probe START/END, other kernels (no PTX) and copies are no longer timed"
lost_all="no CUPTI kernel, copy or memset records from grtrace for this process; launches of instrumented kernels keep their block-probe START/END"

# a profiler that starts in mid-run, after N launches grtrace timed: it subscribes (no
# MULTIPLE_SUBSCRIBERS error), sees its N launches on CUPTI's own clock; the trace has the N
# kernels timed before the handover and the probes of all 2N launches
"$FIX/app_profiler" mid $N >"$T/mid_alone.out"
record mid gpu -- "$FIX/app_profiler" mid $N
if [ "$(cat "$T/mid_alone.out")" = "subscribe=0 register=0 enable=0 kernels_seen=$N foreign_buffers=0 other_clock=0 failed=0" ] &&
	diff "$T/mid_alone.out" "$T/mid.out" >/dev/null; then
	ok mid_run_profiler_works
else
	fail mid_run_profiler_works "$(cat "$T/mid.out")"
fi
want="$N $((2 * N)) True
CUPTI handed over to the application's profiler (it called cuptiSubscribe): $lost_after"
[ "$(facts mid)" = "$want" ] && ok mid_run_trace_says_what_is_lost || fail mid_run_trace_says_what_is_lost "$(facts mid)"
[ "$(notes mid)" = "grtrace: note: gpu: CUPTI handed over to the application's profiler (it called cuptiSubscribe): $lost_after" ] &&
	ok mid_run_one_note || fail mid_run_one_note "$(notes mid)"

# the same for a profiler that looks its CUPTI entry points up itself (dlsym on its handle)
record mid_dlsym gpu -- "$FIX/app_profiler" mid-dlsym $N
diff "$T/mid_alone.out" "$T/mid_dlsym.out" >/dev/null && ok looked_up_profiler_works ||
	fail looked_up_profiler_works "$(cat "$T/mid_dlsym.out")"
[ "$(facts mid_dlsym)" = "$want" ] && ok looked_up_trace_says_what_is_lost ||
	fail looked_up_trace_says_what_is_lost "$(facts mid_dlsym)"

# a profiler that subscribes before CUDA starts: grtrace never takes CUPTI (nor changes its clock)
"$FIX/app_profiler" start $N >"$T/start_alone.out"
record start gpu -- "$FIX/app_profiler" start $N
diff "$T/start_alone.out" "$T/start.out" >/dev/null && grep -q "kernels_seen=$N foreign_buffers=0 other_clock=0 failed=0" "$T/start.out" &&
	ok start_profiler_works || fail start_profiler_works "$(cat "$T/start.out")"
want="0 $N True
CUPTI left to the application's profiler (it called cuptiSubscribe before grtrace started CUPTI): $lost_all"
[ "$(facts start)" = "$want" ] && ok start_trace_says_what_is_lost || fail start_trace_says_what_is_lost "$(facts start)"
[ "$(notes start | wc -l)" = 1 ] && ok start_one_note || fail start_one_note "$(notes start)"

# another tool's injection (CUDA_INJECTION64_PATH, kept as it is): it gets CUPTI at cuInit and sees
# every kernel it sees untraced; grtrace does not start CUPTI, says so, and probes all launches
CUDA_INJECTION64_PATH=$PWD/$FIX/libfaketool.so FAKE_TOOL_REPORT="$T/tool_alone.txt" "$FIX/app" 20 >/dev/null
record tool gpu CUDA_INJECTION64_PATH="$PWD/$FIX/libfaketool.so" FAKE_TOOL_REPORT="$T/tool.txt" -- "$FIX/app" 20
[ "$(cat "$T/tool_alone.txt")" = "tool: subscribe=0 register=0 enable=0 kernels_seen=21 foreign_buffers=0 other_clock=0" ] &&
	diff "$T/tool_alone.txt" "$T/tool.txt" >/dev/null && ok other_tool_works ||
	fail other_tool_works "$(cat "$T/tool.txt" 2>&1)"
want="0 21 True
CUPTI left to another tool (CUDA_INJECTION64_PATH=$PWD/$FIX/libfaketool.so): $lost_all"
[ "$(facts tool)" = "$want" ] && ok other_tool_trace_says_what_is_lost || fail other_tool_trace_says_what_is_lost "$(facts tool)"
[ "$(notes tool | wc -l)" = 1 ] && ok other_tool_one_note || fail other_tool_one_note "$(notes tool)"

# no client: no handover line, no note
record plain gpu -- "$FIX/app" 20
[ "$(facts plain)" = "22 21 False" ] && [ -z "$(notes plain)" ] && ok no_client_no_handover ||
	fail no_client_no_handover "$(facts plain) / $(notes plain)"
exit $failed
