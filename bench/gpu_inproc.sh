#!/bin/bash
# The cuda source in-process (--cuda-via inject) against uprobes, and CUPTI only where the block
# probes do not reach, on a GPU machine, in one call (about 6 minutes on an H100):
#  1. launch micro-benchmark (empty kernel, driver API and runtime): untraced, --cuda-via uprobe,
#     --cuda-via inject, rounds interleaved; median of the per-round medians, their spread, and
#     ns added per launch; each trace must hold every launch;
#  2. a small transformer's training loop: untraced, -s cuda (in-process), -s cuda,gpu; median
#     step time and % added; the trace's launch count against the PyTorch profiler's kernel count
#     of the same program;
#  3. the design's vector-add (10,000 launches of 1M elements): untraced, -s gpu, -s cuda,gpu; the
#     loop time, % added, the probe coverage (gpu_launch records of the 10,020 launches, lost by
#     source), whether the probe pool ran dry, the probes' line (launches without a buffer, not
#     read back, collected while running: buffers recycled without the application's sync), the
#     library's cost line (bookkeeping ns per launch), and which kernel turned CUPTI's kernel
#     timing on and why. Also with GRTRACE_GPU_POOL_MB=64: a pool a quarter of the default,
#     which the loop must recycle several times.
#
# usage: bench/gpu_inproc.sh BUILD OUTDIR [ROUNDS]
#        ONLY=vadd bench/gpu_inproc.sh BUILD OUTDIR   part 3 alone (under 2 minutes on an H100)
#        ONLY=launch bench/gpu_inproc.sh BUILD OUTDIR part 1 alone
#        ONLY=torch bench/gpu_inproc.sh BUILD OUTDIR  part 2 alone
#        ONLY=torchab bench/gpu_inproc.sh BUILD OUTDIR [ROUNDS]  the training loop's recording cost
#          within one process: ROUNDS pairs of processes, one untraced (A/A: the method's noise),
#          one under -s cuda whose recording is switched off and on in blocks of AB_BLOCK steps
#          (default 20; torch_transformer.py's "ab" mode), STEPS steps after 50 of warm-up
#   BUILD   directory with grtrace and libgrtrace-inject.so (built on the development machine)
#   OUTDIR  logs, traces and summary.txt go here
# environment: STEPS (training steps, default 600), LAUNCH_BATCHES (default 200 x 256 launches),
#   TORCH_MODES the traced modes of part 2 (default "cuda cudagpu"; also "uprobe", -s cuda
#   through libcuda's uprobes, and "library", the library preloaded without a recording),
#   VADD_EXTRA more vector-add modes, NAME|SOURCES|VAR=VALUE VAR=VALUE, ';' between modes (e.g.
#   "gpu3g|gpu|GRTRACE_GPU_POOL_MB=3072;gpu3gexit|gpu|GRTRACE_GPU_POOL_MB=3072 GRTRACE_GPU_COLLECT=exit"),
#   TORCH_CPU a CPU list (taskset -c) every training process runs on, traced or not: rounds no
#   longer differ by where the scheduler put the Python thread; TORCH_RECORDER_CPU another list,
#   for the mode "cudaaway" (-s cuda with grtrace itself kept on those CPUs, off the program's)
#   TORCH_ASLR=off every training process, traced or not, starts with its address space laid out
#   the same way (setarch -R): one source of the rounds' spread taken away
# Needs root, nvcc and a GPU; PyTorch for part 2 (skipped with a line when missing).
set -u
BUILD=${1:?usage: bench/gpu_inproc.sh BUILD OUTDIR [ROUNDS]}
OUT=${2:?usage: bench/gpu_inproc.sh BUILD OUTDIR [ROUNDS]}
ROUNDS=${3:-3}
STEPS=${STEPS:-600}
BATCHES=${LAUNCH_BATCHES:-200}
ONLY=${ONLY:-}
TORCH_MODES=${TORCH_MODES:-cuda cudagpu}
HERE=$(cd "$(dirname "$0")" && pwd)
GRT=$(cd "$BUILD" && pwd)/grtrace
PY=${PYTHON:-python3}
NAME=gpu_inproc
. "$HERE/gpu_summary.bash"
[ "$(id -u)" = 0 ] || die "needs root"
[ -x "$GRT" ] || die "no $GRT"
LIBFLAG=${LIBCUDA:+--libcuda $LIBCUDA}
[ "$ONLY" = vadd ] || [ "$ONLY" = torch ] || [ "$ONLY" = torchab ] ||
	"$NVCC" -O2 -o "$OUT/launch_loop" "$HERE/gpu_inproc/launch_loop.cu" -lcuda || die "nvcc launch_loop"
[ "$ONLY" = torchab ] ||
	"$NVCC" -O2 -o "$OUT/vector_add" "$HERE/gpu_inject/vector_add.cu" || die "nvcc vector_add"

say "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1), $(uname -r), $ROUNDS rounds interleaved"

# traced NAME SOURCES VIA CMD...: records CMD; its output in $OUT/NAME.out
traced() {
	local name=$1 sources=$2 via=$3
	shift 3
	# shellcheck disable=SC2086 # LIBFLAG and TRACED_ENV (VAR=VALUE ...) are words
	env ${TRACED_ENV:-} timeout 300 ${RECORDER_CPU:+taskset -c $RECORDER_CPU} "$GRT" record -f -s "$sources" ${via:+--cuda-via $via} $LIBFLAG -o "$OUT/$name.grt" \
		-- "$@" >"$OUT/$name.out" 2>"$OUT/$name.err" || echo "record failed: $name" >>"$SUMMARY"
}
# stats FILE: "median min max" of the numbers in FILE
stats() { sort -g "$1" | awk '{ v[NR] = $1 } END { printf "%.4f %.4f %.4f", v[int((NR + 1) / 2)], v[1], v[NR] }'; }
# versus BASE FILE: "median min max added added%" of the numbers in FILE against BASE's median
versus() {
	local base med lo hi
	read -r base _ _ < <(stats "$1")
	read -r med lo hi < <(stats "$2")
	awk -v b="$base" -v m="$med" -v lo="$lo" -v hi="$hi" \
		'BEGIN { printf "%s %s %s %.4f %.4f\n", m, lo, hi, m - b, b ? (m - b) * 100 / b : 0 }'
}

# how every training process starts, traced or not
TORCHPY=("$PY")
[ -n "${TORCH_CPU:-}" ] && TORCHPY=(taskset -c "$TORCH_CPU" "${TORCHPY[@]}")
[ "${TORCH_ASLR:-on}" = off ] && TORCHPY=(setarch -R "${TORCHPY[@]}")

# ---- 2b. the training loop's recording cost within one process (ONLY=torchab) ----
if [ "$ONLY" = torchab ]; then
	export PYTHONHASHSEED=0
	BLOCK=${AB_BLOCK:-20}
	say "## transformer training loop, $STEPS steps after 50 of warm-up${TORCH_CPU:+ on CPU $TORCH_CPU}${TORCH_ASLR:+, ASLR $TORCH_ASLR}:" \
		"the recording switched off and on in blocks of $BLOCK steps; ab_pct = the median over" \
		"block pairs of (on - off) / off"
	for round in $(seq "$ROUNDS"); do
		"${TORCHPY[@]}" "$HERE/gpu_inproc/torch_transformer.py" $((STEPS + 50)) ab "$BLOCK" \
			>"$OUT/torchab_untraced_$round.out" 2>&1
		traced torchab_cuda_$round cuda "" "${TORCHPY[@]}" "$HERE/gpu_inproc/torch_transformer.py" \
			$((STEPS + 50)) ab "$BLOCK"
		rm -f "$OUT/torchab_cuda_$round.grt"
		for m in untraced cuda; do
			line=$(grep '^ab ' "$OUT/torchab_${m}_$round.out")
			say "round $round, $m: ${line:-no ab line: $(tail -1 "$OUT/torchab_${m}_$round.out")}"
			sed -n 's/.* ab_pct=\([-+0-9.]*\).*/\1/p' "$OUT/torchab_${m}_$round.out" >>"$OUT/torchab_$m.pct"
		done
	done
	for m in untraced cuda; do
		[ -s "$OUT/torchab_$m.pct" ] || continue
		read -r med lo hi < <(stats "$OUT/torchab_$m.pct")
		say "$m: ab_pct median $med% over the processes ($lo .. $hi)"
	done
	exit 0
fi

# ---- 1. launch micro-benchmark ----
if [ "$ONLY" != vadd ]; then
if [ "$ONLY" != torch ]; then
say ""
say "## launch micro-benchmark: $BATCHES x 256 launches of an empty kernel, median ns per launch"
for round in $(seq "$ROUNDS"); do
	for api in driver runtime; do
		for via in untraced uprobe inject; do
			n=launch_${api}_${via}_$round
			if [ $via = untraced ]; then
				"$OUT/launch_loop" $api 256 "$BATCHES" >"$OUT/$n.out" 2>&1
			else
				traced "$n" cuda $via "$OUT/launch_loop" $api 256 "$BATCHES"
				got=$(launches_in "$GRT" "$OUT/$n.grt")
				want=$((256 * (BATCHES + 10)))
				[ "$got" = "$want" ] || say "MISSING: $n recorded $got of $want launches"
				rm -f "$OUT/$n.grt"
			fi
			sed -n 's/.*median_ns=\([0-9.]*\).*/\1/p' "$OUT/$n.out" >>"$OUT/launch_${api}_${via}.ns"
		done
	done
done
for api in driver runtime; do
	for via in untraced uprobe inject; do
		read -r med lo hi add _ < <(versus "$OUT/launch_${api}_untraced.ns" "$OUT/launch_${api}_${via}.ns")
		say "$(printf '%-8s %-9s median %8.1f ns (rounds %.1f..%.1f)  added %8.1f ns' $api $via \
			"$med" "$lo" "$hi" "$add")"
	done
done

fi # part 1

# ---- 2. PyTorch training loop ----
say ""
if [ "$ONLY" = launch ]; then
	:
elif $PY -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
	# PYTHONHASHSEED: every round's Python lays its dictionaries out alike
	export PYTHONHASHSEED=0
	say "## transformer training loop, $STEPS steps${TORCH_CPU:+ on CPU $TORCH_CPU}${TORCH_ASLR:+, ASLR $TORCH_ASLR}: median step time"
	for round in $(seq "$ROUNDS"); do
		# untraced first in odd rounds, last in even ones: a drift does not favour either
		[ $((round % 2)) = 1 ] &&
			"${TORCHPY[@]}" "$HERE/gpu_inproc/torch_transformer.py" "$STEPS" >"$OUT/torch_untraced_$round.out" 2>&1
		for m in $TORCH_MODES; do
			case $m in
			library)
				LD_PRELOAD=$(cd "$BUILD" && pwd)/libgrtrace-inject.so \
					"${TORCHPY[@]}" "$HERE/gpu_inproc/torch_transformer.py" "$STEPS" \
					>"$OUT/torch_library_$round.out" 2>&1 ;;
			uprobe) traced torch_uprobe_$round cuda uprobe "${TORCHPY[@]}" "$HERE/gpu_inproc/torch_transformer.py" "$STEPS" ;;
			cudagpu) traced torch_cudagpu_$round cuda,gpu "" "${TORCHPY[@]}" "$HERE/gpu_inproc/torch_transformer.py" "$STEPS" ;;
			cudaaway) RECORDER_CPU=${TORCH_RECORDER_CPU:?cudaaway needs TORCH_RECORDER_CPU} \
				traced torch_cudaaway_$round cuda "" "${TORCHPY[@]}" "$HERE/gpu_inproc/torch_transformer.py" "$STEPS" ;;
			*) traced torch_${m}_$round cuda "" "${TORCHPY[@]}" "$HERE/gpu_inproc/torch_transformer.py" "$STEPS" ;;
			esac
		done
		[ $((round % 2)) = 0 ] &&
			"${TORCHPY[@]}" "$HERE/gpu_inproc/torch_transformer.py" "$STEPS" >"$OUT/torch_untraced_$round.out" 2>&1
		for m in untraced $TORCH_MODES; do
			sed -n 's/.*step_ms=\([0-9.]*\).*/\1/p' "$OUT/torch_${m}_$round.out" >>"$OUT/torch_$m.ms"
		done
	done
	for m in untraced $TORCH_MODES; do
		read -r med lo hi _ pct < <(versus "$OUT/torch_untraced.ms" "$OUT/torch_$m.ms")
		say "$(printf '%-9s median %.4f ms (rounds %.4f..%.4f)  added %+.2f%%' $m "$med" "$lo" "$hi" "$pct")"
	done
	# each round against its own untraced run (the baseline drifts between rounds)
	for m in $TORCH_MODES; do
		paste "$OUT/torch_untraced.ms" "$OUT/torch_$m.ms" |
			awk '{ printf "%.4f\n", ($2 - $1) * 100 / $1 }' | sort -g >"$OUT/torch_$m.paired"
		say "$m, each round against its untraced run: median $(awk '{ v[NR] = $1 } END {
			printf "%+.2f%% of %d rounds", v[int((NR + 1) / 2)], NR }' "$OUT/torch_$m.paired")" \
			"(sorted: $(tr '\n' ' ' <"$OUT/torch_$m.paired"))"
	done
	$PY "$HERE/gpu_inproc/torch_transformer.py" "$STEPS" profile >"$OUT/torch_profile.out" 2>&1
	say "launches in the -s cuda trace: $(launches_in "$GRT" "$OUT/torch_cuda_1.grt"), PyTorch profiler's" \
		"kernels: $(sed -n 's/^profiler_kernels=//p' "$OUT/torch_profile.out")"
	say "path: $("$GRT" parse "$OUT/torch_cuda_1.grt" | grep -o 'CUDA calls recorded [a-z-]*' | sort | uniq -c | tr -s ' ' | tr '\n' ';')"
	say "lost: $("$GRT" report "$OUT/torch_cuda_1.grt" --drops --format json | $PY -c 'import json,sys; print(json.load(sys.stdin)["drops"]["lost"])')"
else
	say "## transformer training loop: skipped (no PyTorch with CUDA here)"
fi

fi # ONLY

# ---- 3. vector add ----
case $ONLY in launch | torch) exit 0 ;; esac
say ""
say "## vector add, 10000 launches of 1M elements: loop time, and the host's part of it (enqueue)"
# NAME|SOURCES|ENVIRONMENT per traced mode; VADD_EXTRA adds modes, ';' between them
VADD_MODES="gpu|gpu|;cudagpu|cuda,gpu|;gpupool64|gpu|GRTRACE_GPU_POOL_MB=64${VADD_EXTRA:+;$VADD_EXTRA}"
IFS=';' read -r -a vadd_modes <<<"untraced||;$VADD_MODES"
vadd_names=
for spec in "${vadd_modes[@]}"; do vadd_names="$vadd_names ${spec%%|*}"; done
vadd_names=${vadd_names# }
for round in $(seq "$ROUNDS"); do
	# each round starts one mode further along: no mode always runs first or after another
	for i in $(seq 0 $((${#vadd_modes[@]} - 1))); do
		IFS='|' read -r m sources envs <<<"${vadd_modes[$(((i + round - 1) % ${#vadd_modes[@]}))]}"
		if [ "$m" = untraced ]; then
			"$OUT/vector_add" 1048576 10000 >"$OUT/vadd_untraced_$round.out" 2>&1
		else
			TRACED_ENV=$envs traced "vadd_${m}_$round" "$sources" "" "$OUT/vector_add" 1048576 10000
		fi
	done
	for m in $vadd_names; do
		sed -n 's/.*loop_ms=\([0-9.]*\).*/\1/p' "$OUT/vadd_${m}_$round.out" >>"$OUT/vadd_$m.ms"
		sed -n 's/.*enqueue_ms=\([0-9.]*\).*/\1/p' "$OUT/vadd_${m}_$round.out" >>"$OUT/vadd_$m.enq"
	done
done
for m in $vadd_names; do
	read -r med lo hi _ pct < <(versus "$OUT/vadd_untraced.ms" "$OUT/vadd_$m.ms")
	read -r enq _ _ < <(stats "$OUT/vadd_$m.enq")
	say "$(printf '%-12s median %.2f ms (rounds %.2f..%.2f)  added %+.1f%%  enqueue %.2f ms' $m "$med" "$lo" "$hi" "$pct" "$enq")"
done
# what each first-round trace says: probe coverage of the 10,020 launches (20 warm-up), loss,
# the pool running dry, and the kernel that turned CUPTI's kernel timing on (none: it stayed off)
for m in ${vadd_names#untraced }; do
	"$GRT" parse --format json "$OUT/vadd_${m}_1.grt" | $PY -c '
import json, sys
recs = [json.loads(l) for l in sys.stdin]
of = lambda t: [r for r in recs if r["type"] == t]
launches = 10020
probed = len(of("gpu_launch"))
cupti = len([r for r in of("gpu_kernel") if not r.get("kernel", "").startswith("__grt_")])
lost = sum(d["count"] for d in of("drop"))
by_source = {}
for d in of("drop"):
    by_source[d["source"]] = by_source.get(d["source"], 0) + d["count"]
msgs = [r["message"] for r in of("source_status")]
on = [m for m in msgs if "kernel timing on from here" in m]
dry = [m for m in msgs if "ran dry" in m]
unread = [m for m in msgs if "reading back" in m]
print("vadd_%s: probe coverage %d of %d launches (%.1f%%), CUPTI gpu_kernel records %d, lost %d %s"
      % (sys.argv[1], probed, launches, probed * 100.0 / launches, cupti, lost,
         sorted(by_source.items())))
print("  uncovered kernel: " + (on[0].split("from here: ", 1)[1] if on else
      "none (CUPTI kernel timing stayed off)"))
print("  probe pool: " + (dry[0] if dry else "never ran dry"))
if unread:
    print("  " + unread[0])
# launches instrumented, without a buffer, not read back, collected while running (recycled)
print("  " + next((m for m in msgs if "launches instrumented" in m), "probes: (no probes line)"))
print("  library " + next((m for m in msgs if m.startswith("cost:")), "cost: (no cost line)"))
' "$m" | tee -a "$SUMMARY"
done
say ""
say "summary in $SUMMARY"
