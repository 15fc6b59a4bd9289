# Shared by bench/gpu_bpf.sh and bench/gpu_bpf_recheck.sh (sourced from the repository root with
# their arguments): the build and output folders, ok/FAIL lines, recording one run, comparing
# outputs, and the overhead table of 10,000 vec_add launches per variant.
set -u
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
# record NAME CMD... with the --bpf objects in $OBJS: trace, stdout, stderr under $OUT/traces
record() {
	local name=$1
	shift
	# -f: a rerun into the same OUTDIR overwrites its traces (record keeps an existing file otherwise)
	timeout 120 "$G" record -f -s gpu -o "$OUT/traces/$name.grt" $OBJS -- "$@" \
		>"$OUT/traces/$name.out" 2>"$OUT/traces/$name.err" ||
		fail "$name: record exit $? ($(grep -v 'grtrace: next:' "$OUT/traces/$name.err" | tail -1))"
}
same_output() {
	if diff -q "$OUT/traces/$1.out" "$OUT/traces/$2.out" >/dev/null; then ok "$1: output bit-identical"; else fail "$1: output differs: $(head -c 200 "$OUT/traces/$1.out")"; fi
}

# overhead ROW...: 10,000 launches of vec_add over 1M floats per run, ROUNDS rounds of the rows
# interleaved; the table goes to $OUT/overhead.txt. A row is a program of bench/gpubpf by name
# (or untraced, recorded_no_programs), or NAME:PROGRAM:VARIANTS, the program translated with
# GRTRACE_BPF_VARIANTS=VARIANTS (src/gpubpf/bpf_ptx.h); its runs are bench_NAME_ROUND.*
overhead() {
	local rows="$*" names="" row name prog list
	for row in $rows; do names="$names ${row%%:*}"; done
	# (CUPTI off in the recorded variants: the difference is the programs, not kernel timing)
	for r in $(seq 1 "$ROUNDS"); do
		for row in $rows; do
			IFS=: read -r name prog list <<<"$row"
			case $name in
			untraced) "$OUT/bin/vec_add_bench" $((1 << 20)) 10000 >"$OUT/traces/bench_${name}_$r.out" ;;
			*)
				OBJS=""
				[ $name != recorded_no_programs ] && OBJS="--bpf $B/${prog:-$name}.bpf.o"
				GRTRACE_BPF_VARIANTS=$list GRTRACE_GPU_CUPTI=0 \
					record "bench_${name}_$r" "$OUT/bin/vec_add_bench" $((1 << 20)) 10000
				;;
			esac
		done
	done
	python3 - "$OUT" "$ROUNDS" $names <<'PY' | tee "$OUT/overhead.txt"
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
us = 1e6 / 10000
print(f"{'variant':24} {'runs':>4} {'median s':>10} {'min':>9} {'max':>9} {'per launch us':>14} "
      f"{'min us':>7} {'max us':>7} {'vs untraced':>12} {'target':>8}")
for v in variants:
    s = secs.get(v, [])
    if not s:
        print(f"{v:24} {0:4}")
        continue
    med = statistics.median(s)
    t = target.get(v)
    print(f"{v:24} {len(s):4} {med:10.4f} {min(s):9.4f} {max(s):9.4f} {med * us:14.2f} "
          f"{min(s) * us:7.2f} {max(s) * us:7.2f} "
          f"{med / base:11.2f}x {('<= %.2fx' % t) if t else '':>8}")
print("results identical across every run:", len(results) == 1)
sys.exit(0 if len(results) == 1 else 1)
PY
	[ "${PIPESTATUS[0]}" = 0 ] && ok "overhead runs: vec_add's result identical in every run" || fail "overhead runs: results differ"
}
