# Shared by the GPU benchmarks that write OUT/summary.txt (sourced after OUT and NAME are set):
# the summary file, say (a line to the screen and the summary), die (NAME: message, status 1),
# NVCC and LIBCUDA (the machine's driver, for --libcuda; empty where none is found), and
# launches_in (how many kernel launches a trace holds).
mkdir -p "$OUT"
SUMMARY=$OUT/summary.txt
: >"$SUMMARY"
say() { echo "$*" | tee -a "$SUMMARY"; }
die() {
	echo "$NAME: $*" >&2
	exit 1
}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
LIBCUDA=
for c in /usr/local/nvidia/lib64/libcuda.so.1 /usr/lib/x86_64-linux-gnu/libcuda.so.1; do
	[ -e "$c" ] && LIBCUDA=$c && break
done

# launches_in GRTRACE TRACE: the kernel launches TRACE holds, summed over its kernels
launches_in() {
	"$1" report "$2" --kernels --format json 2>/dev/null |
		"${PYTHON:-python3}" -c 'import json,sys; print(sum(k["launches"] for k in json.load(sys.stdin)["kernels"]))'
}
