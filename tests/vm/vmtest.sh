#!/bin/bash
# make vmtest: boots Debian's stock kernels in QEMU (KVM, else TCG) with a virtio-gpu device and
# runs the kernel-side suites of tests/vm/guest inside; one "N passed, N failed" line per kernel
# and one for all.
#
# usage: tests/vm/vmtest.sh BUILD [SERIES...]     SERIES: 6.1 6.12 (default: both)
# env:   GRT_VM_SUITES=a,b     only these suites (names of tests/vm/guest/*.sh)
#        GRT_VM_TIMEOUT=S      limit for one VM, boot to power-off (default 900 s with KVM, 3 h without)
#        GRT_VM_KEEP=1         keep the console logs under BUILD/vm/ (they are kept on failure)
#        GRT_VM_E2E=full|quick the e2e scripts the guests run (default: full with KVM, quick without)
set -u
cd "$(dirname "$0")/../.."
repo=$(pwd)
build=$(realpath -m "${1:?usage: tests/vm/vmtest.sh BUILD [SERIES...]}")
shift
series=${*:-6.1 6.12}
work=$build/vm

vm_die() {
	echo "vmtest: $*" >&2
	exit 1
}
. tests/vm/lib/kernel.bash
. tests/vm/lib/initramfs.bash
. tests/vm/lib/accel.bash

for tool in qemu-system-x86_64:qemu-system-x86 busybox:busybox-static cpio:cpio dpkg-deb:dpkg \
	apt-get:apt depmod:kmod modprobe:kmod bash:bash python3:python3 xz:xz-utils; do
	command -v "${tool%%:*}" >/dev/null ||
		vm_die "${tool%%:*} not found; install ${tool#*:} (tools/install-deps.sh vm)"
done
ldd "$(command -v busybox)" >/dev/null 2>&1 &&
	vm_die "$(command -v busybox) is not static; install busybox-static (tools/install-deps.sh vm)"
[ -x "$build/grtrace" ] || vm_die "no $build/grtrace; run make first"

mkdir -p "$work"
vm_userland "$work/userland" "$repo" "$build" || vm_die "cannot assemble the guest userland"
vm_cpio "$work/userland" "$work/userland.cpio.gz" || vm_die "cannot pack the guest userland"

total_pass=0
total_fail=0
for s in $series; do
	deb=$(vm_kernel_deb "$s" "$work/cache") || exit 1
	kdir=$work/kernel-$s
	release=$(vm_kernel_unpack "$deb" "$kdir") || exit 1
	if [ ! -f "$kdir/modules.cpio.gz" ] || [ "$kdir/modules.cpio.gz" -ot "$deb" ] ||
		[ "$kdir/modules.cpio.gz" -ot tests/vm/lib/initramfs.bash ]; then
		vm_modules "$kdir/modules" "$kdir" "$release" &&
			vm_cpio "$kdir/modules" "$kdir/modules.cpio.gz" || vm_die "cannot pack the modules of $release"
	fi
	cat "$work/userland.cpio.gz" "$kdir/modules.cpio.gz" >"$work/initrd-$s.gz"
	log=$work/console-$s.log
	vm_accel "$kdir/boot/vmlinuz-$release" "$work/kvm-probe-$s"
	start=$(date +%s)
	timeout -k 10 "$limit" qemu-system-x86_64 "${accel[@]}" -smp 2 -m 2048 -nodefaults -no-reboot \
		-display none -vga none -serial "file:$log" -device virtio-gpu-pci \
		-kernel "$kdir/boot/vmlinuz-$release" -initrd "$work/initrd-$s.gz" \
		-append "console=ttyS0 loglevel=1 panic=-1 grt.repo=$repo grt.build=$build grt.suites=${GRT_VM_SUITES:-} grt.suite_timeout=$suite_limit grt.script_timeout=$script_limit grt.accel=${accel[1]} grt.e2e=${GRT_VM_E2E:-}" \
		>"$work/qemu-$s.out" 2>&1
	rc=$?
	tr -d '\r' <"$log" >"$log.txt"
	sed -i "s#^\(ok\|FAIL\) - #\1 - [$release] #" "$log.txt"
	pass=$(grep -c '^ok - ' "$log.txt")
	fail=$(grep -c '^FAIL - ' "$log.txt")
	# the suites' notes ('#' lines) only where something failed
	if [ "$fail" -gt 0 ]; then
		grep -E '^(ok|FAIL) - |^#' "$log.txt"
	else
		grep -E '^(ok|FAIL) - ' "$log.txt"
	fi
	if ! grep -q '^grt-vm: done' "$log.txt"; then
		if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
			echo "FAIL - [$release] the VM did not finish within $limit s; last console lines:"
		else
			echo "FAIL - [$release] the VM stopped early (qemu status $rc: $(tail -1 "$work/qemu-$s.out")); last console lines:"
		fi
		grep -vE '^(ok|FAIL) - ' "$log.txt" | tail -15 | sed 's/^/#   /'
		fail=$((fail + 1))
	fi
	echo "vmtest: $release ($s): $pass passed, $fail failed ($(($(date +%s) - start)) s)"
	total_pass=$((total_pass + pass))
	total_fail=$((total_fail + fail))
	[ "$fail" -eq 0 ] && [ "${GRT_VM_KEEP:-0}" != 1 ] && rm -f "$log" "$log.txt"
done
echo "vmtest: $total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
