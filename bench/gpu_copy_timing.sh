#!/bin/bash
# Copies timed without CUPTI, and CUPTI loaded only when a kernel needs it, on the GPU machine:
#   bench/gpu_copy_timing.sh BUILD OUTDIR [ROUNDS]
# 1. the vector add's copies timed by events (the default with block probes) against the same
#    copies timed by CUPTI (GRTRACE_GPU_CUPTI_KERNELS=always): kind, bytes, duration, and where
#    each lies against its call; 2. CUPTI loaded mid-run for kernels the filter leaves out, the
#    output bit-identical; 3. what timing costs a loop of copies between short kernels (untraced,
#    the default, which hands a copy-heavy loop to CUPTI, events throughout, CUPTI throughout,
#    none, events never read), rounds interleaved with the modes rotated. ok/FAIL lines and a
#    summary.
set -u
BUILD=${1:?usage: bench/gpu_copy_timing.sh BUILD OUTDIR [ROUNDS]}
OUT=${2:?usage: bench/gpu_copy_timing.sh BUILD OUTDIR [ROUNDS]}
ROUNDS=${3:-5}
HERE=$(cd "$(dirname "$0")" && pwd)
GRT=$(cd "$BUILD" && pwd)/grtrace
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
PY=${PYTHON:-python3}
mkdir -p "$OUT"
failed=0
ok() { echo "ok - $*"; }
fail() {
	echo "FAIL - $*"
	failed=1
}
"$NVCC" -O2 -arch=sm_90 -o "$OUT/vector_add" "$HERE/gpu_inject/vector_add.cu" || exit 1
"$NVCC" -O2 -arch=sm_90 -o "$OUT/copy_loop" "$HERE/gpu_inject/copy_loop.cu" || exit 1
export GRTRACE_CACHE_DIR=$OUT/cache
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"

# rec NAME SOURCES ENV... -- CMD...
rec() {
	local name=$1 sources=$2 envs=()
	shift 2
	while [ "$1" != "--" ]; do envs+=("$1"); shift; done
	shift
	env ${envs[@]+"${envs[@]}"} timeout 120 "$GRT" record -f -s "$sources" -o "$OUT/$name.grt" \
		-- "$@" >"$OUT/$name.out" 2>"$OUT/$name.err" || fail "record $name: $(tail -1 "$OUT/$name.err")"
}
json() { "$GRT" parse --format json "$OUT/$1.grt"; }

# ---- 1. the same copies, by events and by CUPTI ----
"$OUT/vector_add" 1048576 100 "$OUT/plain.bin" >"$OUT/plain.out"
rec events gpu GRTRACE_GPU_CUPTI_KERNELS= -- "$OUT/vector_add" 1048576 100 "$OUT/events.bin"
rec cupti gpu GRTRACE_GPU_CUPTI_KERNELS=always -- "$OUT/vector_add" 1048576 100 "$OUT/cupti.bin"
cmp -s "$OUT/plain.bin" "$OUT/events.bin" && ok "events: output bit-identical" || fail "events: output differs"
json events >"$OUT/events.jsonl"
json cupti >"$OUT/cupti.jsonl"
$PY - "$OUT/events.jsonl" "$OUT/cupti.jsonl" <<'PY' || failed=1
import json, sys
def load(p):
    recs = [json.loads(l) for l in open(p)]
    copies = [r for r in recs if r["type"] == "gpu_copy" and not r.get("own")]
    status = [r["message"] for r in recs if r["type"] == "source_status" and "CUPTI" in r["message"]]
    kernels = [r for r in recs if r["type"] == "gpu_kernel" and not r.get("own")]
    return sorted(copies, key=lambda r: r["start_ns"]), status, kernels
ev, ev_status, ev_kernels = load(sys.argv[1])
cu, _, _ = load(sys.argv[2])
bad = 0
def check(cond, what):
    global bad
    print(("ok - " if cond else "FAIL - ") + what)
    bad += not cond
check(len(ev) == 3 and all(c.get("timed_by") == "events" for c in ev), f"events: 3 copies timed by events (got {len(ev)})")
check(len(cu) == 3 and not any(c.get("timed_by") for c in cu), f"cupti: 3 copies timed by CUPTI (got {len(cu)})")
check(not ev_kernels and any("CUPTI not loaded" in s for s in ev_status), "events: CUPTI never loaded, no CUPTI kernel record")
def rel(c):
    return (c["start_ns"] - c["api_enter_ns"]) / 1e3, (c["api_return_ns"] - c["end_ns"]) / 1e3
print("pageable copies: the events span the stream's whole copy, the driver's staging included;")
print("CUPTI's the DMA. start-enter / return-end: where each lies against its call (us)")
print(f"{'copy':4} {'kind':>6} {'bytes':>9} {'events us':>10} {'CUPTI us':>9} {'ev start-enter':>15} {'ev return-end':>14} {'CUPTI s-e':>10} {'CUPTI r-e':>10}")
for i, (a, b) in enumerate(zip(ev, cu)):
    check(a["kind"] == b["kind"] and a["bytes"] == b["bytes"], f"copy {i}: kind {a['kind']} bytes {a['bytes']} as CUPTI's")
    (ase, are), (bse, bre) = rel(a), rel(b)
    print(f"{i:4} {a['kind']:>6} {a['bytes']:>9} {a['duration_ns']/1e3:10.1f} {b['duration_ns']/1e3:9.1f} "
          f"{ase:15.1f} {are:14.1f} {bse:10.1f} {bre:10.1f}")
    check(a["start_ns"] >= a["api_enter_ns"], f"copy {i}: starts after its call was entered")
    check(a["duration_ns"] >= 0.9 * b["duration_ns"], f"copy {i}: events span at least CUPTI's DMA time (90%)")
for s in ev_status:
    print("  status:", s)
sys.exit(1 if bad else 0)
PY
"$GRT" parse "$OUT/events.grt" --filter type=source_status | grep -o 'copies and memsets timed with CUDA events: [^"]*'

# ---- 2. CUPTI loaded when a kernel the probes do not cover comes: here every launch ----
rec late gpu GRTRACE_GPU_CUPTI_KERNELS= GRTRACE_GPU_KERNELS='^nothing_matches$' -- \
	"$OUT/vector_add" 1048576 100 "$OUT/late.bin"
cmp -s "$OUT/plain.bin" "$OUT/late.bin" && ok "late: output bit-identical" || fail "late: output differs"
json late | $PY -c '
import json, sys
recs = [json.loads(l) for l in sys.stdin]
k = [r for r in recs if r["type"] == "gpu_kernel" and r.get("kernel") == "vector_add"]  # 100 + 20 warm-up
c = [r for r in recs if r["type"] == "gpu_copy" and not r.get("own")]
ev = sum(1 for r in c if r.get("timed_by") == "events")
on = [r["message"] for r in recs if r["type"] == "source_status" and "timing on from here" in r["message"]]
print("ok -" if len(k) == 120 else "FAIL -", f"late: CUPTI kernel records {len(k)} of 120 launches")
print("ok -" if (ev, len(c) - ev) == (2, 1) else "FAIL -", f"late: copies before CUPTI by events {ev} (2), after by CUPTI {len(c) - ev} (1)")
print("ok -" if len(on) == 1 else "FAIL -", "late: says from when:", on)
' | tee "$OUT/late.check"
grep -q FAIL "$OUT/late.check" && failed=1

# ---- 3. what timing costs a loop of copies ----
ITERS=${ITERS:-5000}
modes=("untraced||" "default|gpu|GRTRACE_GPU_CUPTI_KERNELS=" "events|gpu|GRTRACE_GPU_COPY_EVENTS=always"
	"cupti|gpu|GRTRACE_GPU_CUPTI_KERNELS=always" "nocopytiming|gpu|GRTRACE_GPU_COPY_EVENTS=0"
	"nocollect|gpu|GRTRACE_GPU_COPY_EVENTS=nocollect")
for round in $(seq "$ROUNDS"); do
	for i in $(seq 0 $((${#modes[@]} - 1))); do
		IFS='|' read -r m sources envs <<<"${modes[$(((i + round - 1) % ${#modes[@]}))]}"
		if [ "$m" = untraced ]; then
			"$OUT/copy_loop" "$ITERS" 65536 >"$OUT/loop_${m}_$round.out" 2>&1
		else
			# shellcheck disable=SC2086
			env $envs timeout 120 "$GRT" record -f -s "$sources" -o "$OUT/loop_${m}_$round.grt" -- \
				"$OUT/copy_loop" "$ITERS" 65536 >"$OUT/loop_${m}_$round.out" 2>"$OUT/loop_${m}_$round.err"
		fi
		sed -n 's/.*loop_ms=\([0-9.]*\).*/\1/p' "$OUT/loop_${m}_$round.out" >>"$OUT/loop_$m.ms"
		sed -n 's/.*enqueue_ms=\([0-9.]*\).*/\1/p' "$OUT/loop_${m}_$round.out" >>"$OUT/loop_$m.enq"
	done
done
base=$(sort -g "$OUT/loop_untraced.ms" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
echo "copy loop: $ITERS x (64 KiB HtoD from pinned memory, a kernel, 64 KiB DtoH), one stream, $ROUNDS rounds rotated"
for spec in "${modes[@]}"; do
	m=${spec%%|*}
	enq=$(sort -g "$OUT/loop_$m.enq" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
	sort -g "$OUT/loop_$m.ms" | awk -v b="$base" -v m="$m" -v it="$ITERS" -v enq="$enq" '{ v[NR] = $1 } END {
		med = v[int((NR + 1) / 2)]
		printf "  %-13s median %8.2f ms (rounds %.2f..%.2f)  %+6.1f%%  %+6.2f us per copy  enqueue %.2f ms\n",
			m, med, v[1], v[NR], (med - b) * 100 / b, (med - b) * 1000 / (2 * it), enq }'
done
for m in default events cupti; do
	"$GRT" parse --format json "$OUT/loop_${m}_1.grt" | $PY -c '
import json, statistics, sys
c = [json.loads(l) for l in sys.stdin]
c = [r for r in c if r["type"] == "gpu_copy" and not r.get("own")]
for kind in ("HtoD", "DtoH"):
    d = sorted(r["duration_ns"] for r in c if r["kind"] == kind)
    ev = sum(1 for r in c if r.get("timed_by") == "events")
    print(f"  '"$m"': {len(c)} copy records ({ev} by events); {kind} 64 KiB duration p10/p50/p90 {d[len(d)//10]/1e3:.2f} / {statistics.median(d)/1e3:.2f} / {d[9*len(d)//10]/1e3:.2f} us")
'
done
[ $failed = 0 ] && echo "all checks passed" || echo "some checks FAILED"
exit $failed
