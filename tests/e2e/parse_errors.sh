#!/bin/bash
# `grtrace parse` on bad command lines and bad files: exit 2 for usage, 1 with one "grtrace: FILE: ..." line.
set -u
build=${1:-build}
grtrace=$build/grtrace
gen=$build/fixtures/gen_trace
. tests/e2e/lib/cases.bash

# Runs parse; sets rc, out (stdout lines), err (stderr text), err_lines.
run_parse() {
	"$grtrace" parse "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	out=$(wc -l <"$tmp/out")
	err=$(cat "$tmp/err")
	err_lines=$(wc -l <"$tmp/err")
}

"$gen" known "$tmp/known.grt" || { echo "FAIL - gen_trace known"; exit 1; }

# usage errors: exit 2 and one line "grtrace: parse: ...; see grtrace parse --help"
usage_case() { # name, args...
	local name=$1
	shift
	run_parse "$@"
	check "$name: exit 2, message and usage" \
		test "$rc" -eq 2 -a "$(head -c 9 "$tmp/err")" = "grtrace: " -a "$out" -eq 0
	check "$name: one line pointing to --help" \
		test "$err_lines" -eq 1 -a -n "$(grep 'see grtrace parse --help$' "$tmp/err")"
}
usage_case "unknown flag" "$tmp/known.grt" --bogus
usage_case "unknown short flag" -x "$tmp/known.grt"
usage_case "--format without a value" "$tmp/known.grt" --format
usage_case "no file" --format json
usage_case "two files" "$tmp/known.grt" "$tmp/known.grt"
run_parse "$tmp/known.grt" --bogus
check "unknown flag is named" grep -qx "grtrace: parse: unknown option '--bogus'; see grtrace parse --help" "$tmp/err"

bad_usage() { # name, args...: exit 2 and exactly one line
	local name=$1
	shift
	run_parse "$@"
	check "$name: exit 2, one line" test "$rc" -eq 2 -a "$err_lines" -eq 1 -a "$out" -eq 0
}
bad_usage "unknown format" "$tmp/known.grt" --format xml
bad_usage "filter: unknown key" "$tmp/known.grt" --filter bogus=1
bad_usage "filter: unknown type" "$tmp/known.grt" --filter type=nosuch
bad_usage "filter: pid not a number" "$tmp/known.grt" --filter pid=abc
bad_usage "filter: pid out of range" "$tmp/known.grt" --filter pid=4294967296
bad_usage "filter: no value" "$tmp/known.grt" --filter type=
bad_usage "filter: only commas" "$tmp/known.grt" --filter type=,
bad_usage "filter: no key" "$tmp/known.grt" --filter =launch
run_parse --help
check "--help: exit 0, usage on stdout" test "$rc" -eq 0 -a "$out" -ge 1

# runtime failures: exit 1 and exactly one line "grtrace: FILE: ..."
one_line_error() { # name, file, extended regex the message must match
	run_parse "$2"
	check "$1: exit 1, one line" test "$rc" -eq 1 -a "$err_lines" -eq 1
	check "$1: message" grep -Eq "^grtrace: $2: $3\$" "$tmp/err"
}
one_line_error "missing file" "$tmp/missing.grt" "cannot open: No such file or directory"
one_line_error "directory" "$tmp" "cannot open: not a regular file \(a trace is a .grt file\)"
mkfifo "$tmp/fifo"
timeout 10 "$grtrace" parse "$tmp/fifo" >/dev/null 2>"$tmp/err"
check "fifo without a writer: exit 1 at once, not a hang" test $? -eq 1
check "fifo: message" grep -qx "grtrace: $tmp/fifo: cannot open: not a regular file (a trace is a .grt file)" "$tmp/err"
: >"$tmp/empty.grt"
one_line_error "empty file" "$tmp/empty.grt" "truncated header at offset 0: .*"
echo "hello, not a trace" >"$tmp/text.grt"
one_line_error "foreign file" "$tmp/text.grt" "bad magic at offset 0: .*"
head -c 300 "$tmp/known.grt" >"$tmp/short.grt"
one_line_error "header cut" "$tmp/short.grt" "truncated header at offset 300: .*"

off=$("$gen" bad-magic "$tmp/bad.grt")
one_line_error "corrupt record" "$tmp/bad.grt" "bad record magic 0x5a at offset $off"
check "corrupt record: the events before it are printed" test "$out" -eq 3
off=$("$gen" cut "$tmp/cut.grt")
one_line_error "cut record" "$tmp/cut.grt" "truncated record at offset $off: .*"

# a file cut at a record boundary is not an error: events up to the cut and a note
size=$(stat -c %s "$tmp/known.grt")
head -c $((size - 72)) "$tmp/known.grt" >"$tmp/no-trailer.grt" # the trailer is 72 bytes
cp "$tmp/no-trailer.grt" "$tmp/finished-no-trailer.grt"
# as a crash leaves it: the header flags (offset 44) never got "finished"
printf '\0\0\0\0' | dd of="$tmp/no-trailer.grt" bs=1 seek=44 conv=notrunc status=none
run_parse "$tmp/finished-no-trailer.grt"
check "finished, trailer gone: exit 1, events shown, damage named" test "$rc" -eq 1 -a "$out" -eq 11
check "finished, trailer gone: one line" grep -qx "grtrace: $tmp/finished-no-trailer.grt: damaged trace: the header says the recording finished, but no trailer was found .*" "$tmp/err"
run_parse "$tmp/no-trailer.grt"
check "no trailer: exit 0, 11 events" test "$rc" -eq 0 -a "$out" -eq 11
check "no trailer: one note" grep -qx "grtrace: note: $tmp/no-trailer.grt: no trailer: .*" "$tmp/err"

"$grtrace" parse "$tmp/known.grt" >/dev/full 2>"$tmp/err"
rc=$?
check "output to a full disk: exit 1, one line" \
	test "$rc" -eq 1 -a "$(wc -l <"$tmp/err")" -eq 1
check "output to a full disk: says so" grep -q "No space left on device" "$tmp/err"

# cut anywhere: exit 0 or 1, never a crash (a signal gives 128+)
crashes=0
for ((cut = 0; cut <= size; cut += 7)); do
	head -c $cut "$tmp/known.grt" >"$tmp/c.grt"
	for fmt in text json csv; do
		rm -rf "$tmp/c_csv"
		"$grtrace" parse "$tmp/c.grt" --all --format $fmt -o "$tmp/c_$fmt" >/dev/null 2>&1
		rc=$?
		[ $rc -le 1 ] || { echo "  cut $cut ($fmt): exit $rc"; crashes=$((crashes + 1)); }
	done
done
check "every 7th cut, all formats: no crash" test $crashes -eq 0
exit $failed
