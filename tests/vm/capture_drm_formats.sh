#!/bin/bash
# Captures the tracefs format files of the DRM events the drm source decodes from Debian's stock
# kernels (the GPU drivers loaded in a VM without their hardware) into tests/data/drm/RELEASE/,
# the test data the drm source's decoding is checked against on any machine.
#
# usage: tests/vm/capture_drm_formats.sh BUILD [SERIES...]   (after make; default 6.1 6.12)
set -u
cd "$(dirname "$0")/../.."
build=${1:?usage: tests/vm/capture_drm_formats.sh BUILD [SERIES...]}
shift
for s in ${*:-6.1 6.12}; do
	GRT_VM_SUITES=capture_drm_formats GRT_VM_KEEP=1 tests/vm/vmtest.sh "$build" "$s" >/dev/null || exit 1
	log=$build/vm/console-$s.log.txt
	release=$(sed -n 's/^grt-vm: kernel \([^,]*\),.*/\1/p' "$log")
	[ -n "$release" ] || { echo "capture: no kernel release in $log" >&2; exit 1; }
	out=tests/data/drm/$release
	rm -rf "$out"
	awk -v out="$out" '
		/^grt-file: / { path = out "/" $2; d = path; sub(/\/[^\/]*$/, "", d); system("mkdir -p \"" d "\""); next }
		/^grt-file-end$/ { close(path); path = ""; next }
		path != "" { print > path }' "$log"
	echo "capture: $(find "$out" -name format | wc -l) format files of $release in $out"
done
