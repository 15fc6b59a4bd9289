#!/bin/bash
# A CUDA graph captured in global mode while the gpu source's library calibrates the GPU clock and
# prepares its probes on its own threads (fake driver that enforces capture rules as the driver
# does): the capture ends as it does without the library; none of the library's driver calls is
# refused, so none breaks the application's capture.
set -u
. tests/e2e/lib/inject.bash

record alone cuda -- "$FIX/app_capture" 500
# the library's module loads (calibration, probes) made slow, so they fall inside the capture
record traced cuda,gpu FAKE_LOAD_EX_DELAY_MS=100 -- "$FIX/app_capture" 500
check capture_ends_cleanly_untraced grep -qx 'end_capture=0 graph=yes' "$T/alone.out"
check capture_ends_cleanly_with_the_library grep -qx 'end_capture=0 graph=yes' "$T/traced.out"
n=$(fake traced unsafe_in_capture)
[ "$n" = 0 ] && ok no_library_call_refused_during_the_capture ||
	fail no_library_call_refused_during_the_capture "$n refused"
# the case is only meaningful when the library's work overlapped the capture: it calibrated
n=$(fake traced calib)
[ "$n" -ge 1 ] && ok library_calibrated_while_capturing || fail library_calibrated_while_capturing "calib=$n"
exit $failed
