#!/bin/bash
# Where a GPU eBPF exit program's cost goes, kernel time only: vec_add's PTX instrumented with the
# bench programs by `grtrace bpf check --kernel-ptx` (the translator alone: no recorder, no host
# collection), and copies of the ring program's PTX with one part taken out by an edit, timed
# side by side by bench/gpubpf/ptx_timing.cu (10,000 launches of 2^20 threads, rounds interleaved).
#   bench/gpu_bpf_forms.sh --prepare [BUILD] [DEST]   here: the PTX files and the harness into DEST
#                                                      (default .device-carry/bpf_forms)
#   bench/gpu_bpf_forms.sh DIR OUTDIR                 on the GPU machine (DIR: the prepared DEST)
# The edits (each applied to the inlined exit program, in steady state: the ring full):
#   no_drop_count   the warp's drop count not added to its SM's counter (red removed)
#   no_exh_load     the SM's "exhausted" word not loaded (taken as set: always true here)
#   env_only        both: what is left is the map's address loaded from the environment and a vote
#   exh_l1          the "exhausted" word loaded through L1 instead of at GPU scope
#   no_clock        (ring) the clock the event carries not read
#   counter_st      (counter) the thread's value stored, not added to: no read of it
#   counter_u32     (counter) values of 4 bytes, added to: half the map's traffic
#   counter_no_mem  (counter) the value's address computed, nothing read or written
# Modules that write nothing to a ring drop the events as the real ones do: outputs must stay
# c = a + b. Results are diagnostics for bench/RESULTS.md, not a product path.
set -eu
cd "$(dirname "$0")/.."
if [ "${1:-}" = --prepare ]; then
	build=${2:-build}
	dest=${3:-.device-carry/bpf_forms}
	rm -rf "$dest"
	mkdir -p "$dest"
	nvcc -arch=sm_90 -ptx -o "$dest/plain.ptx" bench/gpubpf/vec_add_bench.cu
	instrument() { # NAME PROGRAM [VARIANTS]: the default forms without VARIANTS (an empty
		(	     # GRTRACE_BPF_VARIANTS would ask for the first forms)
			[ -n "${3:-}" ] && export GRTRACE_BPF_VARIANTS=$3
			"$build/grtrace" bpf check "$build/gpubpf/bench/$2.bpf.o" \
				--kernel-ptx "$dest/plain.ptx" --kernel-out "$dest/$1.ptx" >/dev/null 2>&1
		)
	}
	instrument empty empty
	instrument counter counter
	instrument clock_only clock_only
	instrument ring ring
	instrument ring_const ring_const
	instrument ring_entry ring ring_fast_drop,ring_entry_read
	edit() { # NAME FROM SED-SCRIPT: FROM's PTX edited, the edit required to apply once
		sed "$3" "$dest/$2.ptx" >"$dest/$1.ptx"
		if cmp -s "$dest/$1.ptx" "$dest/$2.ptx"; then
			echo "gpu_bpf_forms: edit $1 changed nothing" >&2
			exit 1
		fi
	}
	exh_load='@%p0 ld.relaxed.gpu.global.u64 %t7, \[%t6+40\];'
	drop_red='@%p0 red.global.add.u64 \[%t6+32\], %t8;'
	edit ring_const_no_drop_count ring_const "0,/$drop_red/s/$drop_red//"
	edit ring_const_no_exh_load ring_const "0,/$exh_load/s/$exh_load/mov.b64 %t7, 1;/"
	edit ring_const_env_only ring_const "0,/$exh_load/s/$exh_load/mov.b64 %t7, 1;/; 0,/$drop_red/s/$drop_red//"
	edit ring_const_exh_l1 ring_const "0,/$exh_load/s/$exh_load/@%p0 ld.global.ca.u64 %t7, [%t6+40];/"
	edit ring_no_clock ring '0,/mov.u64 %r0, %globaltimer;/s/mov.u64 %r0, %globaltimer;/mov.u64 %r0, 0;/'
	add1='red.global.add.u64 \[%r0+0\], 0x1;'
	edit counter_st counter "s/$add1/st.global.u64 [%r0+0], %gtid;/"
	edit counter_u32 counter "s/$add1/red.global.add.u32 [%r0+0], 0x1;/; s/mad.lo.u64 %t0, %t1, 8, %t2;/mad.lo.u64 %t0, %t1, 4, %t2;/"
	edit counter_no_mem counter "s/$add1//"
	cp bench/gpubpf/ptx_timing.cu "$dest/"
	for f in "$dest"/*.ptx; do ptxas -arch=sm_90 -o /dev/null "$f"; done
	ls "$dest"
	exit 0
fi
DIR=${1:?usage: bench/gpu_bpf_forms.sh DIR OUTDIR}
OUT=${2:?usage: bench/gpu_bpf_forms.sh DIR OUTDIR}
ROUNDS=${ROUNDS:-7}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
"$nvcc" -O2 -o "$OUT/ptx_timing" "$DIR/ptx_timing.cu" -lcuda
mods=${MODULES:-"plain empty counter clock_only ring ring_no_clock ring_entry ring_const
ring_const_no_drop_count ring_const_no_exh_load ring_const_env_only ring_const_exh_l1"}
args=""
for m in $mods; do args="$args $m=$DIR/$m.ptx"; done
"$OUT/ptx_timing" 10000 "$ROUNDS" $args | tee "$OUT/forms.txt"
