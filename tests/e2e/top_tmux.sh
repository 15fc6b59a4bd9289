#!/bin/bash
# grtrace top as a person uses it: in a terminal (tmux), reading the screen with capture-pane,
# changing the sort with a key, quitting with q; and --batch for pipes.
BUILD=${1:-build}
. tests/e2e/lib/cuda.bash

command -v tmux >/dev/null || { fail "missing tmux (make deps)"; exit 1; }
# CI has no terminal: tmux needs a TERM it knows to start its server at all
case "${TERM:-dumb}" in dumb | unknown) export TERM=xterm ;; esac
S=grt_top_$$
# a server of our own: nothing of the user's tmux is touched, and it ends with the session
tmux() { command tmux -L "$S" "$@"; }
screen() { tmux capture-pane -p -t "$S"; }
# until_screen PATTERN TRIES: the screen shows PATTERN (tenths of a second)
until_screen() {
	for _ in $(seq "$2"); do
		screen | grep -q -- "$1" && return 0
		sleep 0.1
	done
	screen >"$tmp/last_screen"
	return 1
}
tmux_cleanup() {
	tmux kill-session -t "$S" 2>/dev/null
	cleanup
}
trap tmux_cleanup EXIT

# a workload that launches at a known pace, held until top is up
mkfifo "$tmp/gate"
WORKLOAD_GATE="$tmp/gate" "$WL/cuda_storm" 8 1 2000 >"$tmp/storm.out" &
STORM=$!
# UVM faults from the H100 queue capture (no driver here): 1455 at the first tick after binding
tmux new-session -d -s "$S" -x 150 -y 30 \
	"GRTRACE_UVM_REPLAY=$PWD/tests/data/uvm/v2.bin $GRT top -s cuda,uvm -p $STORM --libcuda $FAKE; sleep 30"
check "top draws its header" until_screen "PID COMMAND *LAUNCH/s *API_P50 *API_P99 *DEV_MEM *COPY_GB/s *SYNC% *UVM_FLT/s *BUSIEST KERNEL" 300
check "the title names the sort" until_screen "sort: launches/s" 10
check "the workload opened its gate" open_gate "$tmp/gate"
check "a row for the workload with its busiest kernel" until_screen "^ *$STORM cuda_storm .* storm *\$" 100
rate=$(screen | sed -n "s/^ *$STORM cuda_storm *\([0-9]*\) .*/\1/p")
check "launches/s near the workload's pace of 2000 (got $rate)" test "${rate:-0}" -ge 1500 -a "${rate:-0}" -le 2500
check "API percentiles shown in microseconds" until_screen "^ *$STORM cuda_storm *[0-9]* *[0-9.]*us *[0-9.]*us " 20
check "UVM faults/s shown for the process with a tracker" until_screen "^ *$STORM cuda_storm .* [0-9][0-9]*  storm *\$" 20
tmux send-keys -t "$S" u
check "'u' sorts by UVM faults/s" until_screen "sort: UVM faults/s" 20
tmux send-keys -t "$S" m
check "'m' sorts by device memory" until_screen "sort: device memory" 20
tmux send-keys -t "$S" p
check "'p' sorts by API p99" until_screen "sort: API p99" 20
tmux send-keys -t "$S" q
check "'q' quits (the shell's sleep is what is left)" \
	bash -c "for i in \$(seq 50); do tmux -L $S list-panes -t $S -F '#{pane_current_command}' | grep -q sleep && exit 0; sleep 0.1; done; exit 1"
wait $STORM

# --batch: plain snapshots, one title each, no terminal needed
WORKLOAD_GATE="$tmp/gate" "$WL/cuda_storm" 6 1 1000 >/dev/null &
STORM=$!
(sleep 3; open_gate "$tmp/gate") &
"$GRT" top --batch 3 -p $STORM --libcuda "$FAKE" --interval 1 >"$tmp/batch.out" 2>"$tmp/batch.err" </dev/null
check "--batch 3 exits 0" [ $? = 0 ]
check "--batch 3 prints three snapshots" [ "$(grep -c '^grtrace top - ' "$tmp/batch.out")" = 3 ]
check "--batch: each with the column titles" [ "$(grep -c '^ *PID COMMAND' "$tmp/batch.out")" = 3 ]
rows=$(grep -c "^ *$STORM cuda_storm " "$tmp/batch.out")
check "--batch without -s uvm: '-' in the UVM faults column of each of the $rows rows" \
	[ "$rows" -ge 1 -a "$(grep -c "^ *$STORM cuda_storm .* -  [a-z-]* *\$" "$tmp/batch.out")" = "$rows" ]
kill $STORM 2>/dev/null
wait $STORM 2>/dev/null
"$GRT" top </dev/null >/dev/null 2>"$tmp/tty.err"
check "top without a terminal: exit 2" [ $? = 2 ]
check "... with one line saying to use --batch" grep -q "^grtrace: top: not a terminal; use --batch N for plain snapshots$" "$tmp/tty.err"
"$GRT" top --batch 0 2>"$tmp/b0.err"
check "--batch 0 is a usage error" [ $? = 2 ]
exit $failed
