#!/bin/bash
# Bad input and faults, table-driven: every case checks the exit code and the start of the one
# error line ("grtrace: CMD: ..."), never a crash, hang or silent success. Needs root (BPF).
set -u
BUILD=${1:-build}
. tests/e2e/lib/cases.bash
. tests/e2e/lib/bpf_links.bash
G=$BUILD/grtrace
FAKE=$BUILD/fixtures/fake/libcuda.so.1
WL=$BUILD/fixtures/workloads
GEN=$BUILD/fixtures/gen_trace
trap 'umount "$tmp/full" 2>/dev/null; rm -rf "$tmp"' EXIT

# expect NAME RC PATTERN CMD...: CMD exits with RC (within 60 s) and its first stderr line
# matches the extended regex PATTERN ('' for no line at all)
expect() {
	local name=$1 want=$2 pattern=$3 rc first
	shift 3
	timeout 60 "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	first=$(head -1 "$tmp/err")
	if [ "$rc" != "$want" ]; then
		fail "$name (exit $rc, want $want: $first)"
	elif [ -z "$pattern" ] && [ -s "$tmp/err" ]; then
		fail "$name (wanted no message, got: $first)"
	elif [ -n "$pattern" ] && ! grep -qE -- "$pattern" <<<"$first"; then
		fail "$name (message '$first' does not match '$pattern')"
	else
		ok "$name"
	fi
}

"$GEN" known "$tmp/known.grt" || { fail "gen_trace known"; exit 1; }

# --- 1. never run a library the target chose: a libcuda whose constructor leaves a marker ---
mkdir -p "$tmp/evil"
cat >"$tmp/evil.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
/* runs on load: leaves a marker when the process that loaded it is grtrace */
__attribute__((constructor)) static void on_load(void)
{
	char exe[4096] = "";
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	FILE *f;

	if (n <= 0 || !strstr(exe, "grtrace") || !(f = fopen(getenv("EVIL_MARKER"), "a")))
		return;
	fprintf(f, "constructor ran in %s as uid %d\n", exe, (int)getuid());
	fclose(f);
}
int cuInit(unsigned flags) { return 0; }
int cuDriverGetVersion(int *v) { *v = 13000; return 0; }
int cuMemAlloc_v2(unsigned long long *p, size_t n) { *p = 0x1000; return 0; }
C
cc -shared -fPIC -o "$tmp/evil/libcuda.so.1" "$tmp/evil.c" || fail "building the planted libcuda"
export EVIL_MARKER=$tmp/marker
cat >"$tmp/holder.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>
/* maps the planted libcuda (its constructor sees it is no grtrace) and waits */
int main(int argc, char **argv)
{
	if (!dlopen(argv[1], RTLD_NOW))
		return 1;
	printf("ready\n");
	fflush(stdout);
	sleep(30);
	return 0;
}
C
cc -o "$tmp/holder" "$tmp/holder.c" -ldl || fail "building the holder"
expect "planted libcuda: record --libcuda" 0 "^grtrace: recorded" \
	$G record -f --libcuda "$tmp/evil/libcuda.so.1" -o "$tmp/evil.grt" -- true
"$tmp/holder" "$tmp/evil/libcuda.so.1" >"$tmp/holder.out" &
holder=$!
for _ in $(seq 100); do grep -q ready "$tmp/holder.out" && break; sleep 0.05; done
expect "planted libcuda: record -p of a process mapping it" 0 "^grtrace: recorded" \
	$G record -f -p $holder --duration 0.3 -o "$tmp/evil-p.grt"
expect "planted libcuda: snoop" 0 "^grtrace: note: snooping" \
	$G snoop cuda --libcuda "$tmp/evil/libcuda.so.1" --duration 0.3
kill $holder 2>/dev/null
wait $holder 2>/dev/null
expect "planted libcuda: report of its trace" 0 "" $G report "$tmp/evil-p.grt"
check "planted libcuda: its constructor never ran in grtrace" test ! -e "$tmp/marker"
[ -e "$tmp/marker" ] && sed 's/^/  /' "$tmp/marker"

# --- 2. a libcuda cut short: one line, exit 1, at sizes from 100 to 20000 bytes ---
bad=0
for size in 100 1000 $(seq 1337 1400 19000) 20000; do
	head -c "$size" "$FAKE" >"$tmp/cut.so"
	timeout 120 $G record -f --libcuda "$tmp/cut.so" -o "$tmp/cut.grt" -- true >/dev/null 2>"$tmp/err"
	rc=$?
	if [ $rc -ne 1 ] || [ "$(wc -l <"$tmp/err")" -ne 1 ] ||
		! grep -q "is not a valid shared library" "$tmp/err"; then
		bad=$((bad + 1))
		[ $bad -le 3 ] && echo "  cut at $size: exit $rc: $(head -1 "$tmp/err")"
	fi
done
check "libcuda cut at 16 sizes from 100 to 20000 bytes: exit 1, one line each" test $bad -eq 0
head -c 100 "$FAKE" >"$tmp/tiny.so"
expect "100-byte ELF is not a valid shared library" 1 \
	"^grtrace: record: .*tiny.so is not a valid shared library" \
	$G record -f --libcuda "$tmp/tiny.so" -o "$tmp/x.grt" -- true

# --- 3. how the target ended: record exits as it did (like time and strace) ---
expect "target exit code passed on" 7 "target exited with status 7$" \
	$G record -f -s none -o "$tmp/x.grt" -- sh -c 'exit 7'
expect "target killed by SIGSEGV: 128+11" 139 "target killed by SIGSEGV" \
	$G record -f --libcuda "$FAKE" -o "$tmp/segv.grt" -- "$WL/cuda_exit" segv
$G report --leaks "$tmp/segv.grt" >"$tmp/out" 2>&1
check "report: killed by SIGSEGV" grep -qE "^pid [0-9]+ \(cuda_exit\), killed by SIGSEGV, left allocated:" "$tmp/out"
check "parse: exit record has the signal" grep -q 'event=exit .* signal=11 ' <($G parse "$tmp/segv.grt")
sleep 60 &
sleeper=$!
disown $sleeper # its SIGKILL is the test, not news
$G record -f -s none -p $sleeper -o "$tmp/kill.grt" 2>"$tmp/kill.err" &
rec=$!
# killed once the recorder's process tracking is attached (its two raw tracepoint links)
wait_bpf_links $rec raw_tracepoint 1 600
kill -KILL $sleeper
wait $rec
rc=$?
check "-p target killed by SIGKILL: recording ends in order (exit $rc)" \
	test $rc -eq 0 -a -n "$(grep 'stopped: target-exit$' "$tmp/kill.err")"
check "-p target: SIGKILL in its exit record" grep -q 'event=exit .* signal=9 ' <($G parse "$tmp/kill.grt")
# an exit right after the last call is in the trace, after that call, every time
bad=0
for i in 1 2 3 4 5; do
	$G record -f --libcuda "$FAKE" -o "$tmp/fe.grt" -- "$WL/cuda_exit" free-exit 2>/dev/null
	$G report --leaks "$tmp/fe.grt" 2>&1 | grep -q "still running" && bad=$((bad + 1))
done
check "exit right after cuMemFree: never 'still running' (5 runs)" test $bad -eq 0

# --- 4. sources: repeated names are one source; an empty list is a usage error ---
$G record -f --libcuda "$FAKE" -s cuda -o "$tmp/one.grt" -- "$WL/cuda_known" >/dev/null 2>&1
$G record -f --libcuda "$FAKE" -s cuda,cuda -o "$tmp/two.grt" -- "$WL/cuda_known" >/dev/null 2>&1
one=$($G parse --filter type=launch "$tmp/one.grt" | wc -l)
two=$($G parse --filter type=launch "$tmp/two.grt" | wc -l)
check "-s cuda,cuda records each launch once ($two, -s cuda: $one)" test "$one" -gt 0 -a "$one" = "$two"
expect "-s ''" 2 "^grtrace: record: -s '' names no source" $G record -f -s '' -o "$tmp/x.grt" -- true
expect "-s ," 2 "^grtrace: record: -s ',' names no source" $G record -f -s , -o "$tmp/x.grt" -- true
expect "-s none records process tracking only" 0 "^grtrace: recorded" $G record -f -s none -o "$tmp/x.grt" -- true

# --- 5. write errors on stdout: exit 1, one line ---
for args in "report $tmp/known.grt" "parse $tmp/known.grt" "snoop --help" "record --help" \
	"parse --help" "report --help" "export --help" "--help" "help record"; do
	cmd=${args%% *}
	[ "$cmd" = "--help" ] || [ "$cmd" = "help" ] && cmd=""
	$G $args >/dev/full 2>"$tmp/err"
	rc=$?
	check "grtrace $args >/dev/full: exit 1, one line" \
		test $rc -eq 1 -a "$(wc -l <"$tmp/err")" -eq 1 -a -n "$(grep 'writing the output failed: No space left on device' "$tmp/err")"
done
# a reader that stops early (head) is not a failure of grtrace's
$G parse "$tmp/known.grt" 2>"$tmp/err" | head -1 >/dev/null
check "SIGPIPE: parse | head -1 prints no error" test ! -s "$tmp/err"

# --- 6. export never destroys its input ---
cp "$tmp/known.grt" "$tmp/in.grt"
sum=$(md5sum <"$tmp/in.grt")
ln -s "$tmp/in.grt" "$tmp/sym.grt"
ln "$tmp/in.grt" "$tmp/hard.grt"
for out in in.grt sym.grt hard.grt; do
	expect "export IN --perfetto $out" 2 "^grtrace: export: output .* is the input trace itself" \
		$G export "$tmp/in.grt" --perfetto "$tmp/$out"
done
check "export: the input is unchanged" test "$(md5sum <"$tmp/in.grt")" = "$sum"
expect "record -o onto --libcuda" 2 "^grtrace: record: -o .* is the --libcuda library itself" \
	$G record -f --libcuda "$tmp/tiny.so" -o "$tmp/tiny.so" -- true

# --- 8. numbers: out of range is exit 2 naming the option and the range ---
for v in 1e12 99999999999 1e99 nan inf -1 0 abc 1e-400x; do
	expect "snoop --duration $v" 2 "^grtrace: snoop: bad value '$v' for --duration: .*give seconds" \
		$G snoop cuda --duration "$v"
	expect "record --duration $v" 2 "^grtrace: record: bad value '$v' for --duration: .*give seconds" \
		$G record -f --duration "$v" -- true
done
expect "record --idle-timeout nan" 2 "^grtrace: record: bad value 'nan' for --idle-timeout" \
	$G record -f --idle-timeout nan -- true
expect "record --launch-returns 1e99" 2 "^grtrace: record: bad value '1e99' for --launch-returns" \
	$G record -f --launch-returns 1e99 -- true
expect "record -p 99999999999" 2 "^grtrace: record: bad value '99999999999' for --pid: out of range" \
	$G record -f -p 99999999999
expect "report --top 1e99" 2 "^grtrace: report: bad value '1e99' for --top" $G report "$tmp/known.grt" --top 1e99
for v in 1e99 nan inf -5; do
	expect "report --threshold leak_min_bytes=$v" 2 "^grtrace: report: bad --threshold 'leak_min_bytes=$v' .*from 0 to 1e\+18" \
		$G report "$tmp/known.grt" --leaks --threshold "leak_min_bytes=$v"
done

# --- 9. strings from the traced program never reach a terminal raw ---
$G record -f --libcuda "$FAKE" -o "$tmp/evil-name.grt" -- "$WL/cuda_exit" evil-name 2>/dev/null
for fmt in text csv; do
	rm -rf "$tmp/csv_dir"
	$G report --format $fmt --kernels --api --leaks --jobs "$tmp/evil-name.grt" -o "$tmp/csv_dir" >"$tmp/out" 2>&1
	[ $fmt = csv ] && cat "$tmp"/csv_dir/*.csv >>"$tmp/out"
	[ $fmt = text ] && cat "$tmp/csv_dir" >>"$tmp/out"
	check "report --format $fmt: no escape byte" test "$(grep -c $'\x1b' "$tmp/out")" -eq 0
	check "report --format $fmt: the name escaped, on one line" grep -qF '\x1b[2J\x1b[31mred\x1b[0m\nFAKE REPORT LINE' "$tmp/out"
	check "report --format $fmt: no forged line" test "$(grep -c '^FAKE REPORT LINE' "$tmp/out")" -eq 0
done
$G report --format json --kernels "$tmp/evil-name.grt" >"$tmp/out" 2>&1
check "report --format json: JSON escapes" grep -qF '\u001b[2J' "$tmp/out"

# --- 10. records deleted or duplicated: the output, then one line, exit 1 ---
python3 - "$tmp/known.grt" "$tmp" <<'PY'
import struct, sys
img = open(sys.argv[1], 'rb').read()
at, recs = 752, []
while at + 32 <= len(img):
    n = 32 + struct.unpack_from('<I', img, at + 4)[0]
    recs.append((at, n))
    at += n
a, n = recs[11]  # the vecAdd launch
open(sys.argv[2] + '/deleted.grt', 'wb').write(img[:a] + img[a + n:])
open(sys.argv[2] + '/duplicated.grt', 'wb').write(img[:a + n] + img[a:])
b, m = recs[12]
open(sys.argv[2] + '/swapped.grt', 'wb').write(img[:a] + img[b:b + m] + img[a:a + n] + img[b + m:])
PY
for f in deleted duplicated swapped; do
	expect "parse of a trace with a record $f" 1 "^grtrace: .*$f.grt: damaged trace: checksum mismatch for bytes 752\.\." \
		$G parse "$tmp/$f.grt"
	check "parse of $f: events still printed" test "$(wc -l <"$tmp/out")" -ge 10
	expect "report of a trace with a record $f" 1 "^grtrace: .*$f.grt: damaged trace: checksum mismatch" \
		$G report "$tmp/$f.grt"
	expect "export of a trace with a record $f" 1 "^grtrace: export: .*$f.grt: damaged trace: checksum mismatch" \
		$G export "$tmp/$f.grt" --perfetto "$tmp/$f.json"
done

# --- 11. stop signals while probes attach: a clean stop, trailer written, the command never run ---
for delay in 0 0.01 0.05 0.1 0.2; do
	rm -f "$tmp/early.grt" "$tmp/ran"
	$G record -f --libcuda "$FAKE" -s cuda,syscall -o "$tmp/early.grt" -- touch "$tmp/ran" 2>"$tmp/err" &
	rec=$!
	# "0": as soon as grtrace itself runs (before that, the shell's default handler applies)
	for _ in $(seq 200); do [ "$(readlink /proc/$rec/exe 2>/dev/null)" = "$(readlink -f $G)" ] && break; sleep 0.005; done
	sleep "$delay"
	kill -INT $rec
	wait $rec
	rc=$?
	reason=$($G parse --filter type=trailer "$tmp/early.grt" 2>/dev/null | grep -o 'reason=[a-z-]*')
	if [ $rc -eq 0 ] && grep -q "stopped: signal" "$tmp/err" && [ "$reason" = "reason=signal" ]; then
		ok "SIGINT after ${delay}s: stopped in order, trailer written"
	elif [ $rc -eq 0 ] && [ "$reason" = "reason=target-exit" ]; then
		ok "SIGINT after ${delay}s: came after the command ended (trailer written)"
	else
		fail "SIGINT after ${delay}s (exit $rc, $reason: $(head -1 "$tmp/err"))"
	fi
	if grep -q "stopped: signal" "$tmp/err" && ! grep -q process <($G parse "$tmp/early.grt" 2>/dev/null); then
		check "SIGINT after ${delay}s: the held command never ran" test ! -e "$tmp/ran"
	fi
done

# --- 12. pids that cannot be traced ---
cat >"$tmp/zombie.c" <<'C'
#include <stdio.h>
#include <unistd.h>
/* a child that exits and is never reaped: a zombie while this sleeps */
int main(void)
{
	pid_t child = fork();

	if (child == 0)
		_exit(0);
	printf("%d\n", (int)child);
	fflush(stdout);
	sleep(30);
	return 0;
}
C
cc -o "$tmp/zombie" "$tmp/zombie.c"
"$tmp/zombie" >"$tmp/zpid" &
zmaker=$!
for _ in $(seq 100); do [ -s "$tmp/zpid" ] && break; sleep 0.05; done
zpid=$(cat "$tmp/zpid")
for _ in $(seq 100); do grep -q '^State:.*Z' /proc/"$zpid"/status 2>/dev/null && break; sleep 0.05; done
expect "-p of a zombie" 1 "^grtrace: record: pid $zpid has exited \(a zombie" \
	$G record -f -s none -p "$zpid" -o "$tmp/x.grt"
kill $zmaker 2>/dev/null
expect "-p of a kernel thread (kthreadd)" 1 "^grtrace: record: pid 2 is a kernel thread" \
	$G record -f -s none -p 2 -o "$tmp/x.grt"

# --- 13. a bad --gpu-kernels regex, before anything runs ---
rm -f "$tmp/ran"
expect "bad --gpu-kernels regex" 2 "^grtrace: record: bad --gpu-kernels regular expression '\(unclosed'" \
	$G record -f -s gpu --gpu-kernels '(unclosed' -- touch "$tmp/ran"
check "bad regex: nothing was run" test ! -e "$tmp/ran"
# stacked repetition: undefined in POSIX, and glibc's regcomp needs gigabytes for it
expect "stacked repetition in --gpu-kernels" 2 \
	"^grtrace: record: bad --gpu-kernels regular expression 'k\\*\\*': a repetition operator follows another" \
	$G record -f -s gpu --gpu-kernels 'k**' -- touch "$tmp/ran"
check "stacked repetition: nothing was run" test ! -e "$tmp/ran"

# --- 14. a FIFO with no writer: refused at once ---
mkfifo "$tmp/fifo"
expect "parse FIFO" 1 "^grtrace: .*fifo: cannot open: not a regular file" $G parse "$tmp/fifo"
expect "report FIFO" 1 "^grtrace: .*fifo: cannot open: not a regular file" $G report "$tmp/fifo"
expect "export FIFO" 1 "^grtrace: export: .*fifo: .*not a regular file" $G export "$tmp/fifo" --perfetto "$tmp/f.json"
expect "record --libcuda FIFO" 1 "^grtrace: record: cannot read --libcuda .*fifo: not a regular file" \
	$G record -f --libcuda "$tmp/fifo" -o "$tmp/x.grt" -- true
expect "record --libcuda /dev/zero" 1 "^grtrace: record: cannot read --libcuda /dev/zero: not a regular file" \
	$G record -f --libcuda /dev/zero -o "$tmp/x.grt" -- true

# --- 15. help and the shape of every error line ---
$G help record >"$tmp/out" 2>&1
check "grtrace help record prints record's usage" grep -q '^usage: grtrace record' "$tmp/out"
for cmd in record parse report export snoop; do
	expect "$cmd --bogus: one line 'grtrace: $cmd: ...'" 2 "^grtrace: $cmd: unknown option '--bogus'; see grtrace $cmd --help$" \
		$G $cmd --bogus
done
expect "unknown command" 2 "^grtrace: unknown command 'bogus'; see grtrace --help$" $G bogus

# --- cases that held before: usage errors, corrupt traces, non-root ---
expect "record without a target" 2 "^grtrace: record: give either -p PID or -- CMD ARGS" $G record -f
expect "parse of a damaged record" 1 "^grtrace: .*bad.grt: bad record magic 0x5a at offset" \
	sh -c "$GEN bad-magic $tmp/bad.grt >/dev/null && $G parse $tmp/bad.grt"
if command -v setpriv >/dev/null; then
	expect "record as nobody, capabilities dropped" 1 "^grtrace: record: loading BPF needs root or CAP_BPF\+CAP_PERFMON" \
		setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all \
		$G record -f -s none -o /tmp/grt-nobody.grt -- true
fi
exit $failed
