# Sourced by tests/vm/vmtest.sh: a stock Debian kernel, downloaded once with apt-get into the
# build folder (never installed), extracted, its modules indexed with depmod.
# vm_die MESSAGE is the caller's.

# The package pattern of a kernel series: the signed generic amd64 image, which carries
# vmlinuz and every module.
vm_kernel_pattern() {
	case $1 in
	6.1) echo '^linux-image-6\.1\.0-[0-9]+-amd64$' ;;
	6.12) echo '^linux-image-6\.12\.[0-9]+\+deb12-amd64$' ;;
	*) return 1 ;;
	esac
}

# vm_kernel_deb SERIES CACHE: the path of the series' .deb in CACHE, downloaded when none is
# there (the newest the apt sources offer).
vm_kernel_deb() {
	local series=$1 cache=$2 pattern name cached
	pattern=$(vm_kernel_pattern "$series") || vm_die "unknown kernel series '$series' (6.1 or 6.12)"
	mkdir -p "$cache"
	cached=$(ls "$cache"/linux-image-*.deb 2>/dev/null |
		while read -r f; do
			n=$(basename "$f")
			n=${n%%_*}
			echo "$n" | grep -Eq "$pattern" && echo "$f"
		done | sort -V | tail -1)
	if [ -n "$cached" ]; then
		echo "$cached"
		return
	fi
	name=$(apt-cache search --names-only "$pattern" 2>/dev/null | awk '{ print $1 }' | sort -V | tail -1)
	if [ -z "$name" ]; then
		apt-get update -qq >/dev/null 2>&1
		name=$(apt-cache search --names-only "$pattern" 2>/dev/null | awk '{ print $1 }' | sort -V | tail -1)
	fi
	[ -n "$name" ] || vm_die "no Debian package matches $pattern; add bookworm (and bookworm-updates/security) to the apt sources"
	(cd "$cache" && apt-get download -q "$name" >"$cache/download.log" 2>&1) ||
		vm_die "apt-get download $name failed: $(grep -v '^W:' "$cache/download.log" | tail -1)"
	ls "$cache"/"$name"_*.deb 2>/dev/null | tail -1
}

# vm_kernel_unpack DEB DIR: vmlinuz and the modules of DEB under DIR (once), indexed by depmod.
# Prints the kernel release.
vm_kernel_unpack() {
	local deb=$1 dir=$2 release
	if [ ! -f "$dir/.unpacked" ]; then
		rm -rf "$dir"
		mkdir -p "$dir"
		dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$dir" --wildcards './boot/vmlinuz-*' './lib/modules/*' ||
			vm_die "cannot unpack $deb"
		release=$(ls "$dir/lib/modules")
		depmod -b "$dir" "$release" || vm_die "depmod failed for $release"
		touch "$dir/.unpacked"
	fi
	ls "$dir/lib/modules"
}

# vm_module_closure DIR RELEASE MODULE...: the module files MODULEs need, dependencies first,
# each once; a module this kernel does not have is left out.
vm_module_closure() {
	local dir=$1 release=$2
	shift 2
	for m in "$@"; do
		modprobe -d "$dir" -S "$release" --show-depends "$m" 2>/dev/null
	done | awk '$1 == "insmod" && !seen[$2]++ { print $2 }'
}
