# Sourced by tests/vm/vmtest.sh: the initramfs the guests boot, in two cpio parts that the
# kernel unpacks one over the other: the userland (busybox, bash, python3 for the e2e checks,
# glibc, grtrace's build and tests at the same absolute path as here, so rpaths hold) and the
# modules of one kernel.

# vm_copy_file ROOT PATH: PATH (symlinks resolved) at the same place under ROOT.
vm_copy_file() {
	local root=$1 path=$2
	[ -e "$root$path" ] && return 0
	mkdir -p "$root$(dirname "$path")"
	cp -L "$path" "$root$path"
}

# vm_copy_program ROOT PATH...: each program or library with the shared libraries it loads
# (ldd's answer, the loader included); static programs bring nothing else.
vm_copy_program() {
	local root=$1 path lib
	shift
	for path in "$@"; do
		vm_copy_file "$root" "$path" || return 1
		for lib in $(ldd "$path" 2>/dev/null | awk '/=> \// { print $3 } /^\t\// { print $1 }'); do
			vm_copy_file "$root" "$lib" || return 1
		done
	done
}

# vm_copy_python ROOT: python3 and the standard library the e2e checks import (no tests, no
# GUI, no bytecode caches), with the libraries its extension modules load.
vm_copy_python() {
	local root=$1 py stdlib
	# the interpreter itself, not a wrapper script (pyenv's shims) that finds it
	py=$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))') || return 1
	stdlib=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])') || return 1
	vm_copy_program "$root" "$py" || return 1
	mkdir -p "$root/usr/bin" "$root$stdlib"
	[ -e "$root/usr/bin/python3" ] || ln -s "$py" "$root/usr/bin/python3"
	tar -C "$stdlib" -c --exclude=__pycache__ --exclude=test --exclude=tests --exclude=idlelib \
		--exclude=tkinter --exclude=turtledemo --exclude=ensurepip --exclude=lib2to3 \
		--exclude=distutils --exclude=pydoc_data --exclude=site-packages --exclude=dist-packages \
		--exclude='config-*' . | tar -x -C "$root$stdlib" || return 1
	# extension modules that need more than glibc and zlib (ssl, sqlite, tk, curses) stay out
	for so in "$stdlib"/lib-dynload/*.so; do
		ldd "$so" 2>/dev/null | grep '=> /' | grep -qvE '/lib(c|m|z|pthread|dl)\.so' ||
			vm_copy_program "$root" "$so"
	done
}

# vm_userland ROOT REPO BUILD: the shared part of every guest's initramfs.
vm_userland() {
	local root=$1 repo=$2 build=$3 f
	rm -rf "$root"
	mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,run,etc}
	cp "$(command -v busybox)" "$root/bin/busybox"
	# what the e2e scripts expect of a Debian system beyond busybox: bash, a forking /bin/sh
	# (dash), setpriv that takes user names, setarch (ASLR off), a hostname file, the nobody user
	for prog in bash sh setpriv setarch; do
		f=$(readlink -f "$(command -v $prog)") || return 1
		vm_copy_program "$root" "$f" || return 1
		[ -e "$root/bin/$prog" ] || ln -s "$f" "$root/bin/$prog"
	done
	echo grt-vm >"$root/etc/hostname"
	printf 'root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' \
		>"$root/etc/passwd"
	printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
	vm_copy_python "$root" || return 1
	cp "$repo/tests/vm/init" "$root/init"
	cp "$repo/tests/vm/load_modules.sh" "$root/bin/grt-load-modules"
	chmod 755 "$root/init"
	# the repository files the guest suites run, at the path they have here
	for f in tests/e2e tests/vm/guest tests/tools tests/data; do
		mkdir -p "$root$repo/$(dirname "$f")"
		cp -a "$repo/$f" "$root$repo/$f"
	done
	for f in "$build/grtrace" "$build/libgrtrace-inject.so" "$build"/fixtures/kernel_workload \
		"$build"/fixtures/libnvidia-ml.so.1 "$build"/fixtures/fake/* "$build"/fixtures/fake2/* \
		"$build"/fixtures/workloads/* "$build"/fixtures/vm/*; do
		[ -f "$f" ] || continue
		vm_copy_program "$root" "$(readlink -f "$f")" || return 1
	done
}

# vm_modules ROOT KDIR RELEASE: the modules the guests load, decompressed, with two load
# lists in dependency order: etc/grt-vm/modules.boot (virtio-gpu) and modules.gpu (the
# DRM drivers whose tracepoints the drm source knows, loaded without their hardware).
vm_modules() {
	local root=$1 kdir=$2 release=$3 list f name
	rm -rf "$root"
	mkdir -p "$root/lib/modules/$release" "$root/etc/grt-vm"
	for list in boot gpu; do
		if [ $list = boot ]; then
			set -- virtio_pci virtio-gpu
		else
			set -- gpu-sched amdgpu i915 xe nouveau
		fi
		vm_module_closure "$kdir" "$release" "$@" | while read -r f; do
			name=$(basename "$f")
			name=${name%.xz}
			name=${name%.zst}
			case $f in
			*.xz) xz -dc "$f" ;;
			*.zst) zstd -qdc "$f" ;;
			*) cat "$f" ;;
			esac >"$root/lib/modules/$release/$name"
			echo "$name"
		done >"$root/etc/grt-vm/modules.$list"
	done
}

# vm_cpio ROOT OUT: ROOT as a gzip-compressed newc archive.
vm_cpio() {
	(cd "$1" && find . -print0 | cpio --null -o -H newc -R 0:0 --quiet) | gzip -1 >"$2"
}
