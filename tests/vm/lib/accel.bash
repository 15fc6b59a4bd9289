# Choosing how the guests run: KVM where it can run a guest, else TCG emulation.
#
# An openable /dev/kvm is not proof: under some nested hypervisors QEMU aborts at start
# (the MSRs it sets are refused) or KVM stops the guest at its first instruction it cannot
# emulate. vm_accel boots the kernel with no initramfs (it panics at once for want of a root
# and, with -no-reboot, QEMU exits) and keeps KVM only if that boot reached the kernel's panic.
# GRT_VM_KVM_DEV names another device node (the test of this file).

# vm_kvm_runs VMLINUZ SCRATCH: status 0 when a KVM guest booted VMLINUZ to its first panic
vm_kvm_runs() {
	local vmlinuz=$1 scratch=$2
	local dev=${GRT_VM_KVM_DEV:-/dev/kvm}
	rm -f "$scratch.log" "$scratch.out"
	if ! [ -r "$dev" ] || ! [ -w "$dev" ]; then
		[ -e "$dev" ] && echo "$dev is not readable and writable by this user" >"$scratch.out"
		return 1
	fi
	# in a subshell, so that the shell's own "Aborted" line goes with QEMU's output
	(timeout -k 5 30 qemu-system-x86_64 -accel kvm -cpu host -smp 1 -m 256 \
		-nodefaults -no-reboot -display none -vga none -serial "file:$scratch.log" \
		-kernel "$vmlinuz" -append "console=ttyS0 panic=-1"; exit $?) >"$scratch.out" 2>&1 || return 1
	grep -qs 'Kernel panic' "$scratch.log"
}

# vm_accel VMLINUZ SCRATCH: sets accel (QEMU's arguments), limit (one VM, seconds), suite_limit
# and script_limit (the guest's), and says so when the guests are emulated
vm_accel() {
	if vm_kvm_runs "$1" "$2"; then
		accel=(-accel kvm -cpu host)
		limit=${GRT_VM_TIMEOUT:-900}
		suite_limit=600
		script_limit=300
		return
	fi
	if [ -e "${GRT_VM_KVM_DEV:-/dev/kvm}" ]; then
		echo "vmtest: /dev/kvm cannot run a guest here ($(grep -s -m1 -iE 'error|failed|not readable' "$2.out" || echo 'no panic reached')): the guests run under TCG emulation (slower)"
	else
		echo "vmtest: no /dev/kvm here: the guests run under TCG emulation (slower)"
	fi
	accel=(-accel tcg -cpu max)
	# emulation is 5 to 20 times slower: the same suites, with limits to match
	limit=${GRT_VM_TIMEOUT:-10800}
	suite_limit=7200
	script_limit=2400
}
