#!/bin/bash
# Builds (here, with the CUDA toolkit) or runs (on the GPU machine) the PTX probe check.
#   bench/ptx_probe_check.sh build OUTDIR   compile the harness, corpus PTX and a fat binary into OUTDIR
#   bash OUTDIR/run.sh                      on the GPU machine: run it, log under $OUT when set
set -eu
cd "$(dirname "$0")/.."
mode=${1:-}
out=${2:-}
if [ "$mode" != build ] || [ -z "$out" ]; then
	echo "usage: $0 build OUTDIR" >&2
	exit 2
fi
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
mkdir -p "$out"
for f in early_return barrier_shuffle dynamic_shared device_call multi_kernel; do
	"$nvcc" -ptx -arch=sm_90 -o "$out/$f.ptx" "tests/ptx/$f.cu"
done
# As applications ship it: cubin + zstd-compressed PTX (CUDA 13's default).
"$nvcc" -fatbin -arch=sm_90 -o "$out/vector_add.fatbin" tests/ptx/vector_add.cu
gcc -std=gnu11 -O2 -Wall -Wextra -Werror -Wno-unused-parameter -Wno-missing-field-initializers \
	-D_GNU_SOURCE -Isrc -I/usr/local/cuda/include -o "$out/ptx_probe_check" \
	bench/ptx_probe_check.c src/inject/fatbin*.c src/inject/ptx_*.c src/common/kernel_regex.c \
	-L/usr/local/cuda/lib64/stubs -lcuda -Wl,-Bstatic -lzstd -Wl,-Bdynamic
cat >"$out/run.sh" <<'RUN'
#!/bin/bash
# Runs the PTX probe check on the GPU machine; prints ok/FAIL lines and a timing table.
dir=$(dirname "$0")
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
log=${OUT:-/tmp}/ptx_probe_check.log
"$dir/ptx_probe_check" "$dir" 2>&1 | tee "$log"
exit "${PIPESTATUS[0]}"
RUN
chmod +x "$out/run.sh"
echo "built $out"
