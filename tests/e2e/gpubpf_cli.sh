#!/bin/bash
# `grtrace bpf check` end to end, and GPU eBPF output through parse and report (a simulated run).
set -u
BUILD=${1:-build}
G=$BUILD/grtrace
P=$BUILD/gpubpf/progs
S=$BUILD/gpubpf/samples
SIM=$BUILD/fixtures/gpubpf_sim
. "$(dirname "$0")/lib/cases.bash"
T=$tmp

# expect_rc NAME RC [STDERR-LINE] -- COMMAND...: exit status and, when given, the exact stderr
expect_rc() {
	local name=$1 rc=$2 want=$3 got
	shift 4
	"$@" >"$T/out" 2>"$T/err"
	got=$?
	if [ "$got" != "$rc" ]; then
		fail "$name: exit $got, stderr: $(head -c 300 "$T/err")"
	elif [ -n "$want" ] && [ "$(cat "$T/err")" != "$want" ]; then
		fail "$name: stderr: $(cat "$T/err")"
	else
		ok "$name"
	fi
}
ptxas=$(command -v ptxas || { [ -x /usr/local/cuda/bin/ptxas ] && echo /usr/local/cuda/bin/ptxas; })

expect_rc check_accepts 0 "" -- "$G" bpf check "$P/bpftime_cuda_counter.bpf.o"
grep -q "kretprobe/_Z9vectorAddPKfS0_Pf (on_exit): exit probe, 99 eBPF instructions verified" "$T/out" &&
	ok check_summary || fail "check_summary: $(cat "$T/out")"
if [ -n "$ptxas" ]; then
	grep -qE "ptxas sm_90: kprobe/_Z9vectorAddPKfS0_Pf: [0-9]+ registers, [0-9]+ SASS instructions" \
		"$T/out" && ok check_ptxas_stats || fail "check_ptxas_stats: $(cat "$T/out")"
	expect_rc check_sm75_ptx_out 0 "" -- "$G" bpf check "$S/block_hist.bpf.o" --arch sm_75 \
		--ptx "$T/bh.ptx"
	"$ptxas" -arch=sm_75 "$T/bh.ptx" -o /dev/null && ok ptx_out_compiles || fail ptx_out_compiles
	grep -q "^.func __grt_bpf1(.reg .b64 %env)" "$T/bh.ptx" && ok ptx_out_has_funcs ||
		fail ptx_out_has_funcs
else
	PATH=/nonexistent "$G" bpf check "$P/bpftime_threadhist.bpf.o" >/dev/null 2>"$T/err"
	grep -q "ptxas not found" "$T/err" && ok check_without_ptxas || fail check_without_ptxas
fi
# without ptxas it says so, and still succeeds
PTXAS=/nonexistent/ptxas "$G" bpf check "$P/bpftime_threadhist.bpf.o" >/dev/null 2>"$T/err"
rc=$?
[ $rc = 0 ] && [ "$(cat "$T/err")" = "grtrace: note: ptxas not found (install the CUDA toolkit or set PTXAS): the PTX was not compiled for sm_90" ] &&
	ok check_notes_missing_ptxas || fail "check_notes_missing_ptxas: rc $rc: $(cat "$T/err")"

expect_rc refused_loop 1 "grtrace: $P/refuse_loop.bpf.o: kprobe/loop_kernel insn 17: jumps back to insn 13 (loops do not run on the GPU: unroll them with #pragma unroll)" \
	-- "$G" bpf check "$P/refuse_loop.bpf.o"
expect_rc missing_object 1 "grtrace: $T/none.o: No such file or directory" -- "$G" bpf check "$T/none.o"
expect_rc not_an_object 1 "grtrace: $G: not a little-endian eBPF object (build it with clang -target bpf -c)" \
	-- "$G" bpf check "$G"
expect_rc no_subcommand 2 "" -- "$G" bpf
expect_rc unknown_subcommand 2 "" -- "$G" bpf load x.o
expect_rc no_file 2 "" -- "$G" bpf check
expect_rc two_files 2 "" -- "$G" bpf check a.o b.o
expect_rc bad_arch 2 "grtrace: bpf check: unknown --arch 'sm_12' (sm_75, sm_80, sm_86, sm_89, sm_90, ...)" \
	-- "$G" bpf check "$P/bpftime_threadhist.bpf.o" --arch sm_12
expect_rc unknown_option 2 "" -- "$G" bpf check --frobnicate "$P/bpftime_threadhist.bpf.o"
expect_rc kernel_out_alone 2 "grtrace: bpf check: --kernel-out needs --kernel-ptx" \
	-- "$G" bpf check "$P/bpftime_threadhist.bpf.o" --kernel-out x.ptx
expect_rc unwritable_ptx 1 "" -- "$G" bpf check "$P/bpftime_threadhist.bpf.o" --ptx /nonexistent/x.ptx
grep -q "cannot create /nonexistent/x.ptx" "$T/err" && ok unwritable_message || fail unwritable_message

# instrumenting the samples' test program
if [ -f "$S/vec_add.sm_90.ptx" ]; then
	expect_rc kernel_ptx 0 "" -- "$G" bpf check "$S/sm_placement.bpf.o" --kernel-ptx "$S/vec_add.sm_90.ptx" \
		--kernel-out "$T/vec_add.ptx"
	grep -q "kernel vec_add: 1 entry, 0 exit program(s) (0 exits), 0 memory accesses probed, 0 not understood; environment is parameter 4" \
		"$T/err" && ok kernel_ptx_summary || fail "kernel_ptx_summary: $(cat "$T/err")"
	if [ -n "$ptxas" ]; then
		"$ptxas" -arch=sm_90 "$T/vec_add.ptx" -o /dev/null && ok kernel_ptx_compiles || fail kernel_ptx_compiles
	fi
	expect_rc kernel_ptx_not_ptx 1 "grtrace: bpf check: $G: not PTX: no .version directive" \
		-- "$G" bpf check "$S/sm_placement.bpf.o" --kernel-ptx "$G" --kernel-out "$T/x.ptx"
fi

# A simulated run of vec_add (n = 1000, 4 blocks of 256) with two samples, through parse and report
"$SIM" -o "$T/sim.grt" --kernel vec_add --grid 4 --block 256 --params 0x10000,0x20000,0x30000,1000 \
	--access ld,0,4 --access ld,1,4 --access st,2,4 --guard 3 --launches 2 \
	"$S/sm_placement.bpf.o" "$S/mem_counts.bpf.o" >/dev/null 2>"$T/sim.err" &&
	ok simulated_run || fail "simulated_run: $(cat "$T/sim.err")"
n=$("$G" parse "$T/sim.grt" --filter type=bpf_event --format json | python3 -c "
import json, sys
ev = [json.loads(l) for l in sys.stdin]
print(len(ev), sorted({e['block'] for e in ev}), {e['map'] for e in ev}, all(e['sm'] == e['block'] % 132 and e['start_ns'] > 0 for e in ev))")
[ "$n" = "8 [0, 1, 2, 3] {'placements'} True" ] && ok events_named_from_btf || fail "events_named_from_btf: $n"
n=$("$G" report "$T/sim.grt" --bpf --format json --top 0 | python3 -c "
import json, sys
r = json.load(sys.stdin)['bpf']
maps = {m['name']: m for m in r['maps']}
t = maps['totals']['entries'][0]['value']
print(len(r['programs']), maps['placements']['events'], maps['placements']['lost'], t['loads'], t['stores'], t['bytes'], t['generic'],
      sum(e['value']['value'] for e in maps['blocks_per_sm']['entries']))")
[ "$n" = "2 8 0 4000 2000 24000 0 8" ] && ok report_decodes_maps || fail "report_decodes_maps: $n"
"$G" report "$T/sim.grt" --bpf >"$T/report.txt"
grep -q "key=0 -> loads=4000 stores=2000 bytes=24000 generic=0" "$T/report.txt" && ok report_text ||
	fail "report_text: $(cat "$T/report.txt")"
"$G" report "$T/sim.grt" >"$T/default.txt"
! grep -q "GPU eBPF" "$T/default.txt" && ok report_bpf_off_by_default || fail report_bpf_off_by_default

exit $failed
