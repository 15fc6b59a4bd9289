#!/bin/bash
# The in-process paths' shared memory on a small /dev/shm (a container's is often 64 MiB): the
# traced program is never killed by SIGBUS for a ring page that found no room, calls that found
# none are counted lost and the trace says why, and the gpu source's ring fits what is free.
# Each case runs in its own mount namespace with a tmpfs of the given size on /dev/shm.
BUILD=${1:-build}
. tests/e2e/lib/cuda.bash
INJ=$(realpath "$BUILD/fixtures/inject")

# in_shm SIZE CMD...: CMD with a SIZE tmpfs (mount's size=) on /dev/shm
in_shm() {
	unshare -m sh -c 'mount -t tmpfs -o size="$0" tmpfs /dev/shm && exec "$@"' "$@"
}
in_shm 1m true || { fail "unshare -m and mount -t tmpfs are needed"; exit 1; }

# storm NAME SIZE [ENV=V...]: records 1 s of cuda_storm (its main thread makes 2 calls, one
# other thread the launches) with a SIZE /dev/shm; sets $launches (what the workload made) and
# $lost (what record said it lost)
storm() {
	local name=$1 size=$2
	shift 2
	in_shm "$size" env "$@" "$GRT" record -f -s cuda --libcuda "$FAKE" -o "$tmp/$name.grt" -- \
		"$WL/cuda_storm" 1 1 50000 >"$tmp/$name.out" 2>"$tmp/$name.err"
	check "$name: record status 0, the workload not killed" \
		[ $? = 0 -a "$(grep -c 'killed by' "$tmp/$name.err")" = 0 ]
	launches=$(sed -n 's/^launches \([0-9]*\) .*/\1/p' "$tmp/$name.out")
	lost=$(sed -n 's/.*(\([0-9]*\) events lost).*/\1/p' "$tmp/$name.err")
	"$GRT" parse --format json "$tmp/$name.grt" >"$tmp/$name.json"
}
# count NAME TYPE: records of TYPE in NAME's trace
count() { grep -c "\"type\":\"$2\"" "$tmp/$1.json"; }
said() { grep -F -q "$2" "$tmp/$1.json"; }

# no room for either thread's 4 MiB ring: every call lost and said, the workload runs on
# (before the rings' pages were taken at the claim, its first write past the room was SIGBUS)
for how in "" no-margin fallocate,no-margin; do
	name=none${how:+-$how}
	storm "$name" 300k ${how:+GRTRACE_INJECT_RING_PAGES=$how}
	check "$name: the workload ran ($launches launches)" [ "${launches:-0}" -gt 1000 ]
	check "$name: every call counted lost ($lost = $launches + the main thread's 2)" \
		[ "$lost" = $((launches + 2)) ]
	check "$name: no launch recorded" [ "$(count "$name" launch)" = 0 ]
	check "$name: the trace says why" \
		said "$name" "$((launches + 2)) CUDA calls lost: /dev/shm had no room for the rings of 2 thread(s), 4096 KiB each"
done

# room for one ring and no second that would leave less than a ring free: the main thread's
# calls are recorded, the launching thread's counted lost
storm one 10m
check "one: the main thread's module load and function recorded" \
	[ "$(count one module_load)" = 1 -a "$(count one func_name)" = 1 ]
check "one: the other thread's $launches launches lost" [ "$lost" = "$launches" ]
check "one: the trace says 1 thread" said one "CUDA calls lost: /dev/shm had no room for the rings of 1 thread(s)"

# room enough: nothing lost, both ways of taking the pages
for how in "" fallocate; do
	name=room${how:+-$how}
	storm "$name" 20m ${how:+GRTRACE_INJECT_RING_PAGES=$how}
	check "$name: $launches launches recorded, none lost" \
		[ "$(count "$name" launch)" = "$launches" -a "${lost:-x}" = 0 ]
done

# the gpu source's ring: taken whole when it is made, so a ring that cannot fit is refused at
# the start, in one line
export LD_LIBRARY_PATH=$INJ GRTRACE_CUPTI_PATH=$INJ/cupti/libcupti.so.13 \
	GRTRACE_CACHE_DIR=$tmp/cache GRTRACE_INJECT_LIB=$(realpath "$BUILD/libgrtrace-inject.so")
unset CUDA_INJECTION64_PATH
in_shm 512k env GRTRACE_GPU_RING_MB=1 "$GRT" record -f -s gpu -o "$tmp/gpu1.grt" -- "$INJ/app" 20 \
	>"$tmp/gpu1.out" 2>"$tmp/gpu1.err"
check "gpu, a 1 MiB ring asked for in 512 KiB: status 1" [ $? = 1 ]
check "... one line naming the room" [ "$(wc -l <"$tmp/gpu1.err")" = 1 ] &&
	grep -q "source gpu: /dev/shm has no room for its 1 MiB ring (0.5 MiB free): set GRTRACE_GPU_RING_MB lower" "$tmp/gpu1.err"
check "... the command not started" [ ! -s "$tmp/gpu1.out" ]

# unasked, the ring is sized to half the room: 16 MiB of 40 free (64 by default), said
in_shm 40m "$GRT" record -f -s gpu -o "$tmp/gpu16.grt" -- "$INJ/app" 20 >"$tmp/gpu16.out" 2>"$tmp/gpu16.err"
check "gpu in 40 MiB: status 0, the command exited normally" \
	[ $? = 0 -a "$(grep -c 'killed by' "$tmp/gpu16.err")" = 0 ]
msg="gpu: a 16 MiB ring, not 64: /dev/shm had 40.0 MiB free (GRTRACE_GPU_RING_MB sets it)"
check "... the terminal told" grep -qF "$msg" "$tmp/gpu16.err"
"$GRT" parse --format json "$tmp/gpu16.grt" >"$tmp/gpu16.json"
check "... and the trace" said gpu16 "$msg"
"$GRT" record -f -s gpu -o "$tmp/gpu64.grt" -- "$INJ/app" 20 >"$tmp/gpu64.out" 2>"$tmp/gpu64.err"
"$GRT" parse --format json "$tmp/gpu64.grt" >"$tmp/gpu64.json"
check "... every launch timed, as with the whole /dev/shm ($(count gpu64 gpu_launch))" \
	[ "$(count gpu16 gpu_launch)" = "$(count gpu64 gpu_launch)" -a "$(count gpu64 gpu_launch)" -gt 20 ]
exit $failed
