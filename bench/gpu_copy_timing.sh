#!/bin/bash
# Copies timed without CUPTI, and CUPTI loaded only when a kernel needs it, on the GPU machine:
#   bench/gpu_copy_timing.sh BUILD OUTDIR [ROUNDS]
# 1. the vector add's copies timed by events (the default with block probes) against the same
#    copies timed by CUPTI (GRTRACE_GPU_CUPTI_KERNELS=always): kind, bytes, duration, and where
#    each lies against its call; 2. CUPTI loaded mid-run for kernels the filter leaves out, the
#    output bit-identical; 3. what timing costs a loop of copies between short kernels (untraced,
#    events, CUPTI), rounds interleaved with the modes rotated. ok/FAIL lines and a summary.
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
print(f"{'copy':4} {'kind':>6} {'bytes':>9} {'events us':>10} {'CUPTI us':>9} {'start-enter us':>15} {'return-end us':>14}")
for i, (a, b) in enumerate(zip(ev, cu)):
    check(a["kind"] == b["kind"] and a["bytes"] == b["bytes"], f"copy {i}: kind {a['kind']} bytes {a['bytes']} as CUPTI's")
    print(f"{i:4} {a['kind']:>6} {a['bytes']:>9} {a['duration_ns']/1e3:10.1f} {b['duration_ns']/1e3:9.1f} "
          f"{(a['start_ns']-a['api_enter_ns'])/1e3:15.1f} {(a['api_return_ns']-a['end_ns'])/1e3:14.1f}")
    # a synchronous copy lies inside its call; the event pair may add a few us of the stream's
    check(a["start_ns"] >= a["api_enter_ns"] and a["end_ns"] <= a["api_return_ns"] + 20000,
          f"copy {i}: inside its call (within 20 us of its return)")
    check(abs(a["duration_ns"] - b["duration_ns"]) <= max(0.25 * b["duration_ns"], 10000),
          f"copy {i}: duration within 25% or 10 us of CUPTI's")
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
k = [r for r in recs if r["type"] == "gpu_kernel" and r.get("kernel") == "vector_add"]
c = [r for r in recs if r["type"] == "gpu_copy" and not r.get("own")]
ev = sum(1 for r in c if r.get("timed_by") == "events")
on = [r["message"] for r in recs if r["type"] == "source_status" and "timing on from here" in r["message"]]
print("ok -" if len(k) == 100 else "FAIL -", f"late: CUPTI kernel records {len(k)} of 100 launches")
print("ok -" if (ev, len(c) - ev) == (2, 1) else "FAIL -", f"late: copies before CUPTI by events {ev} (2), after by CUPTI {len(c) - ev} (1)")
print("ok -" if len(on) == 1 else "FAIL -", "late: says from when:", on)
' | tee "$OUT/late.check"
grep -q FAIL "$OUT/late.check" && failed=1

# ---- 3. what timing costs a loop of copies ----
ITERS=${ITERS:-5000}
modes=("untraced||" "events|gpu|GRTRACE_GPU_CUPTI_KERNELS=" "cupti|gpu|GRTRACE_GPU_CUPTI_KERNELS=always"
	"nocopytiming|gpu|GRTRACE_GPU_CUPTI=0 GRTRACE_GPU_COPY_EVENTS=0")
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
	done
done
base=$(sort -g "$OUT/loop_untraced.ms" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
for spec in "${modes[@]}"; do
	m=${spec%%|*}
	sort -g "$OUT/loop_$m.ms" | awk -v b="$base" -v m="$m" -v it="$ITERS" '{ v[NR] = $1 } END {
		med = v[int((NR + 1) / 2)]
		printf "copy loop %-13s median %8.2f ms (rounds %.2f..%.2f)  %+6.1f%%  %+7.2f us per copy\n",
			m, med, v[1], v[NR], (med - b) * 100 / b, (med - b) * 1000 / (2 * it) }'
done
for m in events cupti; do
	echo "$m: $("$GRT" parse "$OUT/loop_${m}_1.grt" --filter type=gpu_copy | grep -vc ' own=')" copy records \
		"(loop: $((2 * ITERS + 2)))"
done
[ $failed = 0 ] && echo "all checks passed" || echo "some checks FAILED"
exit $failed
