#!/bin/sh
# Installs grtrace's build and test dependencies from Debian's archive; does nothing when present.
# With "vm": what make vmtest needs instead (QEMU, a static busybox, cpio, kmod).
set -e
if [ "${1:-}" = vm ]; then
	pkgs="qemu-system-x86 busybox-static cpio kmod xz-utils"
	apt_flags=--no-install-recommends
else
	pkgs="make gcc clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev libzstd-dev libdw-dev \
	libclang-rt-14-dev python3 time \
	libmicrohttpd-dev libncurses-dev prometheus tmux curl protobuf-compiler"
fi
need=""
for pkg in $pkgs; do
	dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need="$need $pkg"
done
[ -z "$need" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "grtrace: missing packages:$need (run 'make deps' as root)" >&2
	exit 1
fi
echo "installing:$need"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ${apt_flags:-} $need >/dev/null
