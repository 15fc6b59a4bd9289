#!/bin/bash
# snoop's usage errors (status 2) and runtime errors (status 1, one line on stderr).
BUILD=${1:-build}
. tests/e2e/lib/cuda.bash

# expect_fail NAME STATUS STDERR-REGEX ARGS...
expect_fail() {
	local name=$1 status=$2 pattern=$3
	shift 3
	timeout 20 "$GRT" "$@" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	if [ $rc != "$status" ]; then
		fail "$name: status $rc, want $status ($(head -1 "$tmp/err"))"
	elif ! head -1 "$tmp/err" | grep -q -- "$pattern"; then
		fail "$name: stderr '$(head -1 "$tmp/err")' does not match '$pattern'"
	else
		ok "$name"
	fi
}
one_line() { check "$1: exactly one line on stderr" [ "$(wc -l <"$tmp/err")" = 1 ]; }

expect_fail "no source" 2 "which source" snoop
expect_fail "unknown source" 2 "unknown source 'nosuch'" snoop nosuch
expect_fail "unknown flag" 2 "^grtrace: snoop: unknown option '--nosuch'; see grtrace snoop --help$" snoop cuda --nosuch
expect_fail "two sources" 2 "one source at a time" snoop cuda syscall
expect_fail "bad pid" 2 "^grtrace: snoop: bad value 'abc' for -p: give a process id" snoop cuda -p abc
expect_fail "bad duration" 2 "^grtrace: snoop: bad value '-1' for --duration: out of range; give seconds" snoop cuda --duration -1
expect_fail "missing libcuda" 1 "^grtrace: snoop: libcuda /nonexistent/libcuda.so.1: No such file or directory$" \
	snoop cuda --libcuda /nonexistent/libcuda.so.1
one_line "missing libcuda"
expect_fail "not an ELF file" 1 "^grtrace: snoop: /etc/hostname is not a valid shared library (not ELF, or cut short)$" \
	snoop cuda --libcuda /etc/hostname
one_line "not an ELF file"
expect_fail "ELF without CUDA entry points" 1 "exports none of the CUDA driver entry points$" \
	snoop cuda --libcuda "$WL/cuda_wait"
one_line "ELF without CUDA entry points"
sleep 30 &
spid=$!
expect_fail "process without libcuda" 1 \
	"^grtrace: snoop: no libcuda.so.1 mapped in pid $spid nor in LD_LIBRARY_PATH, the loader cache, /lib and /usr/lib (name it with --libcuda PATH)$" \
	snoop cuda -p $spid
one_line "process without libcuda"
kill $spid
# as an unprivileged user: copy the binary where nobody can run it
cp "$GRT" "$tmp/grtrace" && chmod 755 "$tmp" "$tmp/grtrace"
setpriv --reuid=nobody --regid=nogroup --clear-groups "$tmp/grtrace" snoop cuda --libcuda "$FAKE" \
	>"$tmp/out" 2>"$tmp/err"
check "not root: status 1" [ $? = 1 ]
check "not root: says what is needed" grep -q "needs root or CAP_BPF+CAP_PERFMON" "$tmp/err"
one_line "not root"
expect_fail "--duration ends snoop (status 0)" 0 "snooping cuda" snoop cuda --libcuda "$FAKE" --duration 0.5
exit $failed
