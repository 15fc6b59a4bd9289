#!/bin/bash
# The block probes' buffer pool on the fake driver: arenas, recycling without the application's
# synchronization, a GPU held behind, and the library's cost line.
set -u
. tests/e2e/lib/inject.bash
export GRTRACE_GPU_CUPTI_KERNELS=

# json NAME PYTHON-EXPRESSION over `recs` (the trace's records as dicts): prints its value
json() {
	"$G" parse --format json "$T/$1.grt" | python3 -c "
import json, re, sys
recs = [json.loads(l) for l in sys.stdin]
def of(t): return [r for r in recs if r['type'] == t]
def status(word): return [r['message'] for r in of('source_status') if word in r['message']]
print($2)"
}
# what the library's closing line says: launches collected while running, without a buffer
probes_line() { json "$1" "status('launches instrumented')[0]"; }

# a 1 MiB pool collected at exit: 64 slots of 16 KiB in 4 arenas of a quarter each, the last
# one too (it used to be made one slot at a time near the budget: an allocation, four memsets
# and a stream synchronize per slot, each while a launch waited: 64 of each here)
record arenas gpu GRTRACE_GPU_POOL_MB=1 GRTRACE_GPU_COLLECT=exit -- "$FIX/app" 200
n=$(json arenas "(len(of('gpu_launch')), sum(d['count'] for d in of('drop')))")
[ "$n" = "(64, 138)" ] && ok arenas_dry_counted || fail arenas_dry_counted "got $n"
n="$(fake arenas allocs) $(fake arenas memsets) $(fake arenas stream_syncs)"
[ "$n" = "4 16 8" ] && ok arenas_whole || fail arenas_whole "allocs memsets stream_syncs: $n"

# a launch of 1,000 blocks needs 24,512 bytes: a 24 KiB slot, 10 to an arena of a quarter of a
# 1 MiB pool and 2 in what is left, 42 in all (with one size class per power of two it took a
# 32 KiB slot: 32 launches); the closing line says how many held buffers at once
record classes gpu GRTRACE_GPU_POOL_MB=1 GRTRACE_GPU_COLLECT=exit APP_GRID=1000 -- "$FIX/app" 200
n=$(json classes "(len(of('gpu_launch')), sum(d['count'] for d in of('drop')))")
[ "$n" = "(42, 159)" ] && ok slot_classes_fit || fail slot_classes_fit "got $n"
[[ "$(probes_line classes)" == *", at most 43 launches held buffers at once" ]] &&
	ok most_held_said || fail most_held_said "got $(probes_line classes)"

# without GRTRACE_GPU_POOL_MB the budget is 1/64 of the device's memory, 256 MiB to 1 GiB: the
# fake's 40 GiB give 640 MiB, 4 GiB the floor, 128 GiB the ceiling
for mem in 40960:640 4096:256 131072:1024; do
	record "total${mem%%:*}" gpu FAKE_CUDA_TOTAL_MB="${mem%%:*}" -- "$FIX/app" 5
	[[ "$(probes_line "total${mem%%:*}")" == *" of ${mem##*:} MiB, "* ]] &&
		ok "pool_default_${mem%%:*}_mb" ||
		fail "pool_default_${mem%%:*}_mb" "got $(probes_line "total${mem%%:*}")"
done

# arenas that the driver placed one after another: a copy back reads one arena at a time (a
# 2-D copy may not run from one allocation into the next: the driver refuses it), so every
# launch is read back; 60 launches fit the 1 MiB pool's 64 slots, collected at exit
record adjacent gpu GRTRACE_GPU_POOL_MB=1 FAKE_CUDA_ADJACENT_ALLOCS=1 -- "$FIX/app" 60
n=$(json adjacent "(len(of('gpu_launch')), sum(d['count'] for d in of('drop')), status('reading back'))")
[ "$n" = "(61, 0, [])" ] && ok adjacent_arenas_read_back || fail adjacent_arenas_read_back "got $n"
# the application's own functions (vector_add and probe_fails_kernel, both instrumented) are
# loaded once each, beside their twins' JIT: under lazy loading a first launch without a probe
# buffer would load the original in the middle of the loop (bench/RESULTS.md)
n=$(fake adjacent func_loads)
[ "$n" = 2 ] && ok original_loaded_ahead || fail original_loaded_ahead "cuFuncLoad calls: $n"

# a sync-free loop, the GPU keeping up (4 ms a launch in the driver, as in a GPU-bound loop):
# the collection waits on grtrace's completion events, reads what completed and recycles the
# buffers whenever the pool runs low, so 200 launches fit 128 slots (2 MiB) with none lost;
# the periodic collection is out of the way (10 s) and the loop never synchronizes. (The
# margins are wide: the first collection waits for the opening clock calibration.)
record recycled gpu GRTRACE_GPU_POOL_MB=2 GRTRACE_GPU_DRAIN_MS=10000 FAKE_LAUNCH_US=4000 -- "$FIX/app" 200
n=$(json recycled "(len(of('gpu_launch')), sum(d['count'] for d in of('drop')), status('ran dry'))")
[ "$n" = "(201, 0, [])" ] && ok recycled_full_coverage || fail recycled_full_coverage "got $n"
n=$(probes_line recycled)
[[ "$n" =~ ", 0 without a probe buffer, ".*"; "([0-9]+)" collected while running" ]] &&
	[ "${BASH_REMATCH[1]}" -ge 73 ] && ok recycled_counted || fail recycled_counted "got $n"

# the GPU held behind (events on the application's stream complete only when it synchronizes):
# the first 64 launches hold every buffer, the rest run unprobed, each counted lost, and a dry
# launch makes no driver call: twice the launches, the same allocations, memsets, completion
# events and synchronizes. The launch after the application's sync is probed again.
for n in 200 400; do
	record behind$n gpu GRTRACE_GPU_POOL_MB=1 GRTRACE_GPU_DRAIN_MS=10000 FAKE_GPU_BEHIND=1 \
		APP_PAUSE_MS=300 -- "$FIX/app" $n
done
n="$(json behind200 "(len(of('gpu_launch')), sum(d['count'] for d in of('drop')))") $(json behind400 "(len(of('gpu_launch')), sum(d['count'] for d in of('drop')))")"
[ "$n" = "(65, 137) (65, 337)" ] && ok behind_counted_lost || fail behind_counted_lost "got $n"
# (the calibration's refreshes follow the run's length, not the launches: their syncs are apart)
calls() {
	echo "$(fake "$1" allocs) $(fake "$1" memsets) $(fake "$1" app_event_records)" \
		"$(($(fake "$1" stream_syncs) - $(fake "$1" calib_syncs)))"
}
a=$(calls behind200) b=$(calls behind400)
[ "$a" = "$b" ] && ok behind_dry_launch_no_driver_calls ||
	fail behind_dry_launch_no_driver_calls "allocs memsets events syncs: $a vs $b"
n=$(json behind400 "status('ran dry')[0]")
[[ "$n" == "block probes: the buffer pool (1 MiB) ran dry at launch 65 (kernel vector_add); "* ]] &&
	ok behind_dry_said || fail behind_dry_said "got $n"

# buffers that cannot be read back: counted lost apart from a dry pool, the reason said once
record unread gpu FAKE_CUDA_FAIL_COPIES=1 -- "$FIX/app" 20
n=$(json unread "(len(of('gpu_launch')), sum(d['count'] for d in of('drop')))")
[ "$n" = "(0, 21)" ] && ok unread_counted || fail unread_counted "got $n"
n=$(json unread "status('reading back')")
[[ "$n" =~ ^\[\'block\ probes:\ reading\ back\ [0-9]+\ launches\ failed\ \(CUDA\ error\ 1\ at\ the\ copies\ back\)\;\ their\ records\ are\ counted\ lost\'\]$ ]] &&
	ok unread_said_once || fail unread_said_once "got $n"
n=$(probes_line unread)
[[ "$n" == *", 0 without a probe buffer, 21 not read back, "* ]] && ok unread_in_probes_line ||
	fail unread_in_probes_line "got $n"

# the cost line with the cuda source recording in-process: the launch's bracket then opens at
# the wrapper's entry, before the library's own work, which used to read negative and count
# nearly every timed launch (one in 8) as a first-use launch of seconds
record costline cuda,gpu -- "$FIX/app" 400
n=$(json costline "status('cost:')[0]")
[[ "$n" =~ \ lock\ wait\ [0-9]+,\ ([0-9]+)\ first-use\ launches\ apart\; ]] &&
	[ "${BASH_REMATCH[1]}" -le 2 ] && ok cost_line_first_use || fail cost_line_first_use "got $n"
# the completion events are made ahead (128 when the context opens, topped up by the collection
# thread): none of 10,000 launches (157 events, one per 64; the GPU held behind, so none comes
# back for reuse) hands cuEventCreate to the worker thread and waits for it (every event was made
# so before, a thread's wake-up and back each; without the top-up, 28 are)
record ahead gpu FAKE_GPU_BEHIND=1 FAKE_LAUNCH_US=20 -- "$FIX/app" 10000
n=$(json ahead "status('cost:')[0]")
[[ "$n" == *"; 0 driver calls handed to the worker, "* ]] && ok events_made_ahead ||
	fail events_made_ahead "got $n"
# a context whose events cannot be made (the driver allows 140 in all here) is left alone for
# 100 ms, then 200, 400...: a handful of failed cuEventCreate in the run, not one at every
# collection tick and every due launch (1,316 before); every launch still timed
record rest gpu FAKE_GPU_BEHIND=1 FAKE_LAUNCH_US=20 FAKE_CUDA_EVENTS_MAX=140 -- "$FIX/app" 10000
check "events that cannot be made: the program's status 0" grep -q "^launch_fails=0" "$T/rest.out"
fails=$(fake rest event_create_fails)
[ "$fails" -ge 1 ] && [ "$fails" -le 8 ] && ok events_rest || fail events_rest "$fails failed cuEventCreate"
own="r.get('kernel', '').startswith('__grt_')"
timed=$(json rest "len([r for r in of('gpu_launch') if not $own])")
[ "$timed" = "$(json ahead "len([r for r in of('gpu_launch') if not $own])")" ] && ok events_rest_launches_timed ||
	fail events_rest_launches_timed "$timed launches timed"
exit $failed
