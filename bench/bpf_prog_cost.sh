#!/bin/bash
# The BPF programs' own time per CUDA launch, record beside serve, on the fake driver (no GPU):
# the kernel's per-program run-time statistics (kernel.bpf_stats_enabled: run_time_ns and
# run_cnt of every program, read from the tracer's fdinfo) around a launch storm
# (cuda_storm), ROUNDS rounds of SECONDS each, the modes interleaved in every round:
#   record  record -s cuda -p STORM
#   serve-p serve -p STORM
#   serve-a serve system-wide (other processes' calls on this machine run its programs too:
#           its number is, over the programs that run per launch, ns per run x runs per launch
#           as serve-p measured them; it needs serve-p in MODES)
# Per mode: the median and spread of ns per launch (all of the tracer's programs' time over the
# storm's launches), runs per launch, and per program ns per run and its translated size.
# This leaves out the uprobe traps, which are the same for both tools and cost far more than
# the programs on a VM; the programs are what differs.
# usage: bench/bpf_prog_cost.sh BUILD [ROUNDS] [SECONDS] [MODES]   (root; MODES default
#   "record serve-p serve-a"; the sysctl is restored on exit)
# GRT_BEFORE=PATH (another grtrace binary, e.g. of the commit before a change): the modes
#   serve-p-before and serve-a-before run it, interleaved with the rest (MODES default then
#   "record serve-p serve-p-before serve-a serve-a-before").
set -u
BUILD=${1:?usage: bench/bpf_prog_cost.sh BUILD [ROUNDS] [SECONDS] [MODES]}
ROUNDS=${2:-5}
SECONDS_PER=${3:-2}
BEFORE=${GRT_BEFORE:-}
if [ -n "$BEFORE" ]; then
	MODES=${4:-record serve-p serve-p-before serve-a serve-a-before}
else
	MODES=${4:-record serve-p serve-a}
fi
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
	local mode=$1 round=$2 args grt=$GRT
	rm -f "$TMP/gate" "$TMP/storm.out"
	mkfifo "$TMP/gate"
	bash -c 'read -r _ <"$1"; "$2" "$3" 1 >"$4.part" && mv "$4.part" "$4"; read -r _ <"$1"' \
		_ "$TMP/gate" "$STORM_BIN" "$SECONDS_PER" "$TMP/storm.out" &
	STORM=$!
	if [[ $mode == *-before ]]; then
		[ -x "$BEFORE" ] || die "mode $mode needs GRT_BEFORE=PATH to a grtrace binary"
		grt=$BEFORE
	fi
	case ${mode%-before} in
	record) args=(record -s cuda -f -o "$TMP/r.grt" --libcuda "$FAKE" -p $STORM) ;;
	serve-p) args=(serve --listen 127.0.0.1:0 --libcuda "$FAKE" -p $STORM) ;;
	serve-a) args=(serve --listen 127.0.0.1:0 --libcuda "$FAKE") ;;
	*) die "unknown mode $mode" ;;
	esac
	"$grt" "${args[@]}" >/dev/null 2>"$TMP/tracer.err" &
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
# per mode and round: the storm's launches, and per program name (ns, runs)
rounds = collections.defaultdict(lambda: collections.defaultdict(lambda: [0, 0]))
launches_of = {}
insns = {}
for line in open(runs):
    mode, rnd, launches, pid, ns, cnt = line.split()
    launches_of[(mode, rnd)] = int(launches)
    pname, pinsns = name.get(pid, ("id " + pid, 0))
    insns[(mode, pname)] = pinsns
    prog = rounds[(mode, rnd)][pname]
    prog[0] += int(ns)
    prog[1] += int(cnt)
# per mode and program: ns per run and runs per launch, one value per round
per_run = collections.defaultdict(lambda: collections.defaultdict(list))
weight = collections.defaultdict(lambda: collections.defaultdict(list))
for (mode, rnd), progs in rounds.items():
    for prog, (ns, cnt) in progs.items():
        if cnt and launches_of[(mode, rnd)]:
            per_run[mode][prog].append(ns / cnt)
            weight[mode][prog].append(cnt / launches_of[(mode, rnd)])
per_launch = collections.defaultdict(list)
for (mode, rnd), progs in rounds.items():
    launches = launches_of[(mode, rnd)]
    if not launches:
        continue
    if mode.startswith("serve-a"):
        # other processes' calls run these programs too: each per-launch program's ns per run
        # weighted by its runs per launch under -p (the same programs, only the storm's calls)
        pmode = mode.replace("serve-a", "serve-p")
        if pmode not in weight:
            continue
        per_launch[mode].append(sum(ns / cnt * statistics.median(weight[pmode][prog])
                                    for prog, (ns, cnt) in progs.items()
                                    if cnt and statistics.median(weight[pmode].get(prog, [0])) >= 0.01))
    else:
        per_launch[mode].append(sum(ns for ns, _ in progs.values()) / launches)
med = {}
for mode in modes:
    v = per_launch[mode]
    if not v:
        print("%-14s no runs%s" % (mode, " (needs its -p mode too)" if mode.startswith("serve-a") else ""))
        continue
    med[mode] = statistics.median(v)
    print("%-14s BPF ns per launch: median %.0f, spread %.0f..%.0f over %d rounds"
          % (mode, med[mode], min(v), max(v), len(v)))
    for prog, vals in sorted(per_run[mode].items(), key=lambda kv: -statistics.median(weight[mode][kv[0]])):
        w = statistics.median(weight[mode][prog])
        if w < 0.01:
            continue  # not per launch (module loads, forks, exits)
        print("    %-24s %5.0f ns per run (median, %.0f..%.0f), %5.2f runs per launch, %4d instructions"
              % (prog, statistics.median(vals), min(vals), max(vals), w, insns.get((mode, prog), 0)))
for mode in ("serve-p", "serve-a", "serve-p-before", "serve-a-before"):
    if mode in med and "record" in med:
        ok = med[mode] <= med["record"]
        print("%s - %s's BPF ns per launch <= record's (%.0f vs %.0f)"
              % ("ok" if ok else "NOT MET", mode, med[mode], med["record"]))
PY
