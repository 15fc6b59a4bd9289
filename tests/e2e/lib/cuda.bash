# Shared by tests/e2e/cuda_*.sh (sourced): paths, starting and stopping grtrace, and (from
# cases.bash) the scratch directory $tmp and the ok/FAIL lines.
# The caller sets BUILD (the build directory) before sourcing.

. tests/e2e/lib/bpf_links.bash
. tests/e2e/lib/cases.bash

GRT=$BUILD/grtrace
FAKE=$BUILD/fixtures/fake/libcuda.so.1
FAKE_COPY=$BUILD/fixtures/fake2/libcuda.so.1
WL=$BUILD/fixtures/workloads
EXPECT="python3 tests/e2e/lib/cuda_expect.py"
# a launched command records in-process by default: the library is preloaded into the workloads,
# and a sanitized library comes ahead of its sanitizer runtime (as in lib/inject.bash)
if ldd "$BUILD/libgrtrace-inject.so" 2>/dev/null | grep -q libasan; then
	export ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0
fi
GRT_BG=

cleanup() {
	[ -n "$GRT_BG" ] && kill -INT "$GRT_BG" 2>/dev/null && wait "$GRT_BG" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

if [ "$(id -u)" != 0 ]; then
	fail "cuda tests need root (BPF uprobes)"
	exit 1
fi
for f in "$GRT" "$FAKE" "$WL/cuda_known"; do
	[ -x "$f" ] || [ -f "$f" ] || { fail "missing $f (make BUILD=$BUILD)"; exit 1; }
done

# grt_start OUT ERR ARGS...: runs grtrace ARGS in the background, waits until it
# says it is tracing (its notice on stderr); fails after 20 s.
grt_start() {
	local out=$1 err=$2
	shift 2
	: >"$err" # before the start: a notice left from an earlier run must not count
	"$GRT" "$@" >"$out" 2>"$err" &
	GRT_BG=$!
	for _ in $(seq 200); do
		grep -q "snooping\|recording" "$err" 2>/dev/null && return 0
		kill -0 "$GRT_BG" 2>/dev/null || break
		sleep 0.1
	done
	echo "grtrace did not start: $(cat "$err")" >&2
	return 1
}

# grt_stop: SIGINT, then waits for the final drain; returns grtrace's status.
grt_stop() {
	local rc
	kill -INT "$GRT_BG" 2>/dev/null
	wait "$GRT_BG"
	rc=$?
	GRT_BG=
	return $rc
}

# grt_wait: waits for grtrace to end by itself (duration, target exit); 30 s at most.
grt_wait() {
	local rc
	for _ in $(seq 300); do
		kill -0 "$GRT_BG" 2>/dev/null || break
		sleep 0.1
	done
	wait "$GRT_BG"
	rc=$?
	GRT_BG=
	return $rc
}

# pid_of_launched TRACE-JSONL: the pid of the launched command (its process start record).
pid_of_launched() {
	python3 -c '
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["type"] == "process" and r["event"] == "start":
        print(r["pid"]); break' "$1"
}

# wait_probes PID: until process PID holds uprobe links (uprobe_multi, or one perf_event link
# per probe on kernels before 6.6) and their number has stopped growing for 0.5 s (they are
# created class by class); 60 s at most.
wait_probes() {
	wait_bpf_links "$1" "^link_type:.*\(uprobe_multi\|perf_event\)" 0 600
}

# small_ring_loses ENV WHAT VIA: cuda_storm (one thread) recorded --cuda-via VIA with the ring
# that ENV sizes at 4 KiB: status 0, some WHAT lost, recorded + lost = launches made, and record
# says so; leaves $lost and $tmp/x.grt for the caller's own checks. VIA is named, never left to
# the default: ENV sizes the ring of one way only, and the other way's larger ring may keep up.
small_ring_loses() {
	local made recorded
	env "$1=4" "$GRT" record -f -o "$tmp/x.grt" --cuda-via "$3" --libcuda "$FAKE" -- \
		"$WL/cuda_storm" 1 1 \
		>"$tmp/out" 2>"$tmp/err"
	check "record with a 4 KiB ring ($1): status 0" [ $? = 0 ]
	made=$(awk '/^launches/ { print $2 }' "$tmp/out")
	"$GRT" report "$tmp/x.grt" --kernels --drops --format json >"$tmp/x.json"
	read -r recorded lost < <(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(sum(k["launches"] for k in r["kernels"]), r["drops"]["lost"])' "$tmp/x.json")
	check "... $2 were lost ($lost of $made)" [ "${lost:-0}" -gt 0 ]
	check "... recorded + lost = launches made ($recorded + $lost = $made)" \
		[ $((recorded + lost)) = "$made" ]
	check "... record reports the loss" grep -q "($lost events lost)" "$tmp/err"
}

# one_refused JSONL: the fake libcuda's status line, one per trace, says exactly that its one
# entry point uprobes cannot take (cuMemcpyPeer_ptds, a lock-prefixed first instruction) was
# refused and names it, everything else present probed: the same for a launched command and
# for a process already running.
one_refused() {
	python3 -c '
import json, re, sys
lines = [r["message"] for r in map(json.loads, open(sys.argv[1]))
         if r["type"] == "source_status" and "entry points" in r["message"]]
assert len(lines) == 1, lines
m = re.fullmatch(r".*/fake/libcuda\.so\.1: (\d+) of (\d+) entry points probed, 0 absent, "
                 r"1 refused \(cuMemcpyPeer_ptds\)", lines[0])
assert m and int(m[1]) == int(m[2]) - 1, lines[0]' "$1"
}
