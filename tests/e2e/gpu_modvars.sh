#!/bin/bash
# Kernels that use their module's __constant__ and __device__ variables, instrumented on the fake
# driver: block probes and GPU eBPF programs run in copies that read the application's variables.
set -u
. tests/e2e/lib/inject.bash
P=$BUILD/gpubpf/progs

# json NAME PYTHON-EXPRESSION over `recs` (the trace's records as dicts): prints its value
json() {
	"$G" parse --format json "$T/$1.grt" | python3 -c "
import json, sys
recs = [json.loads(l) for l in sys.stdin]
def of(t): return [r for r in recs if r['type'] == t]
print($2)"
}

# vec_scale reads the __constant__ fixed_n, set before each of 3 launches; vec_count adds to the
# __device__ counter hits 5 times, in a device function; the fake driver computes both
"$FIX/app_vars" >"$T/plain.out" 2>&1
check untraced_values grep -qx 'hits=5' "$T/plain.out"

record probes gpu -- "$FIX/app_vars"
check probes_values_unchanged diff "$T/plain.out" "$T/probes.out"
n=$(json probes "sorted((i['kernel'], i['instrumented'], i.get('reason')) for i in of('gpu_instrument'))")
[ "$n" = "[('vec_count', 'yes', None), ('vec_scale', 'yes', None)]" ] && ok probes_instrumented || fail probes_instrumented "$n"
n=$(json probes "len(of('gpu_launch'))")
[ "$n" = 8 ] && ok probes_launch_summaries || fail probes_launch_summaries "got $n"
# every launch ran the copy, whose slots held the application's variables' addresses
n="$(fake probes plain) $(fake probes probed) $(fake probes slots_right) $(fake probes slots_wrong)"
[ "$n" = "0 8 8 0" ] && ok probes_slots_filled || fail probes_slots_filled "plain probed right wrong: $n"

# the same kernels with a GPU eBPF program on their exits (kretprobe/vec_*): a ring event per block
FAKE_CUDA_BPF_DEVICE=$PWD/$FIX/libfakegpubpf.so FAKE_CUDA_BPF_OBJECTS=$P/vec_add_live.bpf.o \
	GRTRACE_GPU_PROBES=off FAKE_CUDA_REPORT="$T/bpf.fake" timeout 120 "$G" record -f -s gpu \
	-o "$T/bpf.grt" --bpf "$P/vec_add_live.bpf.o" -- "$FIX/app_vars" >"$T/bpf.out" 2>"$T/bpf.err"
check bpf_values_unchanged diff "$T/plain.out" "$T/bpf.out"
n=$(json bpf "sorted((i['kernel'], i['instrumented']) for i in of('gpu_instrument'))")
[ "$n" = "[('vec_count', 'yes'), ('vec_scale', 'yes')]" ] && ok bpf_attached || fail bpf_attached "$n"
n=$("$G" report "$T/bpf.grt" --bpf --format json --top 0 | python3 -c "
import json, sys
r = json.load(sys.stdin)['bpf']
print([(m['events'], m['lost']) for m in r['maps'] if m['name'] == 'done'])")
[ "$n" = "[(16, 0)]" ] && ok bpf_ring_events || fail bpf_ring_events "$n"
n="$(fake bpf plain) $(fake bpf probed) $(fake bpf slots_right) $(fake bpf slots_wrong)"
[ "$n" = "0 8 8 0" ] && ok bpf_slots_filled || fail bpf_slots_filled "plain probed right wrong: $n"

# the loaded module lacks hits: vec_count runs unchanged, saying why once; vec_scale is instrumented
FAKE_CUDA_NO_GLOBAL=hits "$FIX/app_vars" >"$T/plain_nohits.out" 2>&1
record nohits gpu FAKE_CUDA_NO_GLOBAL=hits -- "$FIX/app_vars"
check nohits_values_unchanged diff "$T/plain_nohits.out" "$T/nohits.out"
n=$(json nohits "sorted((i['kernel'], i['instrumented'], i.get('reason')) for i in of('gpu_instrument'))")
[ "$n" = "[('vec_count', 'no', \"module variable 'hits': cuModuleGetGlobal failed (CUDA error 500)\"), ('vec_scale', 'yes', None)]" ] &&
	ok nohits_reason_once || fail nohits_reason_once "$n"
n="$(fake nohits plain) $(fake nohits probed) $(fake nohits slots_wrong)"
[ "$n" = "5 3 0" ] && ok nohits_counts || fail nohits_counts "plain probed wrong: $n"

exit $failed
