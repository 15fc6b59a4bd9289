#!/bin/bash
# The kernel and uvm snoop views: exact live lines for a known workload, clear errors, flag checks.
set -u
BUILD=${1:-build}
G=$BUILD/grtrace
T=$(mktemp -d)
trap 'rm -rf "$T"; exec 3>&- 2>/dev/null' EXIT
fails=0
pass() { echo "ok - $1"; }
fail() { echo "FAIL - $1"; fails=$((fails + 1)); }

# 41 getppid calls, released only once snoop is attached (a fifo as the start barrier)
mkfifo "$T/go"
"$BUILD/fixtures/kernel_workload" --wait-stdin getppid:41 <"$T/go" &
wl=$!
exec 3>"$T/go"
$G snoop syscall -p $wl --duration 20 >"$T/out" 2>"$T/err" &
sn=$!
for _ in $(seq 100); do grep -q "snooping syscall" "$T/err" && break; sleep 0.1; done
echo x >&3
exec 3>&-
wait $wl
wait $sn
rc=$?
n=$(grep -c ' getppid(' "$T/out")
[ $rc -eq 0 ] && [ "$n" -eq 41 ] && pass "snoop syscall: 41 getppid lines" ||
	fail "snoop syscall: rc=$rc, $n getppid lines (want 41)"
want="time_s         pid/tid         call = return  duration"
[ "$(head -1 "$T/out")" = "$want" ] && pass "snoop syscall: its own header, exactly" ||
	fail "snoop syscall: header: $(head -1 "$T/out")"
# durations in the one snoop style: microseconds, "N.N us" (as snoop cuda shows them)
n=$(grep -cE ' getppid\(.*\) = [0-9]+  [0-9]+\.[0-9] us$' "$T/out")
[ "$n" -eq 41 ] && pass "snoop syscall: 41 durations as N.N us" ||
	fail "snoop syscall: $n durations as N.N us: $(grep -m1 ' getppid(' "$T/out")"

check_err() { # name, want rc, stderr pattern, command...
	local name=$1 want=$2 pat=$3
	shift 3
	"$@" >"$T/out" 2>"$T/err"
	local rc=$?
	if [ $rc -eq "$want" ] && grep -qE -- "$pat" "$T/err" && [ "$(wc -l <"$T/err")" -le 20 ]; then
		pass "$name"
	else
		fail "$name (rc=$rc: $(head -c 200 "$T/err"))"
	fi
}
if [ ! -e /dev/nvidia-uvm-tools ]; then
	check_err "snoop uvm without the driver: one line" 1 "^grtrace: snoop uvm: no /dev/nvidia-uvm-tools" $G snoop uvm --duration 0.2
fi
if [ ! -d /sys/kernel/tracing/events/nvidia ]; then
	check_err "snoop xid without the driver: one line" 1 "^grtrace: snoop xid: no nvidia:nvidia_dev_xid" $G snoop xid --duration 0.2
fi
check_err "--csv belongs to snoop uvm" 2 "^grtrace: snoop: cuda has no CSV view \\(snoop uvm has one\\); use --format json" $G snoop cuda --csv
check_err "--format csv belongs to snoop uvm" 2 "^grtrace: snoop: cuda has no CSV view" $G snoop cuda --format csv
check_err "--csv and --json exclude each other" 2 "^grtrace: snoop: one format at a time" $G snoop uvm --csv --json
check_err "--format takes text, json, csv" 2 "^grtrace: snoop: unknown format 'xml'; use text, json or csv" $G snoop cuda --format xml
check_err "-- needs a command" 2 "^grtrace: snoop: -- needs a command after it" $G snoop cuda --
check_err "-p and -- CMD exclude each other" 2 "^grtrace: snoop: give either -p PID or -- CMD ARGS" $G snoop cuda -p 1 -- true
[ $fails -eq 0 ]
