#!/bin/bash
# The gpu source on the GPU machine, in one call: correctness, probe vs CUPTI timing, overheads,
# attach costs, PyTorch and CuPy. usage: bench/gpu_inject_carry.sh BUILD DIR, then bash DIR/gpu_inject.sh
# (it runs the grtrace, libgrtrace-inject.so and gpu_inject/ found beside itself)
set -u
D=$(cd "$(dirname "$0")" && pwd)
G=$D/grtrace
OUTDIR=${OUT:-/tmp/gpu_inject_out}
LOG=$OUTDIR/log.txt
W=$(mktemp -d)
mkdir -p "$OUTDIR"
export PATH=/usr/local/cuda/bin:$PATH
export GRTRACE_CACHE_DIR=$W/cache GRTRACE_GPU_BLOCK_LAUNCHES=${GRTRACE_GPU_BLOCK_LAUNCHES:-4}
REPS=${REPS:-3}
SECTIONS=${SECTIONS:-012345} # which numbered parts below to run
want() { [[ $SECTIONS == *$1* ]]; }
LAUNCHES=${LAUNCHES:-10000}
exec > >(tee -a "$LOG") 2>&1

say() { echo "== $*"; }
mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
say "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"
ldd "$D/libgrtrace-inject.so" | grep -q "not found" && export LD_LIBRARY_PATH=$D/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
ldd "$D/libgrtrace-inject.so" | grep "not found"

say "build"
nvcc -O2 -arch=sm_90 -o "$W/vector_add" "$D/gpu_inject/vector_add.cu" || exit 1
nvcc -O2 -arch=sm_90 -o "$W/big_module" "$D/gpu_inject/big_module.cu" || exit 1

# record NAME ENV... -- CMD: traces CMD into $W/NAME.grt, its stdout into $W/NAME.out
record() {
	local name=$1
	shift
	local envs=()
	while [ "$1" != "--" ]; do envs+=("$1"); shift; done
	shift
	env "${envs[@]}" timeout 90 "$G" record -f -s gpu -o "$W/$name.grt" -- "$@" >"$W/$name.out" 2>"$W/$name.err"
	local rc=$?
	[ $rc -eq 0 ] || { echo "record $name failed rc=$rc"; tail -5 "$W/$name.err"; }
	return $rc
}
field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p" "$2" | head -1; }
analyze() { python3 "$D/gpu_inject/analyze.py" "$G" "$W/$1.grt" > "$W/$1.json" && cat "$W/$1.json"; }

want 0 && {
say "0. what the library sees (debug lines of a 3-launch run)"
record debug GRTRACE_INJECT_DEBUG=1 -- "$W/vector_add" 65536 3
grep -o 'grtrace-inject\[[0-9]*\]: cu[A-Za-z_0-9]*' "$W/debug.err" | sed 's/.*: //' | sort | uniq -c
grep -v 'grtrace-inject\[[0-9]*\]: cu[A-Za-z_0-9]*$' "$W/debug.err" | head -20; cat "$W/debug.out"
"$G" parse "$W/debug.grt" | grep -v gpu_block | head -40 | cut -c1-300

}
want 1 && {
say "1. correctness: untraced vs block probes vs thread probes, 1M elements, 100 launches"
"$W/vector_add" $((1 << 20)) 100 "$W/out_plain.bin" > "$W/plain.out"; cat "$W/plain.out"
record probe_block GRTRACE_GPU_POOL_WAIT=1 -- "$W/vector_add" $((1 << 20)) 100 "$W/out_block.bin"; cat "$W/probe_block.out"
record probe_thread GRTRACE_GPU_PROBES=thread GRTRACE_GPU_POOL_WAIT=1 -- "$W/vector_add" $((1 << 20)) 100 "$W/out_thread.bin"
cmp "$W/out_plain.bin" "$W/out_block.bin" && echo "identical_block=yes" || echo "identical_block=NO"
cmp "$W/out_plain.bin" "$W/out_thread.bin" && echo "identical_thread=yes" || echo "identical_thread=NO"
analyze probe_block
"$G" report "$W/probe_block.grt" --gpu --top 5
analyze probe_thread

}
want 2 && {
say "2. overhead: $LAUNCHES launches, $REPS rounds, configurations interleaved within a round"
run_cfg() { # label n rep env...
	local label=$1 n=$2 r=$3
	shift 3
	[ -z "${CONFIGS:-}" ] || [[ " $CONFIGS " == *" $label "* ]] || return 0 # only these labels
	if [ "$label" = untraced ]; then
		"$W/vector_add" "$n" "$LAUNCHES" > "$W/b.out"
	else
		record "b_${label}_${n}" "$@" -- "$W/vector_add" "$n" "$LAUNCHES" || return
		cp "$W/b_${label}_${n}.out" "$W/b.out"
		[ "$r" = 1 ] && echo "$label n=$n $("$G" parse "$W/b_${label}_${n}.grt" | grep -o 'cost:[^"]*')"
	fi
	echo "$label n=$n rep=$r $(cat "$W/b.out")"
}
POOL="GRTRACE_GPU_POOL_MB=8192 GRTRACE_GPU_POOL_WAIT=1"
for n in $((1 << 20)) 65536; do
	for r in $(seq 1 "$REPS"); do
		run_cfg untraced $n $r
		run_cfg interpose_only $n $r GRTRACE_GPU_PROBES=off GRTRACE_GPU_CUPTI=0
		run_cfg cupti $n $r GRTRACE_GPU_PROBES=off
		run_cfg cupti_nocb $n $r GRTRACE_GPU_PROBES=off GRTRACE_GPU_CUPTI_CALLBACKS=0
		run_cfg block $n $r GRTRACE_GPU_CUPTI=0 $POOL
		run_cfg block_atexit $n $r GRTRACE_GPU_CUPTI=0 $POOL GRTRACE_GPU_COLLECT=exit
		for ms in ${DRAIN_VARIANTS:-}; do # collection periods to compare, e.g. "20 100"
			run_cfg block_drain$ms $n $r GRTRACE_GPU_CUPTI=0 $POOL GRTRACE_GPU_DRAIN_MS=$ms
		done
		run_cfg thread $n $r GRTRACE_GPU_CUPTI=0 GRTRACE_GPU_PROBES=thread GRTRACE_GPU_POOL_MB=16384 GRTRACE_GPU_POOL_WAIT=1
		run_cfg block_cupti $n $r $POOL
	done
	analyze "b_block_cupti_$n" | head -c 1500; echo
	for c in cupti block_cupti; do
		analyze "b_${c}_$n" | python3 -c "import json,sys; d=json.load(sys.stdin); print('device time p50 (CUPTI) $c n=$n:', d['exec_ns_p50_cupti'], 'ns')"
	done
done
"$G" report "$W/b_block_cupti_65536.grt" --gpu --top 5

}
want 3 && {
say "3. attach cost (JIT, then cache hit)"
rm -rf "$GRTRACE_CACHE_DIR"
record attach_va1 GRTRACE_GPU_CUPTI=0 -- "$W/vector_add" 65536 10 && analyze attach_va1 | python3 -c 'import json,sys; d=json.load(sys.stdin); print("vector_add JIT:", d["attach_detail"])'
record attach_va2 GRTRACE_GPU_CUPTI=0 -- "$W/vector_add" 65536 10 && analyze attach_va2 | python3 -c 'import json,sys; d=json.load(sys.stdin); print("vector_add cached:", d["attach_detail"])'
record attach_big1 GRTRACE_GPU_CUPTI=0 -- "$W/big_module" && analyze attach_big1 | python3 -c 'import json,sys; d=json.load(sys.stdin); print("big_module JIT:", d["attach_detail"], d["probe_status"])'
record attach_big2 GRTRACE_GPU_CUPTI=0 -- "$W/big_module" && analyze attach_big2 | python3 -c 'import json,sys; d=json.load(sys.stdin); print("big_module cached:", d["attach_detail"])'
cat "$W/attach_big1.out"

}
want 4 && {
say "4. PyTorch: untraced vs CUPTI timing (probes off), then traced with everything on"
export PYTHONUNBUFFERED=1
for r in $(seq 1 4); do
	python3 "$D/gpu_inject/torch_step.py" 400 > "$W/t.out" 2>&1; echo "torch untraced rep=$r $(tail -1 "$W/t.out")"
	record torch_cupti GRTRACE_GPU_PROBES=off -- python3 "$D/gpu_inject/torch_step.py" 400 && echo "torch cupti rep=$r $(tail -1 "$W/torch_cupti.out")"
done
analyze torch_cupti | head -c 2500; echo
record torch_all -- python3 "$D/gpu_inject/torch_step.py" 50 && echo "torch all $(tail -1 "$W/torch_all.out")"
analyze torch_all | head -c 2500; echo
"$G" report "$W/torch_all.grt" --gpu --top 8

}
want 5 && {
say "5. CuPy: traced with CUPTI + probes (cubin as CuPy builds it, then PTX)"
python3 "$D/gpu_inject/cupy_prog.py" > "$W/c.out" 2>&1; echo "cupy untraced $(tail -1 "$W/c.out")"
record cupy_cubin -- python3 "$D/gpu_inject/cupy_prog.py" && echo "cupy traced $(tail -1 "$W/cupy_cubin.out")"
analyze cupy_cubin | head -c 2000; echo
record cupy_ptx CUPY_COMPILE_WITH_PTX=1 CUPY_CACHE_DIR=$W/cupy_ptx_cache -- python3 "$D/gpu_inject/cupy_prog.py" && echo "cupy traced ptx $(tail -1 "$W/cupy_ptx.out")"
analyze cupy_ptx | head -c 2000; echo
"$G" report "$W/cupy_ptx.grt" --gpu --top 8
tail -3 "$W/cupy_ptx.err"

}
say "table"
python3 - "$LOG" <<'PY'
import re, statistics, sys
log = open(sys.argv[1]).read()
rows = {}
for m in re.finditer(r"^(\w+) n=(\d+) rep=\d+ loop_ms=([0-9.]+)", log, re.M):
    rows.setdefault((m.group(2), m.group(1)), []).append(float(m.group(3)))
for n in sorted({k[0] for k in rows}, key=int, reverse=True):
    base = statistics.median(rows.get((n, "untraced"), [float("nan")]))
    print(f"vector_add n={n} {'config':16s} loop_ms(median)  overhead")
    drains = sorted({c for (m, c) in rows if m == n and c.startswith("block_drain")})
    for cfg in ["untraced", "interpose_only", "cupti", "cupti_nocb", "block", "block_atexit"] + drains + ["thread", "block_cupti"]:
        v = rows.get((n, cfg))
        if v:
            med = statistics.median(v)
            print(f"  {cfg:30s} {med:10.2f}  {100 * (med / base - 1):+7.1f}%")
t = {}
for m in re.finditer(r"^torch (untraced|cupti) rep=\d+ mlp_step_ms=([0-9.]+) conv_step_ms=([0-9.]+)", log, re.M):
    t.setdefault(m.group(1), []).append((float(m.group(2)), float(m.group(3))))
if "untraced" in t and "cupti" in t:
    for i, name in ((0, "mlp"), (1, "conv")):
        u = statistics.median(x[i] for x in t["untraced"])
        c = statistics.median(x[i] for x in t["cupti"])
        print(f"torch {name} step ms (median of {len(t['untraced'])}): untraced {u:.4f} cupti {c:.4f} ({100 * (c / u - 1):+.1f}%)")
PY
rm -rf "$W"
