#!/bin/bash
# Calls made inside calls on one thread (a profiler's CUPTI callback calling the driver's entry
# points), three deep, through both paths of the cuda source: the fake driver's FAKE_CUDA_NESTED
# makes each launch record an event and each allocation launch a kernel that records one. Each
# nested call is recorded once, inside the call that made it (tests/e2e/lib/cuda_nested.py); the
# calls around them are as recorded without any, field by field; the two paths agree in the order
# the calls entered. Before, in-process every record shared the open call's bytes (103 lost, none
# of cuda_known's 88 calls recorded), and the uprobe path kept one call in flight per thread and
# lost the call around each nested one (an allocation missing, 450 fields differing). The uprobe
# half runs on the stock kernels too (make vmtest): it relies on the stack pointer each return
# probe sees, which the kernels' return trampolines set.
BUILD=${1:-build}
. tests/e2e/lib/cuda.bash

COMPARE="python3 tests/e2e/lib/cuda_compare.py"
VIAS=${GRT_NESTED_VIAS:-uprobe inject}

# record VIA NAME ARGS...: ASLR off, so that host addresses match between the runs
record() {
	local via=$1 name=$2
	shift 2
	setarch -R "$GRT" record -f -o "$tmp/$name-$via.grt" --cuda-via "$via" --libcuda "$FAKE" \
		"$@" >"$tmp/$name-$via.out" 2>"$tmp/$name-$via.err"
	check "$name, --cuda-via $via: status 0, nothing lost" grep -q "(0 events lost)" \
		"$tmp/$name-$via.err"
	"$GRT" parse --format json --all "$tmp/$name-$via.grt" >"$tmp/$name-$via.json"
}

for stacks in "" _stacks; do
	for via in $VIAS; do
		record $via "plain$stacks" ${stacks:+--launch-stacks} -- "$WL/cuda_known"
		FAKE_CUDA_NESTED=1 record $via "nested$stacks" ${stacks:+--launch-stacks} -- \
			"$WL/cuda_known"
		python3 tests/e2e/lib/cuda_nested.py "$tmp/nested$stacks-$via.json" \
			"$tmp/nested$stacks-$via-less.json" >"$tmp/nested$stacks-$via.check"
		rc=$?
		check "calls inside calls${stacks:+ (launch stacks)}, --cuda-via $via: $(tail -1 \
			"$tmp/nested$stacks-$via.check")" [ $rc = 0 ] || head -5 "$tmp/nested$stacks-$via.check"
		$COMPARE "$tmp/plain$stacks-$via.json" "$tmp/nested$stacks-$via-less.json" \
			>"$tmp/nested$stacks-$via.cmp"
		rc=$?
		check "... the other calls as recorded without them ($(tail -1 \
			"$tmp/nested$stacks-$via.cmp"))" [ $rc = 0 ] || head -5 "$tmp/nested$stacks-$via.cmp"
	done
	[ "$VIAS" = "uprobe inject" ] || continue
	$COMPARE --by-entry "$tmp/nested$stacks-uprobe.json" "$tmp/nested$stacks-inject.json" \
		>"$tmp/nested$stacks.cmp"
	rc=$?
	check "nested$stacks: the same records both ways, in the order of entry ($(tail -1 \
		"$tmp/nested$stacks.cmp"))" [ $rc = 0 ] || head -5 "$tmp/nested$stacks.cmp"
done

# --launch-returns 4 with calls inside calls: each path keeps the return of launches 1, 5, 9...
# of the thread, the nested ones counted among them (8 of cuda_known's 31), and both give the
# same records in the order of entry. The uprobe path samples with uprobe sessions (Linux 6.13+):
# left out on kernels without them.
if [ "$VIAS" = "uprobe inject" ]; then
	if grep -q '"launch_probes":"uprobe-session"' "$tmp/nested-uprobe.json"; then
		for via in uprobe inject; do
			FAKE_CUDA_NESTED=1 record $via nested_n4 --launch-returns 4 -- "$WL/cuda_known"
		done
		for via in uprobe inject; do
			sampled=$(python3 -c '
import json, sys
launches = [r for r in map(json.loads, open(sys.argv[1])) if r.get("type") == "launch"]
print(len(launches), sum(r.get("ret") is not None for r in launches))' "$tmp/nested_n4-$via.json")
			check "nested, --launch-returns 4, --cuda-via $via: 8 returns of 31 launches (got $sampled)" \
				[ "$sampled" = "31 8" ]
		done
		$COMPARE --by-entry "$tmp/nested_n4-uprobe.json" "$tmp/nested_n4-inject.json" \
			>"$tmp/nested_n4.cmp"
		rc=$?
		check "nested_n4: the same records both ways, in the order of entry ($(tail -1 \
			"$tmp/nested_n4.cmp"))" [ $rc = 0 ] || head -5 "$tmp/nested_n4.cmp"
	else
		echo "ok - no uprobe sessions in this kernel: --launch-returns 4 is left out"
	fi
fi
exit $failed
