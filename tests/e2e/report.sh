#!/bin/bash
# End-to-end checks of `grtrace report`: JSON parsed by python3, exit codes, stderr lines.
set -u
build=${1:?usage: report.sh BUILD_DIR}
grtrace=$build/grtrace
. tests/e2e/lib/cases.bash

if ! "$build/fixtures/report_traces" "$tmp" "$build/fixtures/symfixture" >"$tmp/fixture_path"; then
	fail "report_traces writes the scenario traces"
	exit 1
fi

# check NAME TRACE PYTHON_ASSERTIONS [EXPECTED_RC]: the JSON report is bound to `r`
check_json() {
	local name=$1 trace=$2 code=$3 want_rc=${4:-0} rc
	"$grtrace" report "$tmp/$trace.grt" --format json >"$tmp/out.json" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne "$want_rc" ]; then
		fail "$name (exit $rc, wanted $want_rc: $(cat "$tmp/err"))"
		return
	fi
	if python3 - "$tmp/out.json" "$(cat "$tmp/fixture_path")" <<PY 2>"$tmp/py_err"; then
import json, sys
with open(sys.argv[1]) as f:
    text = f.read()
assert text.count("\n") == 1 and text.endswith("\n"), "one JSON object, one line"
r = json.loads(text)
fixture = sys.argv[2]
$code
PY
		ok "$name"
	else
		fail "$name: $(tail -n 1 "$tmp/py_err")"
	fi
}

check_json "json: kernels with exact mean and percentiles" kernels '
# default sections of other sources (syscalls, offcpu, uvm, ...) may sit between these
assert [k for k in r if k in ("trace", "kernels", "api", "copies", "leaks", "drops")] == ["trace", "kernels", "api", "copies", "leaks", "drops"], list(r)
# sections about sources this trace did not record are left out unless asked for
assert "uvm" not in r and "syscalls" not in r, list(r)
t = r["trace"]
assert t["complete"] is True and t["end_reason"] == "target-exit" and t["records"] == 22
assert t["host"] == "testhost" and t["command"] == "./vecadd 1024" and t["duration_ns"] == 2000000000
assert t["sources"] == [{"name": "cuda", "status": None, "message": None}]
k = {x["name"]: x for x in r["kernels"]}
assert [x["name"] for x in r["kernels"]] == ["vecAdd", "saxpy", "func@0xdead0"]
v = k["vecAdd"]
assert v["launches"] == 8 and v["unfinished"] == 1 and v["errors"] == 0
s = v["api_ns"]
assert (s["count"], s["total"], s["min"], s["max"]) == (7, 280000, 10000, 70000), s
assert s["mean"] == 40000 and s["p50"] == 40000 and s["p90"] == 70000 and s["p99"] == 70000, s
assert v["shapes"] == [{"grid": [4, 1, 1], "block": [256, 1, 1], "launches": 6},
                       {"grid": [8, 1, 1], "block": [128, 1, 1], "launches": 2}], v["shapes"]
assert k["saxpy"]["launches"] == 3 and k["saxpy"]["errors"] == 1 and k["saxpy"]["resolved"]
assert k["func@0xdead0"]["resolved"] is False
'

check_json "json: api per process" kernels '
procs = {p["pid"]: p for p in r["api"]}
assert sorted(procs) == [100, 200]
p = procs[100]
assert p["comm"] == "vecadd" and p["calls"] == 13 and p["errors"] == 1 and p["total_ns"] == 304000
launch = p["apis"][0]
assert launch["api"] == "cuLaunchKernel" and launch["calls"] == 12 and launch["last_error"] == 700
assert launch["unfinished"] == 1 and launch["api_ns"]["p50"] == 20000
'

check_json "json: copies bandwidth 1.048576 GB/s" copies '
d = {x["direction"]: x for x in r["copies"]["directions"]}
h = d["HtoD"]
assert h["calls"] == 3 and h["bytes"] == 3 * 2**20 and h["sync_calls"] == 3 and h["async_calls"] == 0
assert h["timed_bytes"] / h["sync_ns"]["total"] == 1.048576
assert abs(h["sync_gbytes_per_s"] - 1.048576) < 1e-5, h["sync_gbytes_per_s"]
assert d["DtoH"]["async_calls"] == 2 and d["DtoH"]["sync_gbytes_per_s"] is None
assert d["DtoD"]["errors"] == 1 and d["DtoD"]["bytes"] == 0
m = r["copies"]["memsets"]
assert m["calls"] == 2 and m["sync_calls"] == 1 and m["async_calls"] == 1 and m["bytes"] == 2**20 + 2048
'

check_json "json: leaks per pid and stack, symbolized" leaks '
l = {p["pid"]: p for p in r["leaks"]}
p = l[300]
assert p["exited"] and p["exit_code"] == 3
assert p["bytes"] == 2621440 and p["allocations"] == 3
assert [(s["bytes"], s["allocations"]) for s in p["stacks"]] == [(2097152, 2), (524288, 1)]
assert p["stacks"][0]["frames"] == ["grt_fixture_inner+0x4 (%s)" % fixture,
                                    "grt_fixture_outer+0x8 (%s)" % fixture], p["stacks"][0]
assert p["stacks"][1]["frames"][1:] == ["0x1234", "/nonexistent/libfoo.so+0x2345"]
assert p["managed"]["bytes"] == 8192 and p["host"]["bytes"] == 16384
assert p["unknown_frees"] == 2 and p["failed_allocs"] == 1
q = l[301]
assert not q["exited"] and q["bytes"] == 300 and q["allocations"] == 2
assert q["stacks"][0]["frames"] == [] and q["stacks"][0]["stack_id"] == 9
'

check_json "json: drops and sequence gaps" seq_gap '
d = r["drops"]
assert d["lost"] == 8 and d["trailer_lost"] == 8
assert d["sources"] == [{"source": "cuda", "lost": 5}, {"source": "uvm", "lost": 3}]
assert d["sequence_missing"] == 1
assert [c for c in d["cpus"] if c["gaps"]] == [{"cpu": 1, "records": 5, "gaps": 1, "missing": 1, "out_of_order": 0, "duplicated": 0}]
assert r["trace"]["trailer_records"] == 11 and r["trace"]["records"] == 11
assert r["trace"]["damage"].startswith("checksum mismatch for bytes 752..")
' 1

check_json "json: no trailer is incomplete but not an error" no_trailer '
t = r["trace"]
assert t["complete"] is False and t["end_reason"] is None and t["error"] is None
assert [k["launches"] for k in r["kernels"]] == [8, 3, 1]
'

check_json "json: truncated trace still reports what was read" truncated '
t = r["trace"]
assert t["complete"] is False and t["error"].startswith("truncated record at offset 1190")
assert r["kernels"][0]["launches"] == 4 and r["kernels"][0]["api_ns"]["p50"] == 30000
' 1

# the corrupt trace's one stderr line
"$grtrace" report "$tmp/bad_magic.grt" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -eq 1 ] && [ "$(cat "$tmp/err")" = "grtrace: $tmp/bad_magic.grt: bad record magic 0x55 at offset 1238" ] &&
	grep -q '^WARNING: reading stopped early (bad record magic' "$tmp/out" &&
	grep -q '== drops ==' "$tmp/out"; then
	ok "text: corrupt trace prints the partial report, one error line, exit 1"
else
	fail "text: corrupt trace (exit $rc, stderr '$(cat "$tmp/err")')"
fi

"$grtrace" report "$tmp/no_trailer.grt" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -eq 0 ] && grep -q '^WARNING: the trace has no trailer' "$tmp/out"; then
	ok "text: missing trailer is a visible warning"
else
	fail "text: missing trailer (exit $rc)"
fi

"$grtrace" report "$tmp/kernels.grt" --no-such-flag >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -eq 2 ] && grep -qx "grtrace: report: unknown option '--no-such-flag'; see grtrace report --help" "$tmp/err" && [ ! -s "$tmp/out" ]; then
	ok "unknown flag: one line on stderr, exit 2"
else
	fail "unknown flag (exit $rc)"
fi

# a section named on the command line is shown even when its source was not recorded
"$grtrace" report "$tmp/kernels.grt" --uvm --syscalls --format json >"$tmp/out.json" 2>&1
if python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); assert "uvm" in r and "syscalls" in r and "kernels" not in r' "$tmp/out.json"; then
	ok "sections asked for are shown without their source"
else
	fail "sections asked for are shown without their source: $(head -c 200 "$tmp/out.json")"
fi

"$grtrace" report --help >"$tmp/out" 2>&1
if grep -q -- '--kernels' "$tmp/out" && grep -q -- '--leaks' "$tmp/out" && grep -q -- '--drops' "$tmp/out"; then
	ok "--help lists the sections"
else
	fail "--help lists the sections"
fi

exit $failed
