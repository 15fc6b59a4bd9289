#!/bin/bash
# End-to-end checks of `grtrace report --jobs` and `grtrace export --format json` on generated traces.
set -u
build=${1:?usage: jobs.sh BUILD_DIR}
grtrace=$build/grtrace
gen=$build/fixtures/gen_jobs_trace
check_events=tests/tools/check_trace_events.py
. tests/e2e/lib/cases.bash

"$gen" -o "$tmp/small.grt" -n 20000 >/dev/null || { fail "generator"; exit 1; }

# text: a verdict line first, exit 0
"$grtrace" report "$tmp/small.grt" --jobs >"$tmp/text" 2>"$tmp/err"
check "report --jobs text" test $? -eq 0 -a -s "$tmp/text"
check "text starts with the verdict" grep -q '^== jobs ==$' "$tmp/text"
check "text verdict line" grep -q '^verdict: [0-9]*% of GPU time idle' "$tmp/text"

# json: parses, jobs rows match the totals, a known cause
"$grtrace" report "$tmp/small.grt" --jobs --format json >"$tmp/out.json" 2>"$tmp/err"
rc=$?
if [ $rc -eq 0 ] && python3 - "$tmp/out.json" <<'PY' 2>"$tmp/py_err"; then
import json, sys
r = json.load(open(sys.argv[1]))["jobs"]
causes = {"host-bound", "sync-bound", "launch-latency", "none", "no-jobs", "no-device-timing", "host-submit-slow",
          "queue-wait", "exec-long-tail", "dependency-wait", "vm-fault", "preempted", "collective-wait"}
assert r["verdict"]["cause"] in causes, r["verdict"]
assert len(r["jobs"]) == r["totals"]["jobs"] > 1000, (len(r["jobs"]), r["totals"])
assert sum(1 for j in r["jobs"] if j["incomplete"]) == r["totals"]["incomplete"]
row = r["jobs"][0]
for key in ("t_submit_host_ns", "t_queue_ns", "t_exec_ns", "t_complete_ns", "t_total_ns", "tags"):
    assert key in row, key
assert r["notes"]["tail_checked"] is True
PY
	ok "report --jobs json"
else
	fail "report --jobs json (rc $rc: $(cat "$tmp/err" "$tmp/py_err" 2>/dev/null | head -3))"
fi
"$grtrace" report "$tmp/small.grt" --jobs --format json >"$tmp/out2.json" 2>/dev/null
check "report --jobs json is the same on a second run" cmp -s "$tmp/out.json" "$tmp/out2.json"
"$grtrace" report "$tmp/small.grt" --jobs --format json | cat >"$tmp/out3.json" 2>/dev/null
check "report --jobs json through a pipe is the same" cmp -s "$tmp/out.json" "$tmp/out3.json"

# csv: one table per output; the job rows with --table jobs, every table with -o DIR
"$grtrace" report "$tmp/small.grt" --jobs --format csv >"$tmp/out.csv" 2>"$tmp/err"
check "report --jobs csv to stdout is several tables: exit 2" test $? -eq 2
check "csv: the error names the way out" grep -q "name one with --table NAME, or give -o DIR" "$tmp/err"
"$grtrace" report "$tmp/small.grt" --jobs --format csv --table jobs >"$tmp/out.csv" 2>"$tmp/err"
jobs=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["jobs"]["totals"]["jobs"])' "$tmp/out.json")
rows=$(python3 -c 'import csv,sys; print(len(list(csv.DictReader(open(sys.argv[1])))))' "$tmp/out.csv")
check "report --jobs csv rows ($rows for $jobs jobs)" test "$rows" = "$jobs"
check "csv job columns" grep -q '^job,group,batch,pid,tid,device,kind,name,stream,api_enter_ns' "$tmp/out.csv"
"$grtrace" report "$tmp/small.grt" --jobs --format csv -o "$tmp/jobs_csv" 2>"$tmp/err"
check "csv -o DIR: exit 0" test $? -eq 0
check "csv -o DIR: one file per table" test -s "$tmp/jobs_csv/jobs.csv" -a -s "$tmp/jobs_csv/jobs_summary.csv" \
	-a -s "$tmp/jobs_csv/jobs_kernels.csv"
check "csv -o DIR: the job table is the same" cmp -s "$tmp/out.csv" "$tmp/jobs_csv/jobs.csv"

# a bad threshold: usage error, one line naming the problem
"$grtrace" report "$tmp/small.grt" --jobs --threshold queue-wait=50%,5parsecs >"$tmp/out" 2>"$tmp/err"
rc=$?
check "bad threshold exits 2" test $rc -eq 2
check "bad threshold names the value" grep -q "bad value '5parsecs' for queue-wait" "$tmp/err"
check "bad threshold is one line" test "$(wc -l <"$tmp/err")" -eq 1

# export: a valid timeline
"$grtrace" export "$tmp/small.grt" --format json -o "$tmp/small.json" 2>"$tmp/err"
check "export exits 0" test $? -eq 0
if python3 "$check_events" "$tmp/small.json" >"$tmp/check" 2>&1; then
	ok "export passes the trace-event check ($(cat "$tmp/check"))"
else
	fail "export trace-event check: $(cat "$tmp/check")"
fi
# every launch flow the export counted is one the checker matched, and there are some
flows=$(sed -n 's/.* \([0-9]*\) launch flows).*/\1/p' "$tmp/err")
check "export flows ($flows) all bind launch to execution" \
	test -n "$flows" -a "$flows" -gt 0 -a "$(sed -n 's/.* \([0-9]*\) flows$/\1/p' "$tmp/check")" = "$flows"
check "export output is the same on a second run" \
	sh -c '"$1" export "$2" --format json -o "$3" 2>/dev/null && cmp -s "$3" "$4"' _ "$grtrace" "$tmp/small.grt" \
	"$tmp/small2.json" "$tmp/small.json"

# the checker itself rejects what it must
printf '{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":5},{"ph":"X","name":"b","pid":1,"tid":1,"ts":3,"dur":5}]}' >"$tmp/bad1.json"
printf '{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":5},{"ph":"s","name":"f","cat":"c","id":1,"pid":1,"tid":1,"ts":2}]}' >"$tmp/bad2.json"
printf '{"traceEvents":[{"ph":"B","name":"a","pid":1,"tid":1,"ts":1}]}' >"$tmp/bad3.json"
printf '{"traceEvents":[{"ph":"X","name":"a","pid":1,"ts":1,"dur":1}]}' >"$tmp/bad4.json"
# v2 flows: entering with no start, entering no later than it leaves, leaving twice
printf '{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"bind_id":7,"flow_in":true}]}' >"$tmp/bad5.json"
printf '{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":2,"dur":1,"bind_id":7,"flow_out":true},{"ph":"X","name":"b","pid":2,"tid":2,"ts":2,"dur":1,"bind_id":7,"flow_in":true}]}' >"$tmp/bad6.json"
printf '{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"bind_id":7,"flow_out":true},{"ph":"X","name":"a","pid":1,"tid":1,"ts":3,"dur":1,"bind_id":7,"flow_out":true}]}' >"$tmp/bad7.json"
for b in 1 2 3 4 5 6 7; do
	if python3 "$check_events" "$tmp/bad$b.json" >/dev/null 2>&1; then
		fail "checker rejects bad$b.json"
	else
		ok "checker rejects bad$b.json"
	fi
done

# export errors
"$grtrace" export "$tmp/small.grt" >/dev/null 2>"$tmp/err"
check "export without -o exits 2" test $? -eq 2
"$grtrace" export "$tmp/none.grt" --format json -o "$tmp/x.json" >/dev/null 2>"$tmp/err"
check "export of a missing trace exits 1" test $? -eq 1
head -c 200000 "$tmp/small.grt" >"$tmp/cut.grt"
"$grtrace" export "$tmp/cut.grt" --format json -o "$tmp/cut.json" >/dev/null 2>"$tmp/err"
rc=$?
check "export of a cut trace exits 1 with the offset" test $rc -eq 1 -a "$(grep -c 'offset' "$tmp/err")" -eq 1
if python3 "$check_events" "$tmp/cut.json" >/dev/null 2>&1; then
	ok "a cut trace still exports a valid timeline up to the cut"
else
	fail "a cut trace still exports a valid timeline up to the cut"
fi

# 10^6 records: streamed, memory does not grow with the trace (plain build only: ASan is slow)
case "$build" in
*san*) ;;
*)
	"$gen" -o "$tmp/big.grt" -n 1000000 >/dev/null
	"$gen" -o "$tmp/mid.grt" -n 100000 >/dev/null
	/usr/bin/time -f %M -o "$tmp/rss_big" "$grtrace" export "$tmp/big.grt" --format json -o "$tmp/big.json" 2>/dev/null
	/usr/bin/time -f %M -o "$tmp/rss_mid" "$grtrace" export "$tmp/mid.grt" --format json -o "$tmp/mid.json" 2>/dev/null
	if python3 "$check_events" "$tmp/big.json" >"$tmp/check" 2>&1; then
		ok "export of 10^6 records passes the check ($(cat "$tmp/check"))"
	else
		fail "export of 10^6 records: $(cat "$tmp/check")"
	fi
	big=$(tail -1 "$tmp/rss_big")
	mid=$(tail -1 "$tmp/rss_mid")
	check "export memory flat: ${big} KiB for 10^6 vs ${mid} KiB for 10^5 records" \
		test "$big" -lt $((mid * 3 / 2 + 4096))
	/usr/bin/time -f %M -o "$tmp/rss_rep" "$grtrace" report "$tmp/big.grt" --jobs >/dev/null 2>&1
	/usr/bin/time -f %M -o "$tmp/rss_rep_mid" "$grtrace" report "$tmp/mid.grt" --jobs >/dev/null 2>&1
	big=$(tail -1 "$tmp/rss_rep")
	mid=$(tail -1 "$tmp/rss_rep_mid")
	check "report memory flat: ${big} KiB for 10^6 vs ${mid} KiB for 10^5 records" \
		test "$big" -lt $((mid * 3 / 2 + 4096))
	;;
esac
exit $failed
