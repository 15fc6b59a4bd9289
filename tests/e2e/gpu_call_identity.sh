#!/bin/bash
# Call identity end to end (fake driver and CUPTI, `-s cuda,gpu`): every device record's bracket
# holds exactly one cuda call of its thread, for threads launching, copying and setting memory at
# once, through the exports they link and through cuGetProcAddress.
set -u
. tests/e2e/lib/inject.bash
# these cases need CUPTI's kernel records of kernels the block probes also time, which
# grtrace otherwise leaves off (docs/gpu.md, "CUPTI only where the probes do not reach")
export GRTRACE_GPU_CUPTI_KERNELS=always

# identity NAME: the bracket check's line in $T/NAME.check, its exit code in $T/NAME.rc
identity() {
	"$FIX/check_brackets" "$T/$1.grt" >"$T/$1.check" 2>&1
	echo $? >"$T/$1.rc"
}
# by_events NAME: how many of the recording's copy records CUDA events timed
by_events() { "$G" parse "$T/$1.grt" --filter type=gpu_copy | grep -c "timed_by=events"; }
expect_check() { # recording, test name, expected counts line
	local got
	got=$(tail -1 "$T/$1.check")
	# grtrace's own records (own_*=) vary with the collection's timing: gpu_own_work.sh counts them
	if [ "$(cat "$T/$1.rc")" = 0 ] && [ "${got%% own_kernels=*}" = "$3" ]; then
		ok "$2"
	else
		fail "$2" "rc $(cat "$T/$1.rc"): $(tr '\n' ' ' <"$T/$1.check")"
	fi
}

# 4 threads x 20 rounds: 160 launches (each probed, so a gpu_kernel and a gpu_launch), 32 graph
# launches of 3 kernels, 240 copies and 160 memsets; 592 calls, each matched by its records
record threads cuda,gpu -- "$FIX/app_threads" 4 20
identity threads
grep -q "failed=0" "$T/threads.out" && ok threads_app_succeeds || fail threads_app_succeeds
expect_check threads threads_every_record_one_call \
	"gpu_kernel=256 gpu_copy=400 gpu_launch=160 matched=816 failed=0 cuda_calls=592 cuda_calls_matched=592"

# without probes the plain launch path stamps the bracket
record noprobes cuda,gpu GRTRACE_GPU_PROBES=off -- "$FIX/app_threads" 4 20
identity noprobes
expect_check noprobes noprobes_every_record_one_call \
	"gpu_kernel=256 gpu_copy=400 gpu_launch=0 matched=656 failed=0 cuda_calls=592 cuda_calls_matched=592"

# a probed launch that fails runs the original kernel: its records get the second call's bracket.
# Recorded in-process (the default), the application's 23 calls, 22 with device work; by uprobes
# the failed instrumented launch too (24), which the library makes from inside the call
record fallback cuda,gpu -- "$FIX/app" 20
identity fallback
n=$(grep -c "launch_fails=0" "$T/fallback.out")
[ "$n" = 1 ] && ok fallback_app_succeeds || fail fallback_app_succeeds
expect_check fallback fallback_bracket_is_the_original_launch \
	"gpu_kernel=22 gpu_copy=0 gpu_launch=21 matched=43 failed=0 cuda_calls=23 cuda_calls_matched=22"
RECORD_FLAGS="--cuda-via uprobe" record fallback_uprobe cuda,gpu -- "$FIX/app" 20
identity fallback_uprobe
expect_check fallback_uprobe fallback_bracket_is_the_original_launch_uprobe \
	"gpu_kernel=22 gpu_copy=0 gpu_launch=21 matched=43 failed=0 cuda_calls=24 cuda_calls_matched=22"
# the default where the probes time the kernels: CUPTI stays out until a kernel they do not cover
# (round 0's graph launch, one thread); until then round 0's 3 copies and 2 memsets are timed
# with CUDA events recorded around the calls as grtrace's own calls, the other 95 by CUPTI:
# 100 copies, each with its one call; CUPTI's kernels from the graph launch on (38 + 8 x 3)
record deferred cuda,gpu GRTRACE_GPU_CUPTI_KERNELS= -- "$FIX/app_threads" 1 20
identity deferred
grep -q "failed=0" "$T/deferred.out" && ok deferred_app_succeeds || fail deferred_app_succeeds
expect_check deferred deferred_every_record_one_call \
	"gpu_kernel=62 gpu_copy=100 gpu_launch=40 matched=202 failed=0 cuda_calls=148 cuda_calls_matched=148"
n=$(by_events deferred)
[ "$n" = 5 ] && ok deferred_copies_timed_by_events || fail deferred_copies_timed_by_events "got $n"
check deferred_report_says_events grep -q "(5 of these timed with CUDA events around their calls" \
	<("$G" report "$T/deferred.grt" --gpu)
check deferred_no_cupti_before grep -q "CUPTI not loaded: the block probes time the kernels" \
	<("$G" parse "$T/deferred.grt" --filter type=source_status)
# by uprobes the events' recording calls are seen, on a thread lent to grtrace: its own, not the application's
RECORD_FLAGS="--cuda-via uprobe" record deferred_uprobe cuda,gpu GRTRACE_GPU_CUPTI_KERNELS= -- "$FIX/app_threads" 1 20
identity deferred_uprobe
expect_check deferred_uprobe deferred_every_record_one_call_uprobe \
	"gpu_kernel=62 gpu_copy=100 gpu_launch=40 matched=202 failed=0 cuda_calls=148 cuda_calls_matched=148"
check deferred_events_line grep -q "copies and memsets timed with CUDA events: 5 timed (within [0-9]* ns), 0 not timed" \
	<("$G" parse "$T/deferred.grt" --filter type=source_status)
# many copies (5 for 2 launches, no graph launch): events cost more than CUPTI would, so CUPTI is
# loaded for the copies at the 256th, with 104 launches made; its kernel activity stays off
record copyheavy cuda,gpu GRTRACE_GPU_CUPTI_KERNELS= -- "$FIX/app_threads" 1 600 nographs
identity copyheavy
expect_check copyheavy copyheavy_every_record_one_call \
	"gpu_kernel=0 gpu_copy=3000 gpu_launch=1200 matched=4200 failed=0 cuda_calls=4200 cuda_calls_matched=4200"
n=$(by_events copyheavy)
[ "$n" = 256 ] && ok copyheavy_events_until_switch || fail copyheavy_events_until_switch "got $n"
check copyheavy_says_why grep -q "CUPTI copy timing on from here (256 copies and memsets for 104 launches); CUPTI kernel timing waits for a kernel the block probes do not cover" \
	<("$G" parse "$T/copyheavy.grt" --filter type=source_status)
# 4 threads: copies in flight on the others when one hands them to CUPTI are recorded once,
# by events or by CUPTI (whose callback ran in the call); 3,000 copies, none twice (it was 3,051)
record copyheavy4 cuda,gpu GRTRACE_GPU_CUPTI_KERNELS= -- "$FIX/app_threads" 4 150 nographs
identity copyheavy4
expect_check copyheavy4 copyheavy_threads_each_copy_once \
	"gpu_kernel=0 gpu_copy=3000 gpu_launch=1200 matched=4200 failed=0 cuda_calls=4200 cuda_calls_matched=4200"
# the same with each copy taking 300 us in the driver and each CUPTI callback 200 us to turn on:
# calls begun before their callback was on are in CUPTI's records without it, and their events
# timed them; CUPTI's records of them are left out (150-odd of them were recorded twice)
record copyslow4 cuda,gpu GRTRACE_GPU_CUPTI_KERNELS= FAKE_CUDA_COPY_US=300 FAKE_CUPTI_ENABLE_US=200 \
	-- "$FIX/app_threads" 4 150 nographs
identity copyslow4
expect_check copyslow4 copyslow_threads_each_copy_once \
	"gpu_kernel=0 gpu_copy=3000 gpu_launch=1200 matched=4200 failed=0 cuda_calls=4200 cuda_calls_matched=4200"
n=$("$G" parse "$T/copyslow4.grt" --filter type=source_status |
	grep -o "; [0-9]* more left to the CUDA events that timed them" | tr -dc 0-9)
[ "${n:-0}" -gt 0 ] && ok copyslow_left_to_events_counted || fail copyslow_left_to_events_counted "got '$n'"
# loaded for the copies, CUPTI turns its kernel activity on at the last round's graph launches:
# their 2 x 3 kernels are its only kernel records
record copythengraph cuda,gpu GRTRACE_GPU_CUPTI_KERNELS= -- "$FIX/app_threads" 1 600 lategraphs
identity copythengraph
expect_check copythengraph copythengraph_every_record_one_call \
	"gpu_kernel=6 gpu_copy=3000 gpu_launch=1200 matched=4206 failed=0 cuda_calls=4202 cuda_calls_matched=4202"
check copythengraph_kernels_from_here grep -q "CUPTI kernel timing on from here: a graph or multi-device launch" \
	<("$G" parse "$T/copythengraph.grt" --filter type=source_status)
# GRTRACE_GPU_COPY_EVENTS=always keeps events whatever the rate
record copyevents cuda,gpu GRTRACE_GPU_CUPTI_KERNELS= GRTRACE_GPU_COPY_EVENTS=always -- "$FIX/app_threads" 1 600 nographs
n=$(by_events copyevents)
[ "$n" = 3000 ] && ok copyevents_always || fail copyevents_always "got $n"

# GRTRACE_GPU_COPY_EVENTS=0: round 0's copies are not timed on the device, the later 95 by CUPTI
record noevents cuda,gpu GRTRACE_GPU_CUPTI_KERNELS= GRTRACE_GPU_COPY_EVENTS=0 -- "$FIX/app_threads" 1 20
identity noevents
expect_check noevents noevents_copies_from_cupti_only \
	"gpu_kernel=62 gpu_copy=95 gpu_launch=40 matched=197 failed=0 cuda_calls=148 cuda_calls_matched=143"
check noevents_says_so grep -q "copies and memsets not timed on the device until CUPTI is loaded (GRTRACE_GPU_COPY_EVENTS=0)" \
	<("$G" parse "$T/noevents.grt" --filter type=source_status)
exit $failed
