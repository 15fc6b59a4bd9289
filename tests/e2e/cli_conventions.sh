#!/bin/bash
# The conventions every command shares: --version, info, a trace from stdin, --filter keys,
# "not recorded, and why" for sections whose source did not run.
set -u
build=${1:-build}
G=$build/grtrace
FAKE=$build/fixtures/fake/libcuda.so.1
WL=$build/fixtures/workloads
. tests/e2e/lib/cases.bash

# --- version: the tool's version, the commit, the format's version ---
check "--version: tool, commit and format" bash -c \
	"'$G' --version | grep -qE '^grtrace [0-9]+\.[0-9]+\.[0-9]+ \(commit [0-9a-f]+(-dirty)?|unknown, trace format 1\.[0-9]+\)\$'"

# --- info: every source with yes or why not; JSON with the same ---
"$G" info >"$tmp/info.txt" 2>"$tmp/err"
check "info: exit 0" test $? -eq 0
check "info: bpf usable here" grep -qx "bpf:     usable" "$tmp/info.txt"
check "info: a source without its driver says why" grep -qE "^  xid +no: no nvidia:nvidia_dev_xid tracepoint" "$tmp/info.txt"
check "info: cuda usable" grep -qE "^  cuda +yes$" "$tmp/info.txt"
"$G" info --format json >"$tmp/info.json"
check "info --format json: the same sources" python3 -c "
import json, sys
r = json.load(open('$tmp/info.json'))
s = {x['name']: x for x in r['sources']}
assert set(r) == {'version', 'commit', 'format_version', 'kernel', 'machine', 'bpf', 'bpf_why', 'libcuda', 'sources'}, r
assert s['cuda']['usable'] is True and s['cuda']['why'] is None
assert s['xid']['usable'] is False and s['xid']['why'].startswith('no nvidia:nvidia_dev_xid')
"
check "info --format xml: exit 2" bash -c "'$G' info --format xml 2>&1 >/dev/null | grep -qx \"grtrace: info: unknown format 'xml'; use text or json\"; test \${PIPESTATUS[0]} -eq 2"

# --- a trace with a skipped source (xid: no driver here) ---
"$G" record -f -s cuda,xid -o "$tmp/x.grt" --libcuda "$FAKE" -- "$WL/cuda_exit" 0 2>"$tmp/rec.err"
check "record: exit 0" test $? -eq 0
check "record: the next step named" grep -qx "grtrace: next: grtrace report $tmp/x.grt" "$tmp/rec.err"
"$G" report "$tmp/x.grt" --xid --fences >"$tmp/r.txt"
check "report: a skipped source's section says not recorded and why" grep -qxF \
	"  not recorded: source xid was skipped: no nvidia:nvidia_dev_xid tracepoint here (NVIDIA driver not loaded, or too old to have it)" "$tmp/r.txt"
check "report: no 'no GPU errors' claim without the source" bash -c "! grep -q 'no GPU errors' '$tmp/r.txt'"
check "report: a source not asked for says how to record it" grep -qxF \
	"  not recorded: source fence was not asked for (record with -s fence)" "$tmp/r.txt"
"$G" report "$tmp/x.grt" --xid --format json >"$tmp/r.json"
check "report json: not recorded as recorded=false and why" python3 -c "
import json
x = json.load(open('$tmp/r.json'))['xid']
assert x['recorded'] is False and x['why'].startswith('source xid was skipped: '), x"

# --- a trace from standard input, the same output as from the file ---
"$G" parse "$tmp/x.grt" --format json >"$tmp/file.jsonl"
"$G" parse - --format json <"$tmp/x.grt" >"$tmp/stdin.jsonl"
check "parse -: the same as the file" cmp -s "$tmp/file.jsonl" "$tmp/stdin.jsonl"
"$G" report "$tmp/x.grt" --format json | sed 's|"file":"[^"]*"|"file":"-"|' >"$tmp/file.json"
cat "$tmp/x.grt" | "$G" report - --format json >"$tmp/stdin.json"
check "report -: the same as the file" cmp -s "$tmp/file.json" "$tmp/stdin.json"
check "parse - from a terminal: exit 1, one line" bash -c \
	"script -qc \"'$G' parse -\" /dev/null </dev/null | grep -q 'reads the trace from standard input, which is a terminal'"

# --- --filter: several keys in one, kernel glob, api glob, time window ---
"$build/fixtures/gen_trace" known "$tmp/known.grt"
n() { "$G" parse "$tmp/known.grt" "$@" | wc -l; }
check "filter type=launch,pid=4242: 2 launches" test "$(n --filter type=launch,pid=4242)" -eq 2
check "filter type=launch,alloc,pid=4242: values of a key OR" test "$(n --filter type=launch,alloc,pid=4242)" -eq 3
check "filter kernel=vec*: 1" test "$(n --filter 'kernel=vec*')" -eq 1
check "filter api=cuMemcpy*: 3 copies" test "$(n --filter 'api=cuMemcpy*')" -eq 3
check "filter time=0..0.000003: the first 3 events" test "$(n --filter time=0..0.000003)" -eq 3
check "filter time=0.00001..: from 10 us on" test "$(n --filter time=0.00001..)" -eq 4
check "filter keys of two --filter AND" test "$(n --filter type=memcpy --filter time=..0.000005)" -eq 1
check "filter bad key: exit 2, the keys listed" bash -c "'$G' parse '$tmp/known.grt' --filter colour=red 2>&1 | grep -qF 'kernel=GLOB, api=NAME or time=S..S'"
check "filter bad window: exit 2" bash -c "'$G' parse '$tmp/known.grt' --filter time=5..1 2>/dev/null; test \$? -eq 2"
# --- one error style in every command: "grtrace: CMD: what; how to fix", exit 2 ---
for c in "record --bogus" "parse --bogus" "report --bogus" "export --bogus" "snoop --bogus" \
	"serve --bogus" "top --bogus" "info --bogus"; do
	"$G" $c >/dev/null 2>"$tmp/err"
	rc=$?
	check "$c: exit 2, one line in the common form" bash -c "[ $rc -eq 2 ] && [ \$(wc -l <'$tmp/err') -eq 1 ] &&
		grep -qx \"grtrace: ${c%% *}: unknown option '--bogus'; see grtrace ${c%% *} --help\" '$tmp/err'"
done
exit $failed
