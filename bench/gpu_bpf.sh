#!/bin/bash
# GPU eBPF on the GPU machine, through `grtrace record --bpf`: the five samples and bpftime's
# example programs against their answers and the reference interpreter, outputs bit-identical,
# attach times, and the overhead of 10,000 vec_add launches with each kind of program.
#   bench/gpu_bpf.sh BUILD OUTDIR     (BUILD from `make all`; compiles only three small .cu files)
# Prints ok/FAIL lines and a summary table; exits 1 on a correctness failure.
set -u
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-5}
. bench/gpu_bpf_common.sh "$@"

for cu in samples/gpu-bpf/vec_add.cu bench/gpubpf/vector_add_cpp.cu bench/gpubpf/vec_add_bench.cu; do
	"$nvcc" -O2 -arch=sm_90 -o "$OUT/bin/$(basename "$cu" .cu)" "$cu" || fail "nvcc $cu"
done
# the fixed-n vectorAdd with n a literal: no __constant__, so it can be instrumented
"$nvcc" -O2 -arch=sm_90 -DFIXED_N=10000 -o "$OUT/bin/vector_add_literal" \
	bench/gpubpf/vector_add_cpp.cu || fail "nvcc -DFIXED_N"

# --- the five samples on vec_add, n = 10000 (40 blocks), two launches ---
"$OUT/bin/vec_add" 10000 2 >"$OUT/traces/plain.out"
OBJS=""
for s in exit_times block_hist launch_latency mem_counts sm_placement; do OBJS="$OBJS --bpf $S/$s.bpf.o"; done
record samples "$OUT/bin/vec_add" 10000 2
same_output samples plain
"$SIM" -o "$OUT/traces/samples.sim.grt" --kernel vec_add --grid 40 --block 256 \
	--params 1,2,3,10000 --access ld,0,4 --access ld,1,4 --access st,2,4 --guard 3 --launches 2 \
	$(for s in exit_times block_hist launch_latency mem_counts sm_placement; do echo "$S/$s.bpf.o"; done) >/dev/null
$CHECK samples "$OUT/traces/samples.grt" "$OUT/traces/samples.sim.grt" 40 10000 2 || failed=1

# --- bpftime's example programs, unchanged, on its kernels (C++ names) ---
# As built, the fixed-n kernel reads a __constant__ the host sets with cudaMemcpyToSymbol: its
# instrumented copy reads the application's fixed_n through an address slot, every thread counted.
"$OUT/bin/vector_add_cpp" 10000 2 >"$OUT/traces/cpp_plain.out"
OBJS="--bpf $P/bpftime_threadhist.bpf.o"
record constant_kernel "$OUT/bin/vector_add_cpp" 10000 2
same_output constant_kernel cpp_plain
"$G" parse "$OUT/traces/constant_kernel.grt" --filter type=gpu_instrument 2>/dev/null |
	grep _Z9vectorAddPKfS0_Pf | grep -q "instrumented=yes" &&
	ok "constant_kernel: instrumented" ||
	fail "constant_kernel: _Z9vectorAddPKfS0_Pf not instrumented"
"$SIM" -o "$OUT/traces/constant_kernel.sim.grt" --kernel _Z9vectorAddPKfS0_Pf --grid 40 --block 256 \
	--params 1,2,3,10000 --launches 2 "$P/bpftime_threadhist.bpf.o" >/dev/null
$CHECK bpftime bpftime_threadhist "$OUT/traces/constant_kernel.grt" \
	"$OUT/traces/constant_kernel.sim.grt" 10240 2 || failed=1
"$OUT/bin/vector_add_literal" 10000 2 >"$OUT/traces/cpp_plain.out"
for p in bpftime_threadhist bpftime_kernel_trace bpftime_kernelretsnoop bpftime_mem_trace bpftime_cuda_counter; do
	OBJS="--bpf $P/$p.bpf.o"
	record "$p" "$OUT/bin/vector_add_literal" 10000 2
	same_output "$p" cpp_plain
	kernel=_Z9vectorAddPKfS0_Pf
	[ $p = bpftime_kernel_trace ] && kernel=_Z9vectorAddPKfS0_Pfi
	"$SIM" -o "$OUT/traces/$p.sim.grt" --kernel $kernel --grid 40 --block 256 \
		--params 1,2,3,10000 --launches 2 "$P/$p.bpf.o" >/dev/null
	$CHECK bpftime "$p" "$OUT/traces/$p.grt" "$OUT/traces/$p.sim.grt" 10240 2 || failed=1
done

# --- attach: a first run compiles (the cache was emptied above), a second finds it cached ---
OBJS="--bpf $S/block_hist.bpf.o"
rm -rf "$OUT/cache"
record attach_first "$OUT/bin/vec_add" 10000 1
record attach_cached "$OUT/bin/vec_add" 10000 1
$CHECK attach "$OUT/traces/attach_first.grt" "$OUT/traces/attach_cached.grt" | tee "$OUT/attach.txt"

# --- overhead: each kind of program on vec_add_bench ---
overhead ${VARIANTS:-untraced recorded_no_programs empty counter ring memcount}
grep -h "lost\|dropped" "$OUT"/traces/bench_ring_1.err 2>/dev/null | tail -2

echo
echo "== summary =="
echo "correctness: $([ $failed = 0 ] && echo all checks passed || echo FAILURES above)"
cat "$OUT/attach.txt" | grep -E '^attach '
cat "$OUT/overhead.txt"
exit $failed
