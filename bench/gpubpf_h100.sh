#!/bin/bash
# Builds (here) or runs (on the GPU machine) the GPU eBPF check: samples against the interpreter,
# application output unchanged, overhead of 10,000 vec_add launches against the design's targets.
#   make all && bench/gpubpf_h100.sh build OUTDIR    compile the harness, programs and PTX into OUTDIR
#   bash OUTDIR/run.sh                               on the GPU machine; traces and log under $OUT
set -eu
cd "$(dirname "$0")/.."
mode=${1:-}
out=${2:-}
build=${BUILD:-build}
if [ "$mode" != build ] || [ -z "$out" ]; then
	echo "usage: $0 build OUTDIR   (after make all)" >&2
	exit 2
fi
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
mkdir -p "$out/samples" "$out/bench" "$out/progs"
cp "$build"/gpubpf/samples/*.bpf.o "$out/samples/"
cp "$build"/gpubpf/progs/*.bpf.o "$out/progs/"
bpf_cc() { clang -g -O2 -target bpf -I"$build/gen" -Isamples/gpu-bpf -c "$@"; }
for f in bench/gpubpf/*.bpf.c; do
	bpf_cc "$f" -o "$out/bench/$(basename "$f" .c).o"
done
bpf_cc -DPER_SM bench/gpubpf/memcount.bpf.c -o "$out/bench/memcount_sm.bpf.o"
"$nvcc" -ptx -arch=sm_90 -o "$out/vec_add.sm_90.ptx" samples/gpu-bpf/vec_add.cu
# the objects of today's sources (a build folder keeps those of files since moved)
objs=$(find "$build/obj/src" -name '*.o' ! -path '*/cli/main.o' | while read -r o; do
	s=${o#"$build"/obj/}
	[ -e "${s%.o}.c" ] && echo "$o"
done)
gcc -std=gnu11 -O2 -Wall -Wextra -Werror -Wno-unused-parameter -Wno-missing-field-initializers \
	-D_GNU_SOURCE -Isrc -I. -Itests -I"$build/gen" -I/usr/local/cuda/include \
	-o "$out/gpubpf_gpu_check" bench/gpubpf_gpu_check.c $objs \
	"$build/obj/tests/gpubpf/bpf_interp.o" "$build/obj/tests/gpubpf/bpf_sim.o" \
	"$build/gpubpf/libptxparse.a" -Wl,-Bstatic -lbpf -lelf -lz -lzstd -lmicrohttpd -lncursesw -ltinfo \
	-Wl,-Bdynamic -lgnutls \
	-L/usr/local/cuda/lib64/stubs -lcuda -lpthread -ldl -lm
cp "$build/grtrace" "$out/"
cat >"$out/run.sh" <<'RUN'
#!/bin/bash
# Runs the GPU eBPF check on the GPU machine: ok/FAIL lines, timings, then each sample's maps
# as `grtrace report --bpf` decodes them from the GPU run (S.gpu.grt; S.sim.grt: the interpreter).
dir=$(cd "$(dirname "$0")" && pwd)
res=${OUT:-/tmp/gpubpf}
mkdir -p "$res"
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
"$dir/gpubpf_gpu_check" "$dir" "$res" 2>&1 | tee "$res/gpubpf_gpu_check.log"
rc=${PIPESTATUS[0]}
for t in "$res"/*.gpu.grt; do
	[ -f "$t" ] && "$dir/grtrace" report "$t" --bpf --top 8 | sed -n '/== bpf ==/,$p'
done
exit "$rc"
RUN
chmod +x "$out/run.sh"
echo "built $out"
