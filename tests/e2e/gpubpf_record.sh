#!/bin/bash
# record --bpf and snoop gpu --bpf end to end without a GPU: the recorder, libgrtrace-inject.so,
# the fake driver whose device runs the reference interpreter, parse and report.
set -u
. tests/e2e/lib/inject.bash
S=$BUILD/gpubpf/samples
P=$BUILD/gpubpf/progs
SIM=$BUILD/fixtures/gpubpf_sim
export FAKE_CUDA_BPF_DEVICE=$PWD/$FIX/libfakegpubpf.so
N=10000 # 40 blocks of 256 threads, 10240 threads, two launches
BLOCKS=40

# bpf NAME OBJECT... : records app_bpf N 2 with the objects (block probes off) into $T/NAME.grt
bpf() {
	local name=$1 objs=() list=""
	shift
	for o in "$@"; do
		objs+=(--bpf "$o")
		list=${list:+$list:}$o
	done
	FAKE_CUDA_BPF_OBJECTS=$list GRTRACE_GPU_PROBES=off FAKE_CUDA_REPORT="$T/$name.fake" \
		timeout 120 "$G" record -s gpu -o "$T/$name.grt" "${objs[@]}" -- "$FIX/app_bpf" $N 2 \
		>"$T/$name.out" 2>"$T/$name.err"
}

# report NAME PYTHON-EXPRESSION over `maps` (name -> map of report --bpf --format json), `r`
report() {
	"$G" report "$T/$1.grt" --bpf --format json --top 0 | python3 -c "
import json, sys
r = json.load(sys.stdin)['bpf']
maps = {m['name']: m for m in r['maps']}
def vals(name, key=None): return [e['value']['value'] for e in maps[name]['entries'] if key is None or e['key']['key'] == key]
print($2)"
}

"$FIX/app_bpf" $N 2 >"$T/plain.out" 2>&1

# a refused program: exit 1, the verifier's line, and the command never runs
expect_one_line() {
	local name=$1 rc=$2 want=$3
	shift 3
	"$@" >"$T/refused.out" 2>"$T/refused.err"
	local got=$?
	if [ "$got" = "$rc" ] && [ "$(cat "$T/refused.err")" = "$want" ] && [ ! -s "$T/refused.out" ]; then
		ok "$name"
	else
		fail "$name" "exit $got: $(head -c 300 "$T/refused.err") $(head -c 100 "$T/refused.out")"
	fi
}
expect_one_line refusal_before_start 1 \
	"grtrace: record: $P/refuse_loop.bpf.o: kprobe/loop_kernel insn 17: jumps back to insn 13 (loops do not run on the GPU: unroll them with #pragma unroll)" \
	"$G" record -f -s gpu -o "$T/refused.grt" --bpf "$S/mem_counts.bpf.o" --bpf "$P/refuse_loop.bpf.o" -- "$FIX/app_bpf" 10 1
expect_one_line bpf_needs_gpu_source 2 \
	"grtrace: record: --bpf runs programs through the gpu source: add gpu to -s (e.g. -s cuda,gpu)" \
	"$G" record -f -s cuda -o "$T/refused.grt" --bpf "$S/mem_counts.bpf.o" -- "$FIX/app_bpf" 10 1
expect_one_line missing_object 1 \
	"grtrace: record: $T/none.bpf.o: No such file or directory" \
	"$G" record -f -s gpu -o "$T/refused.grt" --bpf "$T/none.bpf.o" -- "$FIX/app_bpf" 10 1
expect_one_line snoop_gpu_needs_command 2 \
	"grtrace: snoop gpu: give the command to run after --, without -p (e.g. grtrace snoop gpu --bpf PROG.bpf.o -- ./app)" \
	"$G" snoop gpu --bpf "$S/mem_counts.bpf.o"
expect_one_line snoop_bpf_is_for_gpu 2 "grtrace: snoop cuda: --bpf is for snoop gpu" \
	"$G" snoop cuda --bpf "$S/mem_counts.bpf.o"

# the five samples, each with the answers vec_add must give (docs/gpu-bpf.md, "Samples"), twice
bpf samples "$S/exit_times.bpf.o" "$S/block_hist.bpf.o" "$S/launch_latency.bpf.o" \
	"$S/mem_counts.bpf.o" "$S/sm_placement.bpf.o"
check samples_recorded test -s "$T/samples.grt"
check outputs_bit_identical diff "$T/plain.out" "$T/samples.out"
# the trace says which code forms the translation used
check code_forms_said grep -q "code forms: default (ring_fast_drop)" <("$G" parse "$T/samples.grt" --filter type=source_status)
n=$(report samples "len(r['programs']), [p['status'] for p in r['programs']].count(0)")
[ "$n" = "6 6" ] && ok samples_programs_described || fail samples_programs_described "$n"
n=$(report samples "len(vals('thread_exits', 1)), set(vals('thread_exits', 1)), len(vals('thread_exits', 0)), maps['thread_exits']['final']")
[ "$n" = "10240 {2} 10240 True" ] && ok exit_times_one_exit_per_launch || fail exit_times_one_exit_per_launch "$n"
n=$(report samples "sorted(e['key']['key'] for e in maps['threads_per_block']['entries']) == list(range($BLOCKS)), set(vals('threads_per_block')), sum(vals('run_ns_log2'))")
[ "$n" = "True {512} 20480" ] && ok block_hist_256_per_block || fail block_hist_256_per_block "$n"
n=$(report samples "len(vals('block_start_ns')), maps['launches']['events'], maps['launches']['lost']")
[ "$n" = "$BLOCKS 2 0" ] && ok launch_latency_one_event_per_launch || fail launch_latency_one_event_per_launch "$n"
n=$(report samples "maps['totals']['entries'][0]['value']")
[ "$n" = "{'loads': 40000, 'stores': 20000, 'bytes': 240000, 'generic': 0}" ] && ok mem_counts_exact ||
	fail mem_counts_exact "$n"
n=$(report samples "sum(vals('blocks_per_sm')), maps['placements']['events'], maps['placements']['lost']")
[ "$n" = "$((BLOCKS * 2)) $((BLOCKS * 2)) 0" ] && ok sm_placement_every_block || fail sm_placement_every_block "$n"

# the same maps the interpreter leaves when it runs the launches alone (gpubpf_sim)
"$SIM" -o "$T/sim.grt" --kernel vec_add --grid $BLOCKS --block 256 --params 1,2,3,$N \
	--access ld,0,4 --access ld,1,4 --access st,2,4 --guard 3 --launches 2 --sms 4 \
	"$S/exit_times.bpf.o" "$S/block_hist.bpf.o" "$S/launch_latency.bpf.o" "$S/mem_counts.bpf.o" \
	"$S/sm_placement.bpf.o" >/dev/null 2>"$T/sim.err" || fail simulated "$(cat "$T/sim.err")"
# (counts, not times: the fake device's clock is not the simulation's)
counts="__import__('hashlib').sha1(str([(n, sorted(json.dumps(e, sort_keys=True) for e in maps[n]['entries'])) for n in ('threads_per_block', 'run_ns_log2', 'totals', 'blocks_per_sm')] + [sorted(vals('thread_exits', 1)), maps['placements']['events'], maps['launches']['events']]).encode()).hexdigest()"
n=$(report samples "$counts")
[ "$n" = "$(report sim "$counts")" ] && ok maps_equal_interpreter || fail maps_equal_interpreter

# events through parse, fields named from BTF
n=$("$G" parse "$T/samples.grt" --filter type=bpf_event --format json | python3 -c "
import json, sys
ev = [json.loads(l) for l in sys.stdin]
print(len(ev), sorted({e['map'] for e in ev}), sorted({e['block'] for e in ev if e['map'] == 'placements'}) == list(range($BLOCKS)),
      [e['n'] for e in ev if e['map'] == 'launches'])")
[ "$n" = "$((BLOCKS * 2 + 2)) ['launches', 'placements'] True [$N, $N]" ] && ok parse_bpf_events || fail parse_bpf_events "$n"
check text_report grep -q "key=0 -> loads=40000 stores=20000 bytes=240000 generic=0" <("$G" report "$T/samples.grt" --bpf)

# rings, printk and puts; a ring too small for the second launch's events: the rest counted lost
BIGN=100000 # 391 blocks
FAKE_CUDA_BPF_OBJECTS=$P/vec_add_live.bpf.o GRTRACE_GPU_PROBES=off GRTRACE_GPU_BPF_RING_KB=8 \
	timeout 120 "$G" record -s gpu -o "$T/live.grt" --bpf "$P/vec_add_live.bpf.o" -- \
	"$FIX/app_bpf" $BIGN 2 >"$T/live.out" 2>"$T/live.err"
n=$(report live "maps['done']['events'] + maps['done']['lost'], maps['done']['lost'] > 0, r['printk']['lines'] + r['printk']['lost'], r['printk']['lost'] > 0")
[ "$n" = "782 True 784 True" ] && ok ring_events_and_losses_add_up || fail ring_events_and_losses_add_up "$n"
n=$("$G" parse "$T/live.grt" --format json | python3 -c "
import json, sys
recs = [json.loads(l) for l in sys.stdin]
lost = sum(r['count'] for r in recs if r['type'] == 'bpf_lost')
drops = sum(r.get('count', 0) for r in recs if r['type'] == 'drop' and r.get('source') == 'gpu')
print(lost == drops and lost > 0)")
[ "$n" = True ] && ok losses_are_drops || fail losses_are_drops "$n"

# a collection while the launch may still run (the drain period) does not empty the rings; the
# synchronization after it does: a ring that holds one launch's lines loses none over three
FAKE_CUDA_BPF_OBJECTS=$P/vec_add_live.bpf.o GRTRACE_GPU_PROBES=off GRTRACE_GPU_BPF_RING_KB=4 \
	GRTRACE_GPU_DRAIN_MS=20 APP_BPF_IDLE_MS=150 timeout 120 "$G" record -s gpu -o "$T/reset.grt" \
	--bpf "$P/vec_add_live.bpf.o" -- "$FIX/app_bpf" $N 3 >"$T/reset.out" 2>"$T/reset.err"
n=$(report reset "maps['done']['events'], maps['done']['lost'], r['printk']['lines'], r['printk']['lost']")
[ "$n" = "$((BLOCKS * 3)) 0 $((BLOCKS * 3 + 3)) 0" ] && ok rings_emptied_at_syncs || fail rings_emptied_at_syncs "$n"

# the collection reads the rings without holding the launch path: the fake driver holds the
# collection's first read until the application launched 3 more kernels (5 s at most). Read while
# launches still write the ring (one synchronization, at the end), and emptied after each
# launch's synchronization (the next launch goes to the other set meanwhile): a collection that
# held the launches' lock stalled the application until its reads were done
for mode in at_end each; do
	sync=""
	[ $mode = at_end ] && sync=1
	FAKE_CUDA_BPF_OBJECTS=$P/vec_add_live.bpf.o GRTRACE_GPU_PROBES=off GRTRACE_GPU_DRAIN_MS=20 \
		FAKE_LAUNCH_US=2000 APP_BPF_SYNC_AT_END=$sync FAKE_CUDA_COLLECTOR_COPY_WAITS=3 \
		FAKE_CUDA_REPORT="$T/running_$mode.fake" timeout 120 "$G" record -s gpu \
		-o "$T/running_$mode.grt" --bpf "$P/vec_add_live.bpf.o" -- "$FIX/app_bpf" 1000 200 \
		>"$T/running_$mode.out" 2>"$T/running_$mode.err"
	n=$(grep -o "collector_copy_wait=[a-z-]*" "$T/running_$mode.fake")
	[ "$n" = collector_copy_wait=launches-went-on ] && ok "ring_read_while_launching_$mode" ||
		fail "ring_read_while_launching_$mode" "$n"
	n=$(report "running_$mode" "maps['done']['events'], maps['done']['lost'], r['printk']['lines'], r['printk']['lost']")
	[ "$n" = "800 0 1000 0" ] && ok "ring_read_while_launching_${mode}_counts" ||
		fail "ring_read_while_launching_${mode}_counts" "$n"
done

# a ring read in chunks (1 MB at a time): 1.5 MB of 48-byte records per launch, every one whole
FAKE_CUDA_BPF_OBJECTS=$BUILD/gpubpf/bench/ring.bpf.o GRTRACE_GPU_PROBES=off timeout 120 \
	"$G" record -s gpu -o "$T/chunks.grt" --bpf "$BUILD/gpubpf/bench/ring.bpf.o" -- \
	"$FIX/app_bpf" 32768 2 >"$T/chunks.out" 2>"$T/chunks.err"
n=$("$G" parse "$T/chunks.grt" --filter type=bpf_event --format json | python3 -c "
import json, sys
from collections import Counter
ev = [json.loads(l) for l in sys.stdin]
print(len(ev), Counter(e['x'] for e in ev) == Counter({x: 256 for x in range(256)}),
      all(e['y'] == 0 and e['z'] == 0 and e['size'] == 32 for e in ev))")
[ "$n" = "65536 True True" ] && ok ring_read_in_chunks || fail ring_read_in_chunks "$n"

# snoop gpu: the same lines live
FAKE_CUDA_BPF_OBJECTS=$P/vec_add_live.bpf.o GRTRACE_GPU_PROBES=off timeout 120 \
	"$G" snoop gpu --bpf "$P/vec_add_live.bpf.o" -- "$FIX/app_bpf" 1000 2 >"$T/snoop.out" 2>"$T/snoop.err"
n=$(grep -c ' bpf_event .* map=done .* n=1000$' "$T/snoop.out")
[ "$n" = 8 ] && ok snoop_ring_events || fail snoop_ring_events "$n: $(head -c 400 "$T/snoop.out")"
n=$(grep -c 'bpf_printk .*kind=printk .*text="block [0-3] of n=1000 done"' "$T/snoop.out")
[ "$n" = 8 ] && ok snoop_printk_lines || fail snoop_printk_lines "$n"
n=$(grep -c 'kind=puts .*text="block 0 done"' "$T/snoop.out")
[ "$n" = 2 ] && ok snoop_puts_lines || fail snoop_puts_lines "$n"
check snoop_command_ran grep -qx "result=[0-9a-f]*" "$T/snoop.out"

# block probes and programs in one kernel: both parameters, both answers
FAKE_CUDA_BPF_OBJECTS=$S/mem_counts.bpf.o FAKE_CUDA_REPORT="$T/both.fake" timeout 120 \
	"$G" record -s gpu -o "$T/both.grt" --bpf "$S/mem_counts.bpf.o" -- "$FIX/app_bpf" $N 2 \
	>"$T/both.out" 2>"$T/both.err"
n=$(report both "maps['totals']['entries'][0]['value']['loads']")
[ "$n" = 40000 ] && ok with_block_probes || fail with_block_probes "$n"
n=$("$G" parse "$T/both.grt" --format json | python3 -c "
import json, sys
print([json.loads(l)['blocks'] for l in sys.stdin if '\"gpu_launch\"' in l])")
[ "$n" = "[$BLOCKS, $BLOCKS]" ] && ok block_probes_beside_programs || fail block_probes_beside_programs "$n"
check with_block_probes_output diff "$T/plain.out" "$T/both.out"

exit $failed
