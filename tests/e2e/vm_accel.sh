#!/bin/bash
# make vmtest's choice of accelerator (tests/vm/lib/accel.bash), with a stand-in QEMU on PATH:
# KVM only where a KVM guest booted, TCG where QEMU aborts at start, where the guest stopped
# before its kernel ran and where there is no device node.
set -u
. tests/e2e/lib/cases.bash
. tests/vm/lib/accel.bash

mkdir -p "$tmp/bin"
# the stand-in behaves as $FAKE_QEMU says: panic (a working KVM), abort, stall
cat >"$tmp/bin/qemu-system-x86_64" <<'QEMU'
#!/bin/bash
serial=
while [ $# -gt 0 ]; do
	[ "$1" = -serial ] && serial=${2#file:}
	shift
done
case $FAKE_QEMU in
panic) printf 'Linux version 6.1\r\nKernel panic - not syncing: VFS: Unable to mount root fs\r\n' >"$serial" ;;
abort) echo "qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69" >&2; ulimit -c 0; kill -ABRT $$ ;;
stall) echo "KVM internal error. Suberror: 1" >&2; echo emulation failure >&2 ;;
esac
QEMU
chmod +x "$tmp/bin/qemu-system-x86_64"
export PATH=$tmp/bin:$PATH
: >"$tmp/kvm"
export GRT_VM_KVM_DEV=$tmp/kvm

choose() { # FAKE_QEMU value: prints the accelerator chosen, then what vm_accel said
	FAKE_QEMU=$1 vm_accel /nonexistent/vmlinuz "$tmp/probe" >"$tmp/said" 2>&1
	echo "${accel[1]} $limit $(cat "$tmp/said")"
}

got=$(choose panic)
check "a KVM guest that reached its panic: kvm, the 900 s limit (got: $got)" \
	test "$got" = "kvm 900 "
got=$(choose abort)
check "QEMU aborting at start: tcg, the 3 h limit, with QEMU's error (got: $got)" \
	test "$got" = "tcg 10800 vmtest: /dev/kvm cannot run a guest here (qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69): the guests run under TCG emulation (slower)"
got=$(choose stall)
check "a guest stopped before its kernel ran: tcg (got: $got)" \
	bash -c "[[ '$got' == 'tcg 10800 vmtest: /dev/kvm cannot run a guest here (KVM internal error'* ]]"
chmod 0 "$tmp/kvm"
if [ "$(id -u)" != 0 ]; then
	got=$(choose panic)
	check "a device node this user cannot open: tcg, saying so (got: $got)" \
		test "$got" = "tcg 10800 vmtest: /dev/kvm cannot run a guest here ($tmp/kvm is not readable and writable by this user): the guests run under TCG emulation (slower)"
fi
export GRT_VM_KVM_DEV=$tmp/none
got=$(choose panic)
check "no device node: tcg, saying so (got: $got)" \
	test "$got" = "tcg 10800 vmtest: no /dev/kvm here: the guests run under TCG emulation (slower)"
exit $failed
