#!/bin/bash
# End-to-end checks of `grtrace report --jobs` and `grtrace export --perfetto` on generated traces.
set -u
build=${1:?usage: jobs.sh BUILD_DIR}
grtrace=$build/grtrace
gen=$build/fixtures/gen_jobs_trace
check=tests/tools/check_trace_events.py
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failed=0

ok() { echo "ok - $1"; }
fail() {
	echo "FAIL - $1"
	failed=1
}
expect() { # NAME CONDITION-COMMAND...
	local name=$1
	shift
	if "$@"; then ok "$name"; else fail "$name"; fi
}

"$gen" -o "$dir/small.grt" -n 20000 >/dev/null || { fail "generator"; exit 1; }

# text: a verdict line first, exit 0
"$grtrace" report "$dir/small.grt" --jobs >"$dir/text" 2>"$dir/err"
expect "report --jobs text" test $? -eq 0 -a -s "$dir/text"
expect "text starts with the verdict" grep -q '^== jobs ==$' "$dir/text"
expect "text verdict line" grep -q '^verdict: [0-9]*% of GPU time idle' "$dir/text"

# json: parses, jobs rows match the totals, a known cause
"$grtrace" report "$dir/small.grt" --jobs --format json >"$dir/out.json" 2>"$dir/err"
rc=$?
if [ $rc -eq 0 ] && python3 - "$dir/out.json" <<'PY' 2>"$dir/py_err"; then
import json, sys
r = json.load(open(sys.argv[1]))["jobs"]
causes = {"host-bound", "sync-bound", "launch-latency", "none", "no-jobs", "host-submit-slow",
          "queue-wait", "exec-long-tail", "dependency-wait", "vm-fault", "preempted"}
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
	fail "report --jobs json (rc $rc: $(cat "$dir/err" "$dir/py_err" 2>/dev/null | head -3))"
fi

# csv: a header and one row per job, then the summary table
"$grtrace" report "$dir/small.grt" --jobs --format csv >"$dir/out.csv" 2>"$dir/err"
jobs=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["jobs"]["totals"]["jobs"])' "$dir/out.json")
rows=$(awk 'NF==0{exit} {n++} END{print n-1}' "$dir/out.csv")
expect "report --jobs csv rows ($rows for $jobs jobs)" test "$rows" = "$jobs"
expect "csv summary table" grep -q '^summary,name,jobs,incomplete,time_ns' "$dir/out.csv"

# a bad threshold: usage error, one line naming the problem
"$grtrace" report "$dir/small.grt" --jobs --threshold queue-wait=50%,5parsecs >"$dir/out" 2>"$dir/err"
rc=$?
expect "bad threshold exits 2" test $rc -eq 2
expect "bad threshold names the value" grep -q "bad value '5parsecs' for queue-wait" "$dir/err"
expect "bad threshold is one line" test "$(wc -l <"$dir/err")" -eq 1

# export: a valid timeline
"$grtrace" export "$dir/small.grt" --perfetto "$dir/small.json" 2>"$dir/err"
expect "export exits 0" test $? -eq 0
if python3 "$check" "$dir/small.json" >"$dir/check" 2>&1; then
	ok "export passes the trace-event check ($(cat "$dir/check"))"
else
	fail "export trace-event check: $(cat "$dir/check")"
fi

# the checker itself rejects what it must
printf '{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":5},{"ph":"X","name":"b","pid":1,"tid":1,"ts":3,"dur":5}]}' >"$dir/bad1.json"
printf '{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":5},{"ph":"s","name":"f","cat":"c","id":1,"pid":1,"tid":1,"ts":2}]}' >"$dir/bad2.json"
printf '{"traceEvents":[{"ph":"B","name":"a","pid":1,"tid":1,"ts":1}]}' >"$dir/bad3.json"
printf '{"traceEvents":[{"ph":"X","name":"a","pid":1,"ts":1,"dur":1}]}' >"$dir/bad4.json"
for b in 1 2 3 4; do
	if python3 "$check" "$dir/bad$b.json" >/dev/null 2>&1; then
		fail "checker rejects bad$b.json"
	else
		ok "checker rejects bad$b.json"
	fi
done

# export errors
"$grtrace" export "$dir/small.grt" >/dev/null 2>"$dir/err"
expect "export without --perfetto exits 2" test $? -eq 2
"$grtrace" export "$dir/none.grt" --perfetto "$dir/x.json" >/dev/null 2>"$dir/err"
expect "export of a missing trace exits 1" test $? -eq 1
head -c 200000 "$dir/small.grt" >"$dir/cut.grt"
"$grtrace" export "$dir/cut.grt" --perfetto "$dir/cut.json" >/dev/null 2>"$dir/err"
rc=$?
expect "export of a cut trace exits 1 with the offset" test $rc -eq 1 -a "$(grep -c 'offset' "$dir/err")" -eq 1
if python3 "$check" "$dir/cut.json" >/dev/null 2>&1; then
	ok "a cut trace still exports a valid timeline up to the cut"
else
	fail "a cut trace still exports a valid timeline up to the cut"
fi

# 10^6 records: streamed, memory does not grow with the trace (plain build only: ASan is slow)
case "$build" in
*san*) ;;
*)
	"$gen" -o "$dir/big.grt" -n 1000000 >/dev/null
	"$gen" -o "$dir/mid.grt" -n 100000 >/dev/null
	/usr/bin/time -f %M -o "$dir/rss_big" "$grtrace" export "$dir/big.grt" --perfetto "$dir/big.json" 2>/dev/null
	/usr/bin/time -f %M -o "$dir/rss_mid" "$grtrace" export "$dir/mid.grt" --perfetto "$dir/mid.json" 2>/dev/null
	if python3 "$check" "$dir/big.json" >"$dir/check" 2>&1; then
		ok "export of 10^6 records passes the check ($(cat "$dir/check"))"
	else
		fail "export of 10^6 records: $(cat "$dir/check")"
	fi
	big=$(tail -1 "$dir/rss_big")
	mid=$(tail -1 "$dir/rss_mid")
	expect "export memory flat: ${big} KiB for 10^6 vs ${mid} KiB for 10^5 records" \
		test "$big" -lt $((mid * 3 / 2 + 4096))
	/usr/bin/time -f %M -o "$dir/rss_rep" "$grtrace" report "$dir/big.grt" --jobs >/dev/null 2>&1
	/usr/bin/time -f %M -o "$dir/rss_rep_mid" "$grtrace" report "$dir/mid.grt" --jobs >/dev/null 2>&1
	big=$(tail -1 "$dir/rss_rep")
	mid=$(tail -1 "$dir/rss_rep_mid")
	expect "report memory flat: ${big} KiB for 10^6 vs ${mid} KiB for 10^5 records" \
		test "$big" -lt $((mid * 3 / 2 + 4096))
	;;
esac
exit $failed
