#!/bin/bash
# grtrace record: bad input gets one clear line and the right exit code; the held launch and stop conditions work.
set -u
BUILD=${1:-build}
G=$BUILD/grtrace
T=$(mktemp -d)
trap 'umount "$T/full" 2>/dev/null; rm -rf "$T"' EXIT
fails=0

check() { # name, expected rc, expected stderr pattern, command...
	local name=$1 want_rc=$2 pattern=$3
	shift 3
	"$@" >"$T/out" 2>"$T/err"
	local rc=$?
	if [ "$rc" -ne "$want_rc" ] || ! grep -qE "$pattern" "$T/err"; then
		echo "FAIL - $name (rc=$rc, want $want_rc; stderr: $(head -c 300 "$T/err"))"
		fails=$((fails + 1))
	else
		echo "ok - $name"
	fi
}

check unknown_flag 2 "^grtrace: record: unknown option '--bogus'" $G record -f --bogus -- true
check unknown_source 2 "unknown source 'nosuch'" $G record -f -s nosuch -- true
check no_target 2 "give either -p PID or -- CMD" $G record -f -s none
check both_targets 2 "give either -p PID or -- CMD" $G record -f -s none -p 1 -- true
check bad_duration 2 "bad value 'abc'" $G record -f --duration abc -s none -- true
check dead_pid 1 "^grtrace: record: no process with pid 999999$" $G record -f -s none -o "$T/x.grt" -p 999999
check cmd_not_found 1 "cannot run no-such-command-xyz: command not found" $G record -f -s none -o "$T/x.grt" -- no-such-command-xyz
check unwritable_output 1 "cannot create /nonexistent/x.grt" $G record -f -s none -o /nonexistent/x.grt -- true
check no_libcuda_in_pid 1 "no libcuda.so.1 mapped in pid $$" $G record -f -o "$T/x.grt" -p $$ --duration 0.1
check missing_libcuda_flag 1 "cannot read --libcuda /nonexistent/libcuda.so.1" $G record -f --libcuda /nonexistent/libcuda.so.1 -o "$T/x.grt" -- true
if command -v setpriv >/dev/null; then
	check not_root 1 "needs root or CAP_BPF\+CAP_PERFMON" setpriv --reuid=65534 --regid=65534 --clear-groups $G record -f -s none -o /tmp/grt-nobody.grt -- true
fi

# The held child is released only after attach: its own start record comes first and its exit code is kept.
check launch_exit_code 7 "stopped: target-exit, target exited with status 7$" $G record -f -s none -o "$T/l.grt" -- sh -c 'exit 7'
if $G parse --format json "$T/l.grt" | python3 -c '
import json, sys
ev = [json.loads(l) for l in sys.stdin]
procs = [e for e in ev if e["type"] == "process"]
assert procs[0]["event"] == "start", procs[0]
exits = [e for e in procs if e["event"] == "exit"]
assert len(exits) == 1 and exits[0]["exit_code"] == 7, exits
assert ev[-1]["type"] == "trailer" and ev[-1]["reason"] == "target-exit"
'; then echo "ok - launch_records"; else echo "FAIL - launch_records"; fails=$((fails + 1)); fi

# Children of the target are followed: three forks, three starts and three exits besides the target's.
$G record -f -s none -o "$T/f.grt" -- sh -c '/bin/true; /bin/true; /bin/true' 2>/dev/null
n=$($G parse --format json --filter type=process "$T/f.grt" | grep -c '"event":"start"')
[ "$n" -eq 4 ] && echo "ok - follows_children" || { echo "FAIL - follows_children ($n starts)"; fails=$((fails + 1)); }

# The conventions: no file named "--", no silent overwrite, -d, the next step named.
truth() { # name, command...: the command succeeds
	local name=$1
	shift
	if "$@"; then echo "ok - $name"; else echo "FAIL - $name"; fails=$((fails + 1)); fi
}
(cd "$T" && "$OLDPWD/$G" record -s none -o -- true >dd.out 2>dd.err; echo $? >dd.rc)
truth dashdash_not_a_file test "$(cat "$T/dd.rc")" = 2 -a ! -e "$T/--"
truth dashdash_message grep -qx "grtrace: record: --output needs a value before --; give it as --output VALUE -- CMD" "$T/dd.err"
check stdout_trace 2 "^grtrace: record: -o - is not possible" $G record -s none -o - -- true
: >"$T/exists.grt"
check no_overwrite 2 "^grtrace: record: $T/exists.grt exists; give -f to overwrite it, or -o another file\$" \
	$G record -s none -o "$T/exists.grt" -- true
truth no_overwrite_kept test ! -s "$T/exists.grt"
check force_overwrite 0 "^grtrace: next: grtrace report $T/exists.grt\$" $G record -f -s none -o "$T/exists.grt" -d 5 -- true
check duration_stop 0 "stopped: duration" $G record -f -s none -o "$T/d.grt" --duration 0.3 -- sleep 5
check idle_stop 0 "stopped: idle-timeout" $G record -f -s none -o "$T/i.grt" --idle-timeout 0.3 -- sleep 5
sleep 5 & sleeper=$!
( sleep 0.3; kill -INT $$ 2>/dev/null ) >/dev/null 2>&1 &
$G record -f -s none -o "$T/s.grt" -p $sleeper >/dev/null 2>"$T/err" &
rec=$!
sleep 0.5; kill -INT $rec; wait $rec; rc=$?
grep -q "stopped: signal" "$T/err" && [ $rc -eq 0 ] && echo "ok - sigint_stop" || { echo "FAIL - sigint_stop (rc=$rc)"; fails=$((fails + 1)); }
kill $sleeper 2>/dev/null

# The recorder's nice value: -10 by default, --nice N, the caller's when lower; every thread of
# the recorder has it (the trace writer's too), the command keeps the caller's.
nice_of() { # the nice values of the recorder's threads, then the command's, as the command sees them
	$G record -f -s none -o "$T/n.grt" "$@" -- sh -c \
		'for t in /proc/$PPID/task/*/stat; do cut -d" " -f19 "$t"; done | sort | uniq -c |
			awk "{ printf \"%dx%s \", \$1, \$2 }"; cut -d" " -f19 /proc/self/stat' 2>/dev/null
}
# (-s none: the recorder's main thread and its trace writer's, "2x")
for c in "default|0|2x-10 0" "--nice 5|0|2x5 0" "--nice -20|0|2x-20 0" "default|-15|2x-15 -15" \
	"--nice 0|-15|2x0 -15"; do
	IFS='|' read -r opt caller want <<<"$c"
	args=()
	[ "$opt" = default ] || read -r -a args <<<"$opt"
	got=$(nice -n "$caller" bash -c "$(declare -f nice_of); G=$G T=$T nice_of ${args[*]}")
	[ "$got" = "$want" ] && echo "ok - nice: $opt, caller at $caller: recorder $want" ||
		{ echo "FAIL - nice: $opt, caller at $caller: got '$got', want '$want'"; fails=$((fails + 1)); }
done
check nice_out_of_range 2 "bad value '-21' for --nice: out of range; give a nice value from -20 to 19" $G record -f --nice -21 -s none -o "$T/x.grt" -- true
check nice_not_a_number 2 "bad value '1.5' for --nice" $G record -f --nice 1.5 -s none -o "$T/x.grt" -- true

# Disk full: the recorder reports it, the file says so, and what was written reads back.
mkdir -p "$T/full"
if mount -t tmpfs -o size=16k tmpfs "$T/full" 2>/dev/null; then
	$G record -f -s none -o "$T/full/x.grt" -- sh -c 'for i in $(seq 400); do /bin/true; done' >/dev/null 2>"$T/err"
	rc=$?
	$G parse "$T/full/x.grt" >"$T/out" 2>"$T/perr"
	prc=$?
	if [ $rc -eq 1 ] && grep -q "marked incomplete" "$T/err" && [ $prc -eq 0 ] &&
		grep -q "write error" "$T/perr" && grep -q "process" "$T/out"; then
		echo "ok - disk_full"
	else
		echo "FAIL - disk_full (rc=$rc parse=$prc: $(cat "$T/err" "$T/perr" | head -c 300))"
		fails=$((fails + 1))
	fi
	umount "$T/full"
else
	echo "ok - disk_full # skipped: cannot mount tmpfs"
fi
[ $fails -eq 0 ]
