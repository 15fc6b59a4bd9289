#!/bin/bash
# What every other suite relies on: the kernel has BTF and BPF, the virtio-gpu DRM device is
# up, and grtrace runs (a plain system-call recording of a known workload).
set -u
BUILD=${1:-build}
. tests/vm/guest/common.bash

check "kernel BTF at /sys/kernel/btf/vmlinux" [ -s /sys/kernel/btf/vmlinux ]
check "tracefs mounted with dma_fence events" [ -d /sys/kernel/tracing/events/dma_fence ]
check "virtio-gpu is a DRM device (renderD128)" [ -c /dev/dri/renderD128 ]
check "virtio_gpu tracepoints" [ -d /sys/kernel/tracing/events/virtio_gpu ]
"$BUILD/grtrace" record -s syscall --syscalls getppid -o "$tmp/s.grt" -- \
	"$BUILD/fixtures/kernel_workload" getppid:7 2>"$tmp/err"
record_ok "grtrace records here (status 0)" "$tmp/err" $?
check "... 7 getppid calls" [ "$("$BUILD/grtrace" parse --filter type=syscall "$tmp/s.grt" | grep -c getppid)" = 7 ]
echo "clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
exit $failed
