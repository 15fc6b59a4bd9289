#!/bin/bash
# The uvm source from the command line on a machine without the NVIDIA UVM driver: one clear line, exit 1.
set -u
BUILD=${1:-build}
G=$BUILD/grtrace
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

if [ -e /dev/nvidia-uvm-tools ]; then
	# with the driver present the real source runs instead: bench/gpu_uvm.sh covers it
	"$G" record -f -s uvm -o "$T/x.grt" -- true >/dev/null 2>"$T/err"
	if [ $? -eq 0 ]; then echo "ok - uvm_record_with_driver"; else echo "FAIL - uvm_record_with_driver: $(cat "$T/err")"; fi
	exit 0
fi

"$G" record -f -s uvm -o "$T/x.grt" -- true >"$T/out" 2>"$T/err"
rc=$?
want="grtrace: record: source uvm unavailable: no /dev/nvidia-uvm-tools: NVIDIA UVM driver not loaded (modprobe nvidia-uvm)"
if [ $rc -eq 1 ] && [ "$(cat "$T/err")" = "$want" ]; then
	echo "ok - uvm_record_without_driver"
else
	echo "FAIL - uvm_record_without_driver (rc=$rc, stderr: $(cat "$T/err"))"
	exit 1
fi
# the source is listed where sources are
if "$G" record -f --help | grep -q "uvm"; then
	echo "ok - uvm_listed_in_help"
else
	echo "FAIL - uvm_listed_in_help"
	exit 1
fi
