#!/bin/bash
# The cuda source's status line on the real driver, on a GPU machine: the same libcuda
# status line ("N of M entry points probed, A absent, R refused (NAMES)") for a launched
# program, for the same program attached with -p, and for a launched program while another
# process maps libcuda; each run repeated to show it does not vary. Launched programs are
# recorded with --cuda-via uprobe (the in-process path probes no entry point).
#
# usage: bench/gpu_cuda_refused.sh BUILD [RUNS]
#   BUILD   directory with the grtrace binary (built on the development machine)
#   RUNS    recordings per case (default 5)
# Needs root, python3 with torch (CUDA) or nvidia-smi's libcuda users; prints each status line
# and exits 1 when the lines differ between runs or cases, or a refused count has no names.
set -u
BUILD=${1:?usage: bench/gpu_cuda_refused.sh BUILD [RUNS]}
RUNS=${2:-5}
GRT=$BUILD/grtrace
T=$(mktemp -d)
trap 'kill $holder 2>/dev/null; rm -rf "$T"' EXIT
APP=(python3 -c 'import torch, time, sys; x = torch.ones(1, device="cuda"); print("ready", flush=True); sys.stdin.read(); torch.cuda.synchronize()')

status_of() { # TRACE -> the libcuda status line(s)
	"$GRT" parse --format json --filter type=source_status "$1" |
		python3 -c 'import json, sys
for line in sys.stdin:
    r = json.loads(line)
    if "entry points" in r["message"]:
        print(r["message"])'
}

run_launched() {
	"$GRT" record -f -o "$T/l.grt" --cuda-via uprobe -- "${APP[@]}" </dev/null >/dev/null 2>"$T/err" || cat "$T/err" >&2
	status_of "$T/l.grt"
}

run_attached() {
	mkfifo "$T/in" 2>/dev/null
	"${APP[@]}" <"$T/in" >"$T/ready" &
	local app=$!
	exec 8>"$T/in"
	for _ in $(seq 300); do grep -q ready "$T/ready" 2>/dev/null && break; sleep 0.1; done
	"$GRT" record -f -o "$T/p.grt" -d 2 -p $app >/dev/null 2>"$T/err" || cat "$T/err" >&2
	exec 8>&-
	wait $app
	status_of "$T/p.grt"
}

: >"$T/lines"
for i in $(seq "$RUNS"); do
	echo "launched $i: $(run_launched | tee -a "$T/lines")"
	echo "attached $i: $(run_attached | tee -a "$T/lines")"
done
# another process holding libcuda while a launched program is recorded
"${APP[@]}" < <(sleep 30) >/dev/null &
holder=$!
sleep 10
for i in $(seq "$RUNS"); do
	echo "launched, libcuda mapped elsewhere $i: $(run_launched | tee -a "$T/lines")"
done
distinct=$(sed 's/^[^:]*: //' "$T/lines" | sort -u | wc -l)
echo "distinct status lines (path left out): $distinct"
[ "$distinct" = 1 ] || exit 1
if grep -q "[1-9][0-9]* refused$" "$T/lines"; then
	echo "a refused count without names" >&2
	exit 1
fi
