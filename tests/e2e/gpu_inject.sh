#!/bin/bash
# The gpu source end to end without a GPU: the fake driver and CUPTI, libgrtrace-inject.so, record, parse, report.
set -u
. tests/e2e/lib/inject.bash
# most cases count CUPTI's kernel records of kernels the block probes also time, which grtrace
# otherwise leaves off; "cupti_deferred" below checks that default
export GRTRACE_GPU_CUPTI_KERNELS=always
LAUNCHES=20

# json NAME PYTHON-EXPRESSION over `recs` (the trace's records as dicts): prints its value
json() {
	"$G" parse --format json "$T/$1.grt" | python3 -c "
import json, sys
recs = [json.loads(l) for l in sys.stdin]
def of(t): return [r for r in recs if r['type'] == t]
def app(rs): return [r for r in rs if not r.get('kernel', '').startswith('__grt_')]
print($2)"
}
results() { grep -vE '^(getproc_default|getproc_ptds|dlsym_handle|linked)=' "$1"; }

"$FIX/app" $LAUNCHES >"$T/plain.out" 2>&1
record traced gpu -- "$FIX/app" $LAUNCHES
check record_succeeds test -s "$T/traced.grt"
check results_unchanged diff <(results "$T/plain.out") <(results "$T/traced.out")
check app_errors_pass_through grep -qx 'get_missing=500' "$T/traced.out"
check untraced_reaches_driver grep -qx 'getproc_default=libcuda.so.1' "$T/plain.out"
for way in getproc_default getproc_ptds dlsym_handle linked; do
	check "interposed_$way" grep -qx "$way=libgrtrace-inject.so" "$T/traced.out"
done

# a command that clears LD_PRELOAD: the driver's injection hook (CUDA_INJECTION64_PATH, which
# the fake's cuInit honours) dlopen()s the library, whose CUPTI times every kernel; a library
# whose thread-local state asks for more alignment than the static TLS block cannot be loaded so
record hook gpu -- env -u LD_PRELOAD "$FIX/app" $LAUNCHES
n=$(json hook "(len(app(of('gpu_kernel'))), len(of('gpu_launch')))")
[ "$n" = "($((LAUNCHES + 2)), 0)" ] && ok injection_hook_loads_the_library ||
	fail injection_hook_loads_the_library "got $n: $(tail -1 "$T/hook.err")"

# 20 launches + 1 through the per-thread-stream pointer are probed; probe_fails_kernel's
# instrumented launch fails in the fake driver and runs unchanged
n=$(json traced "len(of('gpu_launch'))")
[ "$n" = $((LAUNCHES + 1)) ] && ok launch_summaries || fail launch_summaries "got $n"
n=$(json traced "len(of('gpu_block'))")
[ "$n" = $((LAUNCHES * 8 + 4)) ] && ok block_records || fail block_records "got $n"
n=$(json traced "len(app(of('gpu_kernel')))")
[ "$n" = $((LAUNCHES + 2)) ] && ok cupti_kernels || fail cupti_kernels "got $n"
n=$(json traced "sum(1 for k in app(of('gpu_kernel')) if k['api_enter_ns'] > 0 and k['start_ns'] > k['api_enter_ns'])")
[ "$n" = $((LAUNCHES + 2)) ] && ok kernels_tied_to_calls || fail kernels_tied_to_calls "got $n"
n=$(json traced "len({(l['pid'], l['tid'], l['api_enter_ns']) for l in of('gpu_launch')} & {(k['pid'], k['tid'], k['api_enter_ns']) for k in of('gpu_kernel')})")
[ "$n" = $((LAUNCHES + 1)) ] && ok probe_and_cupti_records_match || fail probe_and_cupti_records_match "got $n"
n=$(json traced "sorted({(l['blocks'], l['sms_used'], l['block_ns_p50'], l['block_ns_max'], l['busiest_sm_ns']) for l in of('gpu_launch')})")
[ "$n" = "[(4, 4, 5000, 25000, 25000), (8, 4, 5000, 25000, 29000)]" ] && ok launch_summary_values || fail launch_summary_values "got $n"
n=$(json traced "[i['reason'] for i in of('gpu_instrument') if i['kernel'] == 'probe_fails_kernel'][-1]")
[ "$n" = "the instrumented launch failed (CUDA error 701); ran unchanged" ] && ok fallback_reason || fail fallback_reason "got $n"
# the fake GPU clock runs 1 ms ahead of CLOCK_MONOTONIC: the handshake must find that
n=$(json traced "all(abs(c['offset_ns'] - 1000000) <= c['error_ns'] + 100000 for c in of('clock_calib') if c['clock'] == 'globaltimer') and len([c for c in of('clock_calib') if c['clock'] == 'globaltimer']) >= 2")
[ "$n" = True ] && ok globaltimer_calibrated || fail globaltimer_calibrated "got $n"
check fake_driver_saw_redirects grep -qE "^plain=1 probed=$((LAUNCHES + 1)) calib=[2-9]" "$T/traced.fake"

"$G" report "$T/traced.grt" --gpu >"$T/report.txt" 2>&1
check report_device_times grep -qE '^ +22 .* vector_add$|^ +21 .* vector_add$' "$T/report.txt"
check report_probes grep -q 'block probes per kernel (21 launch summaries' "$T/report.txt"
check report_not_instrumented grep -q 'kernels instrumented: 1, not instrumented: 1' "$T/report.txt"
# the first fit's offset, within its error bound of the fake's 1 ms (the opening calibration runs
# beside the application: on a loaded machine its bound is wide, and says so)
clock_line=$(grep -E 'globaltimer dev 0: [0-9]+ fits, offset -?[0-9]+ ns, error <= [0-9]+ ns' "$T/report.txt")
python3 -c '
import re, sys
m = re.search(r"offset (-?\d+) ns, error <= (\d+) ns", sys.argv[1])
sys.exit(0 if m and abs(int(m.group(1)) - 1000000) <= int(m.group(2)) + 100000 else 1)' "$clock_line" &&
	ok report_clocks || fail report_clocks "$clock_line"
"$G" report "$T/traced.grt" --gpu --format json | python3 -c 'import json,sys; d=json.load(sys.stdin)["gpu"]; sys.exit(0 if d["probes"][0]["launches"] == 21 and d["not_instrumented"][0]["kernel"] == "probe_fails_kernel" else 1)' &&
	ok report_json || fail report_json
# the hardware event system (Blackwell only) is asked for; the fake CUPTI says no, as on an H100
check cupti_hw_trace_reason grep -q "by instrumenting each launch (hardware event system: " <("$G" parse "$T/traced.grt")

# no CUPTI: one line why, the probes still work, the application is unchanged
# past the first 2 launches of a kernel (the 4-block launch is its 21st) block mode reads no spans: the
# summaries come from the totals the device's summarizer kernel wrote (the fake computes what it
# would); the median is the middle of 5000 ns's half-octave bucket [4096, 6144), the rest exact
record totals gpu GRTRACE_GPU_BLOCK_LAUNCHES=2 -- "$FIX/app" $LAUNCHES
n=$(json totals "(len(of('gpu_launch')), len(of('gpu_block')))")
[ "$n" = "($((LAUNCHES + 1)), 16)" ] && ok totals_launches || fail totals_launches "got $n"
n=$(json totals "sorted({(l['blocks'], l['sms_used'], l['block_ns_p50'], l['block_ns_max'], l['busiest_sm_ns'], l['lost_blocks']) for l in of('gpu_launch')})")
[ "$n" = "[(4, 4, 5120, 25000, 25000, 0), (8, 4, 5000, 25000, 29000, 0), (8, 4, 5120, 25000, 29000, 0)]" ] && ok totals_summary_values || fail totals_summary_values "got $n"
n=$(json totals "sorted({l['end_ns'] - l['start_ns'] for l in of('gpu_launch')})")
[ "$n" = "[28000, 32000]" ] && ok totals_start_end || fail totals_start_end "got $n"
check totals_summarizer_ran grep -qE "summarize=[1-9]" "$T/totals.fake"
# a summarizer that does not load: one line why, every launch summarized on the host from its
# spans instead (exact medians), nothing lost
record nosummarizer gpu FAKE_CUDA_FAIL_SUMMARIZER=1 GRTRACE_GPU_BLOCK_LAUNCHES=2 -- "$FIX/app" $LAUNCHES
n=$(json nosummarizer "sorted({(l['blocks'], l['sms_used'], l['block_ns_p50'], l['block_ns_max'], l['busiest_sm_ns'], l['lost_blocks']) for l in of('gpu_launch')})")
[ "$n" = "[(4, 4, 5000, 25000, 25000, 0), (8, 4, 5000, 25000, 29000, 0)]" ] && ok host_summary_fallback || fail host_summary_fallback "got $n"
"$G" parse "$T/nosummarizer.grt" >"$T/nosummarizer.txt"
check host_summary_reason grep -q "summarizer did not load" "$T/nosummarizer.txt"
check host_summary_no_kernel grep -qE "summarize=0" "$T/nosummarizer.fake"

# the collection runs when the application synchronizes: the app idles 5 s after its first
# sync, recording stops after 3 s (time enough to reach the sync under the sanitizer), and the
# 20 launches before the sync are in the trace although neither the periodic collection
# (GRTRACE_GPU_DRAIN_MS) nor the one at exit has run
APP_PAUSE_MS=5000 GRTRACE_GPU_DRAIN_MS=10000 GRTRACE_GPU_CUPTI=0 FAKE_CUDA_REPORT="$T/syncd.fake" \
	timeout 60 "$G" record -f -s gpu --duration 3 -o "$T/syncd.grt" -- "$FIX/app" $LAUNCHES \
	>"$T/syncd.out" 2>"$T/syncd.err"
n=$(json syncd "len(of('gpu_launch'))")
[ "$n" = $LAUNCHES ] && ok collected_at_sync || fail collected_at_sync "got $n"

# a 1 MiB pool holds 64 slots; collected at exit, nothing frees one earlier, so waiting for a
# slot would only stall the application: the other launches run unchanged and are counted
record smallpool gpu GRTRACE_GPU_CUPTI_KERNELS= GRTRACE_GPU_POOL_MB=1 GRTRACE_GPU_POOL_WAIT=1 GRTRACE_GPU_COLLECT=exit -- "$FIX/app" 200
n=$(json smallpool "(len(of('gpu_launch')), sum(d['count'] for d in of('drop')))")
[ "$n" = "(64, 138)" ] && ok pool_full_at_exit_counted || fail pool_full_at_exit_counted "got $n"
# a dry pool is a capacity limit, not a kernel the probes do not cover: CUPTI's kernel timing
# stays off (on a GPU-bound loop it cost +518%), and the trace says where records started to
# be lost
n=$(json smallpool "[r['message'] for r in of('source_status') if 'kernel timing on from here' in r['message'] or 'ran dry' in r['message']]")
[ "$n" = "['block probes: the buffer pool (1 MiB) ran dry at launch 65 (kernel vector_add); launches run unprobed until collection frees buffers, each counted lost (GRTRACE_GPU_POOL_MB, GRTRACE_GPU_POOL_WAIT=1)']" ] &&
	ok pool_dry_keeps_cupti_off || fail pool_dry_keeps_cupti_off "got $n"
n=$(json smallpool "len(app(of('gpu_kernel')))")
[ "$n" = 0 ] && ok pool_dry_no_cupti_kernels || fail pool_dry_no_cupti_kernels "got $n"

record nocupti gpu GRTRACE_CUPTI_PATH=/nonexistent/libcupti.so.13 -- "$FIX/app" $LAUNCHES
check nocupti_results_unchanged diff <(results "$T/plain.out") <(results "$T/nocupti.out")
n=$(json nocupti "[s['message'] for s in of('source_status') if s['status'] < 0]")
[ "$n" = "['CUPTI kernel timing unavailable: cannot load /nonexistent/libcupti.so.13 (GRTRACE_CUPTI_PATH)']" ] &&
	ok nocupti_reason || fail nocupti_reason "got $n"
n=$(json nocupti "(len(app(of('gpu_kernel'))), len(of('gpu_launch')))")
[ "$n" = "(0, $((LAUNCHES + 1)))" ] && ok nocupti_probes_still_work || fail nocupti_probes_still_work "got $n"

# records CUPTI reports lost are counted as the gpu source's drops
record drops gpu FAKE_CUPTI_DROPS=3 -- "$FIX/app" $LAUNCHES
n=$(json drops "sum(d['count'] for d in of('drop') if d['source'] == 'gpu')")
[ "$n" = 3 ] && ok cupti_drops_counted || fail cupti_drops_counted "got $n"

record noprobes gpu GRTRACE_GPU_PROBES=off -- "$FIX/app" $LAUNCHES
n=$(json noprobes "(len(app(of('gpu_kernel'))), len(of('gpu_launch')), len(of('gpu_instrument')))")
[ "$n" = "($((LAUNCHES + 2)), 0, 0)" ] && ok probes_off || fail probes_off "got $n"
check probes_off_fake_plain grep -qE "^plain=$((LAUNCHES + 2)) probed=0 " "$T/noprobes.fake"

# CUPTI is not loaded until a kernel the probes do not cover: here probe_fails_kernel's
# failed instrumented launch, which runs unchanged; the vector_add launches before it are timed by
# the probes alone, the one after it (through the per-thread-stream pointer) by both
record deferred gpu GRTRACE_GPU_CUPTI_KERNELS= -- "$FIX/app" $LAUNCHES
n=$(json deferred "[r['message'] for r in of('source_status') if 'CUPTI' in r['message'] and 'CUPTI:' not in r['message'] and 'CUDA events:' not in r['message']]")
[ "$n" = "['CUPTI not loaded: the block probes time the kernels; CUPTI waits for a kernel they do not cover', 'copies and memsets timed with CUDA events until CUPTI is loaded', 'CUPTI kernel and copy timing on from here: kernel probe_fails_kernel launched without block probes: its instrumented launch failed and ran unchanged', 'CUPTI kernel timestamps by instrumenting each launch (hardware event system: fake CUPTI error)']" ] &&
	ok cupti_deferred_says_from_when || fail cupti_deferred_says_from_when "got $n"
n=$(json deferred "sorted(k['kernel'] for k in app(of('gpu_kernel')))")
[ "$n" = "['probe_fails_kernel', 'vector_add']" ] && ok cupti_deferred_kernels ||
	fail cupti_deferred_kernels "got $n"
n=$(json deferred "len(of('gpu_launch'))")
[ "$n" = $((LAUNCHES + 1)) ] && ok cupti_deferred_probes_unchanged || fail cupti_deferred_probes_unchanged "got $n"

record selected gpu GRTRACE_GPU_CUPTI_KERNELS= GRTRACE_GPU_KERNELS='^vector' -- "$FIX/app" $LAUNCHES
n=$(json selected "[i['reason'] for i in of('gpu_instrument') if i['kernel'] == 'probe_fails_kernel']")
[ "$n" = "['not selected by the kernel filter']" ] && ok kernel_filter || fail kernel_filter "got $n"
# the kernel the filter leaves out is the one that loads CUPTI, by name
n=$(json selected "[r['message'] for r in of('source_status') if 'timing on from here' in r['message']]")
[ "$n" = "['CUPTI kernel and copy timing on from here: kernel probe_fails_kernel launched without block probes: left out by the kernel filter, or its rewrite failed']" ] &&
	ok cupti_on_names_kernel || fail cupti_on_names_kernel "got $n"

# a filter that selects none of a module's kernels: the reason CUPTI is loaded says so (it said
# "its module has no PTX grtrace could rewrite")
record noneselected gpu GRTRACE_GPU_CUPTI_KERNELS= GRTRACE_GPU_KERNELS='^nothing_matches$' -- "$FIX/app" $LAUNCHES
n=$(json noneselected "[r['message'] for r in of('source_status') if 'timing on from here' in r['message']]")
[ "$n" = "['CUPTI kernel and copy timing on from here: kernel vector_add launched without block probes: no kernel selected for probes']" ] &&
	ok cupti_on_says_none_selected || fail cupti_on_says_none_selected "got $n"

record thread gpu GRTRACE_GPU_PROBES=thread GRTRACE_GPU_BLOCK_LAUNCHES=2 -- "$FIX/app" $LAUNCHES
n=$(json thread "[(l['blocks'], l['sms_used'], l['exec_ns']) for l in of('gpu_launch')]")
[ "$n" = "[(8, 4, 12063), (8, 4, 12063)]" ] && ok thread_mode_first_launches || fail thread_mode_first_launches "got $n"
check thread_mode_all_probed grep -qE "^plain=1 probed=$((LAUNCHES + 1)) " "$T/thread.fake"

# nothing to inject into: a running pid, or a command that makes no CUDA call
"$G" record -f -s gpu -o "$T/pid.grt" -p $$ --duration 0.1 >"$T/pid.out" 2>&1
rc=$?
[ $rc = 1 ] && grep -q "needs a command to launch" "$T/pid.out" && ok pid_refused || fail pid_refused "rc=$rc"
timeout 60 "$G" record -f -s gpu -o "$T/true.grt" -- true >/dev/null 2>&1
n=$("$G" parse --format json "$T/true.grt" | grep -c 'inject library never reported')
[ "$n" = 1 ] && ok no_cuda_command || fail no_cuda_command "got $n"

# the CUPTI offsets the library reads, against the toolkit's headers when they are installed
if [ -x "$FIX/cupti_layout" ]; then
	check cupti_layout_matches_headers "$FIX/cupti_layout"
fi
exit $failed
