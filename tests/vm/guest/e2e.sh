#!/bin/bash
# Portability: the end-to-end suites of the BPF sources (cuda's uprobes with the fake driver,
# process tracking, syscall, sched, snoop, record's checks) as they run on the host, unchanged,
# on this kernel. Their ok/FAIL lines are prefixed with the suite's name.
set -u
BUILD=${1:-build}
status=0
# a late dlopen()ed libcuda gets its probes at the next rescan; one perf uprobe per symbol
# (kernels before 6.6) under emulation takes seconds to attach, more than the 1.5 s the
# workloads give by default; 30 s is a wide margin for the second copy's probes on 6.1
export GRT_E2E_LATE_MS=30000
# a recording meant to stop while the workload sleeps 3 s: its start takes longer here too
export GRT_E2E_STOP_S=1.5
# Under emulation (no /dev/kvm on the host) every script costs 5 to 20 times as much: the
# quick set keeps one script per path that differs between kernels (cuda's uprobes and its
# late and -p attach with the fallbacks of kernels before 6.6, the stack pointer its return
# probes see, syscall and sched, the snoop views); GRT_VM_E2E=full runs every script anyway,
# GRT_VM_E2E=quick only those.
full="cuda_record cuda_launch_returns cuda_snoop_known cuda_snoop_threads cuda_snoop_late cuda_fd_limit
	cuda_snoop_pid cuda_snoop_errors cuda_nested serve_nested kernel_sources snoop_views record_cli"
quick="cuda_snoop_known cuda_snoop_late cuda_snoop_pid cuda_fd_limit cuda_nested serve_nested kernel_sources
	snoop_views"
set_name=${GRT_VM_E2E:-$([ "${GRT_VM_ACCEL:-kvm}" = kvm ] && echo full || echo quick)}
case $set_name in
full) scripts=$full ;;
quick) scripts=$quick ;;
*) echo "FAIL - GRT_VM_E2E=$set_name: give full or quick"; exit 1 ;;
esac
echo "# e2e set: $set_name"
for s in $scripts; do
	start=$(date +%s)
	timeout "${GRT_VM_SCRIPT_TIMEOUT:-300}" bash "tests/e2e/$s.sh" "$BUILD" >/tmp/e2e.out 2>&1
	rc=$?
	echo "$s took $(($(date +%s) - start)) s"
	sed -n "s#^\(ok\|FAIL\) - #\1 - $s: #p" /tmp/e2e.out
	if [ $rc -ne 0 ]; then
		grep -q '^FAIL - ' /tmp/e2e.out || echo "FAIL - $s: exited with status $rc"
		grep -v '^ok - \|^FAIL - ' /tmp/e2e.out | tail -5
		status=1
	fi
done
exit $status
