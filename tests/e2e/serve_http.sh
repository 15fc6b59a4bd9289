#!/bin/bash
# grtrace serve's HTTP side: bad requests, a slow client, 100 concurrent clients, a port in use,
# bad command lines; the probes keep counting meanwhile.
BUILD=${1:-build}
. tests/e2e/lib/cuda.bash
. tests/e2e/lib/serve.bash

serve_start a --libcuda "$FAKE" -p $$ || { fail "serve starts"; exit 1; }
A=$SERVE_PORT
A_PID=$SERVE_PID
URL=http://127.0.0.1:$A

code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
check "/healthz answers ok" [ "$(curl -s $URL/healthz)" = "ok" ]
check "unknown path: 404" [ "$(code $URL/nope)" = 404 ]
check "POST: 405 with Allow" bash -c "curl -s -D - -o /dev/null -X POST $URL/metrics | grep -qi '^Allow: GET, HEAD'"
check "HEAD /metrics: 200" [ "$(code -I $URL/metrics)" = 200 ]
check "a GET with a body is answered" [ "$(code -X GET --data-binary 'x=1' $URL/metrics)" = 200 ]
bad_request() { # KIND: answered with a 4xx status, or the connection closed; never a crash
	local got
	got=$($PROMPY raw 127.0.0.1 "$A" "$1")
	case "$got" in "HTTP/1."?" 4"*|closed) return 0 ;; esac
	echo "got: $got" >&2
	return 1
}
check "a request that is not HTTP is refused" bad_request junk
check "a 200 KB header is refused" bad_request huge-header
check "... and the server still answers" [ "$(code $URL/metrics)" = 200 ]

# a client that never finishes its request holds one connection, not the server
$PROMPY slow-client 127.0.0.1 "$A" 4 &
SLOW=$!
sleep 0.5
start=$(date +%s%N)
check "a scrape beside a stuck client answers" [ "$(code --max-time 3 $URL/metrics)" = 200 ]
check "... within 2 s" [ $((($(date +%s%N) - start) / 1000000)) -lt 2000 ]
# 100 clients at once while a workload runs: every one answered, every call counted
"$WL/cuda_storm" 2 1 5000 >"$tmp/storm.out" &
STORM=$!
check "100 concurrent scrapes all answered" [ "$($PROMPY clients $URL/metrics 100)" = 100 ]
wait $STORM
wait $SLOW
launches=$(sed -n 's/^launches \([0-9]*\) .*/\1/p' "$tmp/storm.out")
check "the storm's $launches launches all counted meanwhile" \
	bash -c "for i in \$(seq 40); do curl -s $URL/metrics | grep -q 'grtrace_cuda_launches_total{pid=\"$STORM\",comm=\"cuda_storm\",kernel=\"storm\"} $launches\$' && exit 0; sleep 0.25; done; exit 1"
check "/healthz still ok" [ "$(curl -s $URL/healthz)" = "ok" ]
check "the agent is still running" kill -0 "$A_PID"

# a second agent on the same port: one line, exit 1
"$GRT" serve --listen 127.0.0.1:$A --libcuda "$FAKE" 2>"$tmp/busy.err"
rc=$?
check "port in use: exit 1" [ $rc = 1 ]
check "port in use: one line naming the fix" \
	bash -c "[ \$(wc -l <'$tmp/busy.err') = 1 ] && grep -q \"^grtrace: serve: 127.0.0.1:$A is in use (another agent?); pick a free port with --listen\" '$tmp/busy.err'"

usage() { # NAME WANT-RC PATTERN ARGS...
	local name=$1 want=$2 pattern=$3
	shift 3
	"$GRT" serve "$@" >/dev/null 2>"$tmp/u.err"
	local rc=$?
	if [ $rc = "$want" ] && grep -q -- "$pattern" "$tmp/u.err" && [ "$(grep -c '^grtrace' "$tmp/u.err")" = 1 ]; then
		ok "$name"
	else
		fail "$name: rc $rc, $(head -c 300 "$tmp/u.err")"
	fi
}
usage "bad --listen" 2 "^grtrace: serve: bad --listen 'nope': give HOST:PORT" --listen nope
usage "port out of range" 2 "bad --listen '127.0.0.1:70000'" --listen 127.0.0.1:70000
usage "address not numeric" 1 "bad --listen address 'localhost'" --listen localhost:0
usage "bad -p" 2 "serve: -p needs a process id, not 'x'" -p x
usage "no such process" 1 "serve: no process 999999999" -p 999999999
usage "bad --kernel-labels" 2 "kernel-labels needs a count" --kernel-labels -1
usage "bad --idle-timeout" 2 "idle-timeout needs seconds" --idle-timeout soon
usage "unserved source" 2 "serve: source 'fence' is not served (give -s with cuda, pcie, uvm, xid)" -s fence
if ! [ -d /sys/kernel/tracing/events/nvidia ]; then
	usage "-s xid without the NVIDIA driver" 1 "serve: xid: source xid unavailable: no nvidia:nvidia_dev_xid tracepoint" -s xid --listen 127.0.0.1:0
fi
if ! [ -e /dev/nvidia-uvm-tools ]; then
	usage "-s uvm without the NVIDIA driver" 1 "^grtrace: serve: uvm: no /dev/nvidia-uvm-tools: NVIDIA UVM driver not loaded (modprobe nvidia-uvm)" -s uvm --listen 127.0.0.1:0
fi
GRTRACE_UVM_REPLAY=tests/data/uvm/README.md usage "a UVM replay that is no capture" 1 \
	"^grtrace: serve: uvm: tests/data/uvm/README.md is not a UVM queue capture" -s uvm --listen 127.0.0.1:0
# NVML is loaded into the agent (root): only a file nobody but root can have changed
mkdir -p "$tmp/open" && chmod 777 "$tmp/open" && cp "$BUILD/fixtures/libnvidia-ml.so.1" "$tmp/open/"
GRTRACE_NVML_LIBRARY=$tmp/open/libnvidia-ml.so.1 usage "NVML in a directory anyone can write is refused" 1 \
	"^grtrace: serve: refusing to load NVML: $tmp/open is writable by everyone" -s pcie --listen 127.0.0.1:0
GRTRACE_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 usage "NVML missing" 1 \
	"^grtrace: serve: /nonexistent/libnvidia-ml.so.1: No such file or directory" -s pcie --listen 127.0.0.1:0
usage "unreadable --libcuda" 1 "serve: cannot read --libcuda /nonexistent" --libcuda /nonexistent
usage "stray argument" 2 "unexpected argument 'extra'" extra
# 512 allocations from 512 stacks, none freed: the leak's largest allocation is named with its
# own stack, the right-hand call site at every level (a stack map of 4,096 buckets, as before,
# gave several of these stacks no id). The workload stays alive until the agent shows it, so its
# mappings were read while it ran.
"$WL/cuda_stack_sites" leak "$tmp/leak.go" &
XPID=$!
for _ in $(seq 300); do curl -s $URL/metrics | grep -q "pid=\"$XPID\"" && break; sleep 0.1; done
touch "$tmp/leak.go"
wait $XPID
check "leaking workload ran" [ $? = 0 ]
leak_line() { # PID: the agent's exit line for it, waited for up to 30 s on a loaded machine
	for _ in $(seq 300); do grep -q "pid $1 (cuda_stack_site) exited" "$tmp/a.err" && break; sleep 0.1; done
	grep "pid $1 " "$tmp/a.err" | tail -1 | cut -c1-400
}
check "its leak: 512 allocations, the largest allocated through right() at each level ($(leak_line $XPID))" \
	grep -q "pid $XPID (cuda_stack_site) exited with 2227968 bytes of CUDA memory in 512 allocations not freed; the largest, 4607 bytes, allocated at cuMemAlloc_v2+0x[0-9a-f]* (.*) <- descend+0x[0-9a-f]* (.*cuda_stack_sites) <- right+0x[0-9a-f]* (.*cuda_stack_sites) <- descend+0x[0-9a-f]* (.*cuda_stack_sites) <- right+0x[0-9a-f]* (.*cuda_stack_sites) <- descend.*cuda_stack_sites)$" "$tmp/a.err"
# the same leak from a process gone before the agent read anything of it (the agent stopped
# meanwhile): the frames stay addresses, and the line says why instead of passing them off
kill -STOP "$A_PID"
"$WL/cuda_stack_sites" leak &
XPID=$!
wait $XPID
kill -CONT "$A_PID"
check "a leak whose process exited unseen: bare addresses, saying why ($(leak_line $XPID))" \
	grep -q "pid $XPID (cuda_stack_site) exited with 2227968 bytes of CUDA memory in 512 allocations not freed; the largest, 4607 bytes, allocated at 0x[0-9a-f]* <- 0x[0-9a-f]* <- .* (not symbolized: the process exited before the agent could read its mappings)$" "$tmp/a.err"
check "serve stops on SIGINT with status 0" serve_stop "$A_PID"
exit $failed
