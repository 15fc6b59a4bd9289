#!/bin/bash
# The GPU eBPF ring and counter against their code-form candidates (GRTRACE_BPF_VARIANTS, see
# src/gpubpf/bpf_ptx.h), through `grtrace record --bpf` on 10,000 vec_add launches of 2^20
# threads: ROUNDS (7) rounds of every row interleaved, a table of median/min/max per launch and
# the ratio to untraced; then, for every row, the correctness checks: vec_add's result identical
# in every run, every thread's counter at 10,001 (10,000 launches and the warm-up), ring events +
# lost = one per thread per launch exactly, and the same totals as the reference interpreter's
# over two launches of the same grid. About 3 minutes on an H100 (estimated from earlier runs:
# about 1 s per recorded run of 10,000 launches, 105 of them, then the checks).
#   bench/gpu_bpf_variants.sh --carry [BUILD] [DEST]   here: what the GPU machine needs, into
#                                                       DEST (default .device-carry/bpf_variants)
#   bench/gpu_bpf_variants.sh BUILD OUTDIR             on the GPU machine (BUILD: the carried DEST)
# ROWS="name:program:variants ..." replaces the rows. Prints ok/FAIL lines and the table; exits 1
# on a correctness failure.
set -u
cd "$(dirname "$0")/.."
if [ "${1:-}" = --carry ]; then
	set -e
	build=${2:-build}
	dest=${3:-.device-carry/bpf_variants}
	rm -rf "$dest"
	mkdir -p "$dest/fixtures" "$dest/gpubpf"
	cp "$build/grtrace" "$build/libgrtrace-inject.so" "$dest/"
	cp "$build/fixtures/gpubpf_sim" "$dest/fixtures/"
	cp -r "$build/gpubpf/bench" "$build/gpubpf/progs" "$build/gpubpf/samples" "$dest/gpubpf/"
	# the library's one shared dependency beyond libc, in case the machine lacks it
	mkdir -p "$dest/lib"
	cp -L "$(ldd "$build/libgrtrace-inject.so" | awk '/libzstd/ {print $3}')" "$dest/lib/"
	du -sh "$dest"
	exit 0
fi
ROUNDS=${ROUNDS:-7}
. bench/gpu_bpf_common.sh "$@"
[ -d "$BUILD/lib" ] && export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$(cd "$BUILD/lib" && pwd)
rm -f "$OUT"/traces/*.sim.grt # the interpreter's runs, one per program, made again below

# name:program:variants; untraced runs vec_add alone
rows=${ROWS:-"untraced empty counter counter_l2:counter:l2_evict_last clock_only
clock_only_l2:clock_only:l2_evict_last ring ring_fast:ring:ring_fast_drop
ring_slots:ring:ring_warp_slots ring_entry:ring:ring_entry_read
ring_entry_fast:ring:ring_entry_read,ring_fast_drop
ring_all:ring:ring_entry_read,ring_fast_drop,ring_warp_slots ring_const
ring_const_fast:ring_const:ring_fast_drop ring_const_entry_fast:ring_const:ring_entry_read,ring_fast_drop"}
threads=$((1 << 20))

"$nvcc" -O2 -arch=sm_90 -o "$OUT/bin/vec_add_bench" bench/gpubpf/vec_add_bench.cu || {
	fail "nvcc vec_add_bench"
	exit 1
}
start=$SECONDS
overhead $rows
echo "overhead: $((SECONDS - start)) s"

# --- correctness of every row: round 1's trace (10,000 launches + the warm-up), then a short run
# of 1 + 1 launches against the interpreter's run of the same grid ---
checks=""
for row in $rows; do
	IFS=: read -r name prog list <<<"$row"
	prog=${prog:-$name}
	case $prog in untraced | empty | recorded_no_programs) continue ;; esac
	OBJS="--bpf $B/$prog.bpf.o"
	GRTRACE_BPF_VARIANTS=$list GRTRACE_GPU_CUPTI=0 \
		record "short_$name" "$OUT/bin/vec_add_bench" $threads 1
	[ -f "$OUT/traces/$prog.sim.grt" ] ||
		"$SIM" -o "$OUT/traces/$prog.sim.grt" --kernel vec_add --grid $((threads / 256)) \
			--block 256 --params 1,2,3,$threads --launches 2 "$B/$prog.bpf.o" >/dev/null ||
		fail "$prog: interpreter run"
	checks="$checks $name:$OUT/traces/bench_${name}_1.grt:$OUT/traces/short_$name.grt:$OUT/traces/$prog.sim.grt"
	# the short run's result is the overhead runs' (vec_add's output does not depend on launches)
	if [ "$(grep -o 'result [0-9a-f]*' "$OUT/traces/short_$name.out")" = \
		"$(grep -o 'result [0-9a-f]*' "$OUT/traces/bench_untraced_1.out")" ]; then
		ok "$name: vec_add's result bit-identical"
	else
		fail "$name: vec_add's result differs"
	fi
done
$CHECK variants $threads 10001 $checks || failed=1

echo
echo "== summary ($((SECONDS - start)) s) =="
echo "correctness: $([ $failed = 0 ] && echo all checks passed || echo FAILURES above)"
cat "$OUT/overhead.txt"
exit $failed
