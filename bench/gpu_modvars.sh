#!/bin/bash
# Kernels that use their module's __constant__/__device__ variables, instrumented on the GPU: with
# block probes (-s gpu) and with a GPU eBPF program (--bpf). Outputs must be bit-identical to an
# untraced run, the kernels instrumented (no "module variable" refusal), the counts exact.
#   bench/gpu_modvars.sh BUILD OUTDIR     (BUILD from `make all`; compiles one small .cu file)
# Prints one ok/FAIL line per check and a summary line; exits 1 on a failure. Under 2 minutes.
set -u
cd "$(dirname "$0")/.."
. bench/gpu_bpf_common.sh "$@"
checks=0 nfailed=0
ok() { echo "ok - $*"; checks=$((checks + 1)); }
fail() { echo "FAIL - $*"; failed=1; nfailed=$((nfailed + 1)); checks=$((checks + 1)); }
THREADS=10240 # 40 blocks of 256 per launch

# json TRACE PYTHON-EXPRESSION over `recs` (the trace's records as dicts), `inst` (kernel ->
# (instrumented, reason), the last word of each)
json() {
	"$G" parse --format json "$OUT/traces/$1.grt" | python3 -c "
import json, sys
recs = [json.loads(l) for l in sys.stdin]
def of(t): return [r for r in recs if r['type'] == t]
inst = {}
for i in of('gpu_instrument'): inst[i['kernel']] = (i['instrumented'], i.get('reason'))
print($2)"
}

"$nvcc" -O2 -arch=sm_90 -Itests/ptx -o "$OUT/bin/modvars" bench/gpubpf/modvars.cu ||
	{ echo "FAIL - nvcc"; exit 1; }
"$OUT/bin/modvars" >"$OUT/traces/plain.out" 2>&1
want="scale_0=3 scale_1=10 scale_2=17 scale_3=24 counter_kernel=50000 counter_symbol=50000 error=no error"
got=$(grep -E '^(scale_|counter_|error=)' "$OUT/traces/plain.out" | tr '\n' ' ' | sed 's/ $//')
[ "$got" = "$want" ] && ok "untraced: values as the program computes them" || fail "untraced: $got"

# --- block probes on the three kernels that use variables; read_counter left out by the filter ---
OBJS="--gpu-kernels ^mv_" GRTRACE_GPU_PROBES=block record probes "$OUT/bin/modvars"
same_output probes plain
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
OBJS="--bpf $B/modvars_exits.bpf.o" record bpf "$OUT/bin/modvars"
same_output bpf plain
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

echo "modvars: $((checks - nfailed)) of $checks checks passed (logs and traces in $OUT/traces)"
exit $failed
