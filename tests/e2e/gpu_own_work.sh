#!/bin/bash
# grtrace's own work inside the target (fake driver and CUPTI): its driver calls happen on its own
# grtrace-* threads only, so the cuda source sees on the application's threads exactly the calls it
# sees without the library; its device records (calibration and summarizer kernels, the
# collection's copies, the probe buffers' memsets) are in the trace flagged as its own.
set -u
. tests/e2e/lib/inject.bash

# app_calls NAME: the cuda calls of the application's threads, "type api" with counts, sorted
app_calls() {
	"$G" parse --format json "$T/$1.grt" | python3 -c '
import json, sys
from collections import Counter
calls = Counter()
for line in sys.stdin:
    r = json.loads(line)
    if "api" in r and not r.get("comm", "").startswith("grtrace-"):
        calls[(r["type"], r["api"])] += 1
for (t, api), n in sorted(calls.items()):
    print(n, t, api)'
}

# the same calls on the application's threads without the library and with it: calibration,
# module JIT, probe buffers, collection and the exit all run on grtrace-* threads
# same_calls TEST ALONE WITH: the application's threads made the same cuda calls in both recordings
same_calls() {
	app_calls "$2" >"$T/$2.calls"
	app_calls "$3" >"$T/$3.calls"
	if [ -s "$T/$2.calls" ] && diff "$T/$2.calls" "$T/$3.calls" >"$T/$1.diff"; then
		ok "$1"
	else
		fail "$1" "$(tr '\n' ' ' <"$T/$1.diff")"
	fi
}
record threads_alone cuda -- "$FIX/app_threads" 4 20
record threads cuda,gpu -- "$FIX/app_threads" 4 20
same_calls threads_no_own_call_on_application_threads threads_alone threads
record app_alone cuda -- "$FIX/app" 20
record app cuda,gpu GRTRACE_GPU_KERNELS=^vector -- "$FIX/app" 20
same_calls app_no_own_call_on_application_threads app_alone app

# the library's device records: every calibration and summarizer kernel the fake driver ran, every
# copy and memset beyond the application's 400, flagged own; the application's records are not
"$FIX/check_brackets" "$T/threads.grt" >"$T/threads.check"
read -r kernels copies launches < <(sed -n 's/.* own_kernels=\([0-9]*\) own_copies=\([0-9]*\) own_launches=\([0-9]*\)$/\1 \2 \3/p' "$T/threads.check")
want_kernels=$(($(fake threads calib) + $(fake threads summarize)))
want_copies=$(($(fake threads copies) + $(fake threads memsets) - 400))
[ "${kernels:-}" = "$want_kernels" ] && [ "$kernels" -ge 3 ] && ok own_kernels_flagged ||
	fail own_kernels_flagged "$kernels flagged, the fake ran $want_kernels"
[ "${copies:-}" = "$want_copies" ] && [ "$copies" -ge 1 ] && ok own_copies_flagged ||
	fail own_copies_flagged "$copies flagged, the fake made $want_copies"
[ "${launches:-}" = 0 ] && ok no_probe_launch_is_own || fail no_probe_launch_is_own "$launches"
grep -q "^gpu_kernel=256 gpu_copy=400 gpu_launch=160 matched=816 failed=0 " "$T/threads.check" &&
	ok application_records_not_flagged || fail application_records_not_flagged "$(cat "$T/threads.check")"
# the calibration kernels ran on none of the application's threads
n=$("$G" parse --format json "$T/threads.grt" | python3 -c '
import json, sys
recs = [json.loads(l) for l in sys.stdin]
app = {r["tid"] for r in recs if "api" in r and not r.get("comm", "").startswith("grtrace-")}
calib = [r["tid"] for r in recs if r["type"] == "gpu_kernel" and r["kernel"] == "__grt_calib"]
print(len(calib), len(app), sum(1 for t in calib if t in app))')
set -- $n
[ "$1" -ge 2 ] && [ "$2" = 5 ] && [ "$3" = 0 ] && ok calibration_off_application_threads ||
	fail calibration_off_application_threads "$n"

# the application's first launch does not wait for the calibration: a calibration kernel that can
# only start once an application kernel ran still gives the opening fit
record late_calib gpu FAKE_CUDA_CALIB_AFTER_FIRST_LAUNCH=1 -- "$FIX/app" 20
n=$("$G" parse "$T/late_calib.grt" | grep -c "calibration failed")
m=$("$G" parse --format json "$T/late_calib.grt" | grep -c '"clock":"globaltimer"')
[ "$n" = 0 ] && [ "$m" -ge 2 ] && ok first_launch_does_not_wait_for_calibration ||
	fail first_launch_does_not_wait_for_calibration "$n failures, $m fits"
[ "$(fake late_calib probed)" = 21 ] && ok late_calib_app_probed ||
	fail late_calib_app_probed "$(cat "$T/late_calib.fake")"

# a completion event after every 64th launch of a stream, in that stream: 70 launches on the
# legacy default stream, 70 on the thread's own (per-thread default stream) one
record events gpu -- "$FIX/app_threads" 1 70
n="$(fake events events_legacy) $(fake events events_per_thread)"
[ "$n" = "1 1" ] && ok completion_events_on_the_launch_stream || fail completion_events_on_the_launch_stream "$n"
exit $failed
