#!/bin/bash
# Every CSV table loads with Python's csv and every JSON output with json, with the tables and
# keys the docs name (tests/tools/check_doc_tables.py), on the report scenarios and a jobs trace.
set -u
build=${1:-build}
. tests/e2e/lib/cases.bash
"$build/fixtures/report_traces" "$tmp" "$build/fixtures/symfixture" >/dev/null || { fail "report_traces"; exit 1; }
"$build/fixtures/gen_jobs_trace" -o "$tmp/jobs.grt" -n 3000 >/dev/null || { fail "gen_jobs_trace"; exit 1; }
"$build/fixtures/gen_trace" known "$tmp/known.grt" || { fail "gen_trace known"; exit 1; }
python3 tests/tools/check_doc_tables.py "$build/grtrace" "$tmp/kernels.grt" "$tmp/copies.grt" \
	"$tmp/leaks.grt" "$tmp/drops.grt" "$tmp/jobs.grt" "$tmp/known.grt"
