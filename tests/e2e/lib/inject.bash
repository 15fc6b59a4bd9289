# Shared by the e2e scripts of the gpu source's library (libgrtrace-inject.so) on the fake driver
# and CUPTI of tests/inject: the environment, recording a command, reading the fake's counts.
# Sets BUILD G FIX T (= $tmp of cases.bash); ok/fail/check as in cases.bash, fail with a detail.

. tests/e2e/lib/cases.bash
BUILD=${1:-build}
G=$BUILD/grtrace
FIX=$BUILD/fixtures/inject
T=$tmp

fail() {
	echo "FAIL - $1${2:+ ($2)}"
	failed=1
}

export LD_LIBRARY_PATH=$PWD/$FIX GRTRACE_CACHE_DIR=$T/cache GRTRACE_INJECT_LIB=$PWD/$BUILD/libgrtrace-inject.so
export GRTRACE_CUPTI_PATH=$PWD/$FIX/cupti/libcupti.so.13
unset CUDA_INJECTION64_PATH GRTRACE_GPU_PROBES GRTRACE_GPU_CUPTI GRTRACE_GPU_KERNELS
if ldd "$BUILD/libgrtrace-inject.so" | grep -q libasan; then
	# a sanitized library preloaded ahead of the sanitizer runtime; its state lives until exit by design
	export ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0
fi

# record NAME SOURCES [ENV=V...] -- CMD ARGS: records CMD with `-s SOURCES` into $T/NAME.grt; its
# stdout in $T/NAME.out, stderr (the recorder's too) in $T/NAME.err, the fake driver's counts in
# $T/NAME.fake
record() {
	local name=$1 sources=$2 envs=()
	shift 2
	while [ "$1" != "--" ]; do envs+=("$1"); shift; done
	shift
	env ${envs[@]+"${envs[@]}"} FAKE_CUDA_REPORT="$T/$name.fake" \
		timeout 120 "$G" record -f -s "$sources" -o "$T/$name.grt" -- "$@" >"$T/$name.out" 2>"$T/$name.err"
}

# fake NAME KEY: a count the fake driver wrote at exit (summed over the processes that loaded it)
fake() { grep -o "$2=[0-9]*" "$T/$1.fake" | cut -d= -f2 | awk '{ n += $1 } END { print n + 0 }'; }
