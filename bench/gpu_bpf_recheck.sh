#!/bin/bash
# The checks of bench/gpu_bpf.sh that failed on the H100, and its overhead table, in about two
# minutes: bpftime's programs on vectorAdd as built (its fixed-n kernel reads a __constant__ the
# host sets with cudaMemcpyToSymbol: instrumented through the module-variable slots, outputs
# bit-identical, no "module variable" refusal) and with n as a literal (exit probes and memcapture
# on a kernel whose last block's extra threads return early), then ROUNDS (3) rounds of the
# overhead variants.
#   bench/gpu_bpf_recheck.sh BUILD OUTDIR
# Prints ok/FAIL lines and the table; exits 1 on a correctness failure.
set -u
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
. bench/gpu_bpf_common.sh "$@"

"$nvcc" -O2 -arch=sm_90 -o "$OUT/bin/vector_add_cpp" bench/gpubpf/vector_add_cpp.cu || fail "nvcc"
"$nvcc" -O2 -arch=sm_90 -DFIXED_N=10000 -o "$OUT/bin/vector_add_literal" \
	bench/gpubpf/vector_add_cpp.cu || fail "nvcc -DFIXED_N"
"$nvcc" -O2 -arch=sm_90 -o "$OUT/bin/vec_add_bench" bench/gpubpf/vec_add_bench.cu || fail "nvcc"

progs="bpftime_threadhist bpftime_kernel_trace bpftime_kernelretsnoop bpftime_mem_trace bpftime_cuda_counter"
for bin in vector_add_cpp vector_add_literal; do
	"$OUT/bin/$bin" 10000 2 >"$OUT/traces/${bin}_plain.out"
	for p in $progs; do
		name=${bin}_$p
		OBJS="--bpf $P/$p.bpf.o"
		record "$name" "$OUT/bin/$bin" 10000 2
		same_output "$name" "${bin}_plain"
		kernel=_Z9vectorAddPKfS0_Pf
		[ $p = bpftime_kernel_trace ] && kernel=_Z9vectorAddPKfS0_Pfi
		if [ $bin = vector_add_cpp ] && [ $kernel = _Z9vectorAddPKfS0_Pf ]; then
			# reads __constant__ fixed_n: instrumented, reaching the application's fixed_n
			if "$G" parse "$OUT/traces/$name.grt" --filter type=gpu_instrument 2>/dev/null |
				grep "$kernel" | grep -q "instrumented=yes"; then
				ok "$name: $kernel (reads __constant__ fixed_n) instrumented"
			else
				fail "$name: $kernel not instrumented: $("$G" parse "$OUT/traces/$name.grt" \
					--filter type=gpu_instrument 2>/dev/null | grep "$kernel" | head -1)"
			fi
		fi
		"$SIM" -o "$OUT/traces/$name.sim.grt" --kernel $kernel --grid 40 --block 256 \
			--params 1,2,3,10000 --launches 2 "$P/$p.bpf.o" >/dev/null
		$CHECK bpftime "$p" "$OUT/traces/$name.grt" "$OUT/traces/$name.sim.grt" 10240 2 ||
			failed=1
	done
done

overhead untraced empty counter ring memcount
# The ring variant's losses are exact: 10,001 launches (one warm-up) of 2^20 threads, less the
# events two 16 MiB rings hold (48-byte records): the warm-up fills one set, the synchronization
# after it hands the 10,000 timed launches the other, and nothing empties that before the end.
want=$((10001 * (1 << 20) - 2 * ((1 << 24) / 48)))
got=$(sed -n 's/.*(\([0-9]*\) events lost).*/\1/p' "$OUT/traces/bench_ring_1.err")
[ "$got" = "$want" ] && ok "ring: $got events lost, every event not kept" ||
	fail "ring: ${got:-no} events lost, want $want"
echo "correctness: $([ $failed = 0 ] && echo all checks passed || echo FAILURES above)"
exit $failed
