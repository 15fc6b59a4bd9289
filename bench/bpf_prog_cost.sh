#!/bin/bash
# The BPF programs' own time per CUDA launch, record beside serve, on the fake driver (no GPU):
# the kernel's per-program run-time statistics (kernel.bpf_stats_enabled: run_time_ns and
# run_cnt of every program, read from the tracer's fdinfo) around a launch storm
# (cuda_storm), ROUNDS rounds of SECONDS each, the modes interleaved in every round:
#   record  record -s cuda -p STORM
#   serve-p serve -p STORM
#   serve-a serve system-wide (other processes' calls on this machine run its programs too:
#           its number is ns per program run x the storm's runs per launch)
# Per mode: the median and spread of ns per launch (all of the tracer's programs' time over the
# storm's launches), runs per launch, and per program ns per run and its translated size.
# This leaves out the uprobe traps, which are the same for both tools and cost far more than
# the programs on a VM; the programs are what differs.
# usage: bench/bpf_prog_cost.sh BUILD [ROUNDS] [SECONDS] [MODES]   (root; MODES default
#   "record serve-p serve-a"; the sysctl is restored on exit)
set -u
BUILD=${1:?usage: bench/bpf_prog_cost.sh BUILD [ROUNDS] [SECONDS] [MODES]}
ROUNDS=${2:-5}
SECONDS_PER=${3:-2}
MODES=${4:-record serve-p serve-a}
HERE=$(cd "$(dirname "$0")" && pwd)
GRT=$BUILD/grtrace
FAKE=$BUILD/fixtures/fake/libcuda.so.1
STORM_BIN=$BUILD/fixtures/workloads/cuda_storm
TMP=$(mktemp -d)
TRACER=
STORM=
OLD_STATS=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null)
cleanup() {
	[ -n "$TRACER" ] && kill -INT "$TRACER" 2>/dev/null && wait "$TRACER" 2>/dev/null
	[ -n "$STORM" ] && kill "$STORM" 2>/dev/null && wait "$STORM" 2>/dev/null
	[ -n "$OLD_STATS" ] && sysctl -q -w kernel.bpf_stats_enabled="$OLD_STATS"
	rm -rf "$TMP"
}
trap cleanup EXIT
die() {
	echo "bpf_prog_cost: $*" >&2
	exit 1
}
[ "$(id -u)" = 0 ] || die "needs root"
[ -x "$STORM_BIN" ] || die "build first: make BUILD=$BUILD"
. "$HERE/../tests/e2e/lib/bpf_links.bash" || die "no tests/e2e/lib/bpf_links.bash beside bench/"
sysctl -q -w kernel.bpf_stats_enabled=1 || die "cannot enable kernel.bpf_stats_enabled"

# prog_names: "prog_id name xlated_insns" of every loaded program (bpftool; none without it)
prog_names() {
	bpftool prog show -j 2>/dev/null | python3 -c 'import json, sys
for p in json.load(sys.stdin):
    print(p["id"], p.get("name", "?"), p.get("bytes_xlated", 0) // 8)' 2>/dev/null
}

# one MODE ROUND: a storm under the mode's tracer; appends to $TMP/runs. The traced process is a
# shell that runs the storm once told to and then waits to be told again, so that a tracer that
# ends with its target (record -p) is still there to be read after the storm.
one() {
	local mode=$1 round=$2 args
	rm -f "$TMP/gate" "$TMP/storm.out"
	mkfifo "$TMP/gate"
	bash -c 'read -r _ <"$1"; "$2" "$3" 1 >"$4.part" && mv "$4.part" "$4"; read -r _ <"$1"' \
		_ "$TMP/gate" "$STORM_BIN" "$SECONDS_PER" "$TMP/storm.out" &
	STORM=$!
	case $mode in
	record) args=(record -s cuda -f -o "$TMP/r.grt" --libcuda "$FAKE" -p $STORM) ;;
	serve-p) args=(serve --listen 127.0.0.1:0 --libcuda "$FAKE" -p $STORM) ;;
	serve-a) args=(serve --listen 127.0.0.1:0 --libcuda "$FAKE") ;;
	*) die "unknown mode $mode" ;;
	esac
	"$GRT" "${args[@]}" >/dev/null 2>"$TMP/tracer.err" &
	TRACER=$!
	wait_bpf_links $TRACER "^link_type:" 1 600 || die "$mode did not attach: $(cat "$TMP/tracer.err")"
	bpf_prog_times $TRACER | sort >"$TMP/before"
	echo go >"$TMP/gate"
	while ! [ -e "$TMP/storm.out" ]; do
		kill -0 $STORM 2>/dev/null || die "the storm failed under $mode"
		sleep 0.1
	done
	bpf_prog_times $TRACER | sort >"$TMP/after"
	prog_names >>"$TMP/names"
	echo go >"$TMP/gate"
	wait $STORM
	STORM=
	kill -INT $TRACER 2>/dev/null
	wait $TRACER
	TRACER=
	launches=$(sed -n 's/^launches \([0-9]*\) .*/\1/p' "$TMP/storm.out")
	join "$TMP/before" "$TMP/after" | while read -r id _ t0 c0 _ t1 c1; do
		echo "$mode $round $launches $id $((t1 - t0)) $((c1 - c0))"
	done >>"$TMP/runs"
}

echo "machine: $(nproc) CPUs, $(uname -r); fake libcuda; $ROUNDS rounds of $SECONDS_PER s, modes interleaved"
for r in $(seq "$ROUNDS"); do
	for m in $MODES; do
		one "$m" "$r"
	done
done
touch "$TMP/names"
python3 - "$TMP/runs" "$TMP/names" "$MODES" <<'PY'
import collections, statistics, sys
runs, names, modes = sys.argv[1], sys.argv[2], sys.argv[3].split()
name = {}
for line in open(names):
    pid, n, insns = line.split()
    name[pid] = (n, int(insns))
# per mode and round: launches, and per program (ns, runs)
rounds = collections.defaultdict(dict)
for line in open(runs):
    mode, rnd, launches, pid, ns, cnt = line.split()
    rounds[(mode, rnd)].setdefault("launches", int(launches))
    rounds[(mode, rnd)][pid] = (int(ns), int(cnt))
per_launch = collections.defaultdict(list)
runs_per_launch = collections.defaultdict(list)
per_run = collections.defaultdict(lambda: collections.defaultdict(list))
for (mode, rnd), progs in rounds.items():
    launches = progs.pop("launches")
    ns = sum(v[0] for v in progs.values())
    cnt = sum(v[1] for v in progs.values())
    if not launches or not cnt:
        continue
    if mode == "serve-a":
        # other processes' calls run these programs too: ns per run x the storm's runs per
        # launch as -p measured them (2: an entry and a return)
        per_launch[mode].append(ns / cnt * 2)
    else:
        per_launch[mode].append(ns / launches)
    runs_per_launch[mode].append(cnt / launches)
    for pid, (pns, pcnt) in progs.items():
        if pcnt:
            per_run[mode][pid].append(pns / pcnt)
med = {}
for mode in modes:
    v = per_launch[mode]
    if not v:
        print("%-7s no runs" % mode)
        continue
    med[mode] = statistics.median(v)
    print("%-7s BPF ns per launch: median %.0f, spread %.0f..%.0f over %d rounds; %.2f program runs per launch"
          % (mode, med[mode], min(v), max(v), len(v), statistics.median(runs_per_launch[mode])))
    for pid, vals in sorted(per_run[mode].items(), key=lambda kv: -statistics.median(kv[1])):
        n, insns = name.get(pid, ("?", 0))
        print("        %-16s %6.0f ns per run (median), %5d instructions translated"
              % (n, statistics.median(vals), insns))
for mode in ("serve-p", "serve-a"):
    if mode in med and "record" in med:
        ok = med[mode] <= med["record"]
        print("%s - %s's BPF ns per launch <= record's (%.0f vs %.0f)"
              % ("ok" if ok else "NOT MET", mode, med[mode], med["record"]))
PY
