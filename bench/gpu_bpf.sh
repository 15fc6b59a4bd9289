#!/bin/bash
# GPU eBPF on the GPU machine, through `grtrace record --bpf`: the five samples and bpftime's
# example programs against their answers and the reference interpreter, outputs bit-identical,
# attach times, and the overhead of 10,000 vec_add launches with each kind of program.
#   bench/gpu_bpf.sh BUILD OUTDIR     (BUILD from `make all`; compiles only three small .cu files)
# Prints ok/FAIL lines and a summary table; exits 1 on a correctness failure.
set -u
cd "$(dirname "$0")/.."
BUILD=${1:-}
OUT=${2:-}
if [ -z "$BUILD" ] || [ -z "$OUT" ] || [ ! -x "$BUILD/grtrace" ]; then
	echo "usage: $0 BUILD OUTDIR   (BUILD holds grtrace, libgrtrace-inject.so, gpubpf/)" >&2
	exit 2
fi
mkdir -p "$OUT/bin" "$OUT/traces"
OUT=$(cd "$OUT" && pwd)
G=$BUILD/grtrace
SIM=$BUILD/fixtures/gpubpf_sim
S=$BUILD/gpubpf/samples
P=$BUILD/gpubpf/progs
B=$BUILD/gpubpf/bench
CHECK="python3 bench/gpu_bpf_check.py $G"
ROUNDS=${ROUNDS:-5}
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
export GRTRACE_CACHE_DIR=$OUT/cache GRTRACE_GPU_PROBES=off
rm -rf "$OUT/cache"
failed=0
fail() {
	echo "FAIL - $*"
	failed=1
}
ok() { echo "ok - $*"; }

nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
for cu in samples/gpu-bpf/vec_add.cu bench/gpubpf/vector_add_cpp.cu bench/gpubpf/vec_add_bench.cu; do
	"$nvcc" -O2 -arch=sm_90 -o "$OUT/bin/$(basename "$cu" .cu)" "$cu" || fail "nvcc $cu"
done

# record NAME CMD... with the --bpf objects in $OBJS: trace, stdout, stderr under $OUT/traces
record() {
	local name=$1
	shift
	timeout 120 "$G" record -s gpu -o "$OUT/traces/$name.grt" $OBJS -- "$@" \
		>"$OUT/traces/$name.out" 2>"$OUT/traces/$name.err" || fail "$name: record exit $? ($(tail -1 "$OUT/traces/$name.err"))"
}
same_output() {
	if diff -q "$OUT/traces/$1.out" "$OUT/traces/$2.out" >/dev/null; then ok "$1: output bit-identical"; else fail "$1: output differs: $(head -c 200 "$OUT/traces/$1.out")"; fi
}

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
"$OUT/bin/vector_add_cpp" 10000 2 >"$OUT/traces/cpp_plain.out"
for p in bpftime_threadhist bpftime_kernel_trace bpftime_kernelretsnoop bpftime_mem_trace bpftime_cuda_counter; do
	OBJS="--bpf $P/$p.bpf.o"
	record "$p" "$OUT/bin/vector_add_cpp" 10000 2
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

# --- overhead: 10,000 launches of vec_add over 1M floats, variants interleaved round by round ---
# (CUPTI off in the recorded variants: the difference is the programs, not kernel timing)
variants="untraced recorded_no_programs empty counter ring memcount"
for r in $(seq 1 "$ROUNDS"); do
	for v in $variants; do
		case $v in
		untraced) "$OUT/bin/vec_add_bench" $((1 << 20)) 10000 >"$OUT/traces/bench_${v}_$r.out" ;;
		*)
			OBJS=""
			[ $v != recorded_no_programs ] && OBJS="--bpf $B/$v.bpf.o"
			GRTRACE_GPU_CUPTI=0 record "bench_${v}_$r" "$OUT/bin/vec_add_bench" $((1 << 20)) 10000
			;;
		esac
	done
done
python3 - "$OUT" "$ROUNDS" $variants <<'PY' | tee "$OUT/overhead.txt"
import re, statistics, sys
out, rounds, variants = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
secs, results = {}, set()
for v in variants:
    for r in range(1, rounds + 1):
        try:
            text = open(f"{out}/traces/bench_{v}_{r}.out").read()
        except OSError:
            continue
        m = re.search(r"seconds ([\d.]+) result (\w+)", text)
        if m:
            secs.setdefault(v, []).append(float(m.group(1)))
            results.add(m.group(2))
base = statistics.median(secs.get("untraced", [float("nan")]))
target = {"empty": 1.15, "counter": 1.25, "ring": 2.0, "memcount": 3.0}
print(f"{'variant':24} {'runs':>4} {'median s':>10} {'min':>9} {'max':>9} {'per launch us':>14} {'vs untraced':>12} {'target':>8}")
for v in variants:
    s = secs.get(v, [])
    if not s:
        print(f"{v:24} {0:4}")
        continue
    med = statistics.median(s)
    t = target.get(v)
    print(f"{v:24} {len(s):4} {med:10.4f} {min(s):9.4f} {max(s):9.4f} {med / 10000 * 1e6:14.2f} "
          f"{med / base:11.2f}x {('<= %.2fx' % t) if t else '':>8}")
print("results identical across every run:", len(results) == 1)
sys.exit(0 if len(results) == 1 else 1)
PY
[ "${PIPESTATUS[0]}" = 0 ] && ok "overhead runs: vec_add's result identical in every run" || fail "overhead runs: results differ"
grep -h "lost\|dropped" "$OUT"/traces/bench_ring_1.err 2>/dev/null | tail -2

echo
echo "== summary =="
echo "correctness: $([ $failed = 0 ] && echo all checks passed || echo FAILURES above)"
cat "$OUT/attach.txt" | grep -E '^attach '
cat "$OUT/overhead.txt"
exit $failed
