#!/bin/bash
# Kernels that use their module's __constant__/__device__ variables, instrumented on the GPU: with
# block probes (-s gpu) and with a GPU eBPF program (--bpf). Outputs must be bit-identical to an
# untraced run, the kernels instrumented (no "module variable" refusal), the counts exact.
#   bench/gpu_modvars.sh BUILD OUTDIR     (BUILD from `make all`; compiles one small .cu file)
# Prints one ok/FAIL line per check and a summary line; exits 1 on a failure. Under 2 minutes.
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
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
export GRTRACE_CACHE_DIR=$OUT/cache
rm -rf "$OUT/cache"
failed=0 checks=0
ok() { echo "ok - $*"; checks=$((checks + 1)); }
fail() { echo "FAIL - $*"; failed=$((failed + 1)); checks=$((checks + 1)); }
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
THREADS=10240 # 40 blocks of 256 per launch

# json TRACE PYTHON-EXPRESSION over `recs` (the trace's records as dicts)
json() {
	"$G" parse --format json "$OUT/traces/$1.grt" | python3 -c "
import json, sys
recs = [json.loads(l) for l in sys.stdin]
def of(t): return [r for r in recs if r['type'] == t]
inst = {}
for i in of('gpu_instrument'): inst[i['kernel']] = (i['instrumented'], i.get('reason'))
print($2)"
}
# record NAME [ENV=V...] -- GRTRACE-RECORD-ARGS...: the app traced into $OUT/traces/NAME.*
record() {
	local name=$1 envs=()
	shift
	while [ "$1" != "--" ]; do envs+=("$1"); shift; done
	shift
	env ${envs[@]+"${envs[@]}"} timeout 120 "$G" record -f -s gpu -o "$OUT/traces/$name.grt" "$@" \
		-- "$OUT/bin/modvars" >"$OUT/traces/$name.out" 2>"$OUT/traces/$name.err" ||
		fail "$name: record exit $? ($(grep -v 'grtrace: next:' "$OUT/traces/$name.err" | tail -1))"
}
same_output() {
	if diff -q "$OUT/traces/$1.out" "$OUT/traces/plain.out" >/dev/null; then
		ok "$1: output bit-identical to the untraced run"
	else
		fail "$1: output differs: $(diff "$OUT/traces/$1.out" "$OUT/traces/plain.out" | head -c 300)"
	fi
}

"$nvcc" -O2 -arch=sm_90 -o "$OUT/bin/modvars" bench/gpubpf/modvars.cu || { echo "FAIL - nvcc"; exit 1; }
"$OUT/bin/modvars" >"$OUT/traces/plain.out" 2>&1
want="scale_0=3 scale_1=10 scale_2=17 scale_3=24 counter_kernel=50000 counter_symbol=50000 error=no error"
got=$(grep -E '^(scale_|counter_|error=)' "$OUT/traces/plain.out" | tr '\n' ' ' | sed 's/ $//')
[ "$got" = "$want" ] && ok "untraced: values as the program computes them" || fail "untraced: $got"

# --- block probes on the three kernels that use variables; read_counter left out by the filter ---
record probes -- --gpu-kernels '^mv_'
same_output probes
n=$(json probes "sorted((k, v[0]) for k, v in inst.items())")
[ "$n" = "[('mv_bump', 'yes'), ('mv_read_const', 'yes'), ('mv_table', 'yes'), ('read_counter', 'no')]" ] &&
	ok "probes: the three kernels instrumented, read_counter not" || fail "probes: $n"
n=$(json probes "[v[1] for v in inst.values() if 'module variable' in (v[1] or '')]")
[ "$n" = "[]" ] && ok "probes: no module variable refusal" || fail "probes: $n"
# 4 + 5 + 1 launches, 40 blocks each, every block's span
n=$(json probes "sorted((l['kernel'], l['blocks']) for l in of('gpu_launch'))")
want=$(python3 -c "print(sorted([('mv_read_const', 40)] * 4 + [('mv_bump', 40)] * 5 + [('mv_table', 40)]))")
[ "$n" = "$want" ] && ok "probes: 10 launch summaries of 40 blocks" || fail "probes: launches $n"
n=$(json probes "[s['message'] for s in of('source_status') if 'launches instrumented' in (s.get('message') or '')]")
echo "$n" | grep -q "'probes: 10 launches instrumented, 0 ran unchanged" &&
	ok "probes: 10 launches instrumented, none fell back" || fail "probes: $n"

# --- a GPU eBPF program on the same kernels' exits: one count per thread per launch ---
record bpf GRTRACE_GPU_PROBES=off -- --bpf "$BUILD/gpubpf/bench/modvars_exits.bpf.o"
same_output bpf
n=$(json bpf "sorted((k, v[0]) for k, v in inst.items() if k.startswith('mv_'))")
[ "$n" = "[('mv_bump', 'yes'), ('mv_read_const', 'yes'), ('mv_table', 'yes')]" ] &&
	ok "bpf: the three kernels run the program" || fail "bpf: $n"
n=$(json bpf "[v[1] for v in inst.values() if 'module variable' in (v[1] or '')]")
[ "$n" = "[]" ] && ok "bpf: no module variable refusal" || fail "bpf: $n"
n=$("$G" report "$OUT/traces/bpf.grt" --bpf --format json --top 0 | python3 -c "
import json, sys
m = {x['name']: x for x in json.load(sys.stdin)['bpf']['maps']}
print(sorted((e['key']['key'], e['value']['value']) for e in m['kernel_exits']['entries']))")
want="[(0, $((4 * THREADS))), (1, $((5 * THREADS))), (2, $THREADS)]"
[ "$n" = "$want" ] && ok "bpf: exits counted exactly ($want)" || fail "bpf: exits $n, want $want"

echo "modvars: $((checks - failed)) of $checks checks passed (logs and traces in $OUT/traces)"
[ $failed = 0 ]
