#!/bin/bash
# Call identity end to end (fake driver and CUPTI, `-s cuda,gpu`): every device record's bracket
# holds exactly one cuda call of its thread, for threads launching, copying and setting memory at
# once, through the exports they link and through cuGetProcAddress.
set -u
. tests/e2e/lib/inject.bash

# identity NAME: the bracket check's line in $T/NAME.check, its exit code in $T/NAME.rc
identity() {
	"$FIX/check_brackets" "$T/$1.grt" >"$T/$1.check" 2>&1
	echo $? >"$T/$1.rc"
}
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

# a probed launch that fails runs the original kernel: its records get the second call's bracket
# (the cuda source sees both calls: 24 of the application's, 22 with device work)
record fallback cuda,gpu -- "$FIX/app" 20
identity fallback
n=$(grep -c "launch_fails=0" "$T/fallback.out")
[ "$n" = 1 ] && ok fallback_app_succeeds || fail fallback_app_succeeds
expect_check fallback fallback_bracket_is_the_original_launch \
	"gpu_kernel=22 gpu_copy=0 gpu_launch=21 matched=43 failed=0 cuda_calls=24 cuda_calls_matched=22"
exit $failed
