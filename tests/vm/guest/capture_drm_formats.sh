#!/bin/bash
# Not part of make vmtest (tests/vm/capture_drm_formats.sh runs it): prints the tracefs format
# files of the DRM events the drm source decodes, with the GPU driver modules loaded without
# their hardware, each between a "grt-file: PATH" and a "grt-file-end" line.
set -u
grt-load-modules gpu
cd /sys/kernel/tracing/events || exit 1
for event in gpu_scheduler/drm_sched_job gpu_scheduler/drm_run_job gpu_scheduler/drm_sched_process_job \
	gpu_scheduler/drm_sched_job_wait_dep virtio_gpu/virtio_gpu_cmd_queue \
	virtio_gpu/virtio_gpu_cmd_response amdgpu/amdgpu_cs_ioctl amdgpu/amdgpu_sched_run_job \
	i915/i915_request_add i915/i915_request_submit i915/i915_request_in i915/i915_request_out \
	i915/i915_request_queue i915/i915_request_retire i915/i915_request_wait_begin \
	i915/i915_request_wait_end xe/xe_sched_job_create xe/xe_sched_job_exec xe/xe_sched_job_run \
	xe/xe_sched_job_free xe/xe_exec_queue_submit dma_fence/dma_fence_init dma_fence/dma_fence_emit; do
	[ -f "$event/format" ] || continue
	echo "grt-file: $event/format"
	cat "$event/format"
	echo "grt-file-end"
done
exit 0
