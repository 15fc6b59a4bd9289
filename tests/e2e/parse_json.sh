#!/bin/bash
# `grtrace parse --format json` on generated traces: valid JSON Lines with the documented keys and values.
set -u
build=${1:-build}
grtrace=$build/grtrace
gen=$build/fixtures/gen_trace
. tests/e2e/lib/cases.bash

"$gen" known "$tmp/known.grt" || { echo "FAIL - gen_trace known"; exit 1; }
"$gen" random 7 "$tmp/random.grt" 3000 || { echo "FAIL - gen_trace random"; exit 1; }

# Every line of FILE is a JSON object without repeated keys; prints nothing, exits non-zero if not.
valid_jsonl() {
	python3 - "$1" <<'EOF'
import json, sys
def no_dups(pairs):
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError("repeated key in %s" % keys)
    return dict(pairs)
n = 0
with open(sys.argv[1], "rb") as f:
    for raw in f:
        obj = json.loads(raw.decode("utf-8"), object_pairs_hook=no_dups)  # strict UTF-8
        assert isinstance(obj, dict) and raw.endswith(b"}\n"), raw
        for k in ("type", "ts_ns", "cpu", "pid", "tid", "seq"):
            assert k in obj, (k, obj)
        n += 1
assert n > 0
EOF
}

"$grtrace" parse "$tmp/known.grt" --format json >"$tmp/known.jsonl" 2>"$tmp/err"
check "known trace: exit 0, nothing on stderr" test $? -eq 0 -a ! -s "$tmp/err"
check "known trace: 12 valid JSON lines" \
	bash -c "[ \$(wc -l <'$tmp/known.jsonl') -eq 12 ] && $(declare -f valid_jsonl); valid_jsonl '$tmp/known.jsonl'"

# The keys and values the known trace must show (tests/known_trace.h).
python3 - "$tmp/known.jsonl" <<'EOF'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
ok = True
def case(name, cond):
    global ok
    print(("ok - " if cond else "FAIL - ") + name)
    ok &= bool(cond)
def has(obj, keys):
    return all(k in obj for k in keys)
common = ["type", "ts_ns", "pid", "tid"]
launch = [e for e in ev if e["type"] == "launch"]
alloc = [e for e in ev if e["type"] == "alloc"]
free = [e for e in ev if e["type"] == "free"]
memcpy = [e for e in ev if e["type"] == "memcpy"]
sync = [e for e in ev if e["type"] == "sync"]
case("types in order", [e["type"] for e in ev] == ["process", "alloc", "memcpy", "launch", "launch",
     "sync", "memcpy", "memcpy", "free", "launch", "drop", "trailer"])
case("every event has type, ts_ns, pid, tid", all(has(e, common) for e in ev))
case("launch keys", all(has(e, common + ["kernel", "grid", "block", "shared_mem", "stream",
                                         "api_ns", "ret"]) for e in launch))
l = launch[0]
case("launch values", l["kernel"] == "vecAdd" and l["grid"] == [4, 2, 1] and
     l["block"] == [256, 1, 1] and l["shared_mem"] == 1024 and l["stream"] == 0x10 and
     l["api_ns"] == 300 and l["ret"] == 0 and l["ts_ns"] == 1000000005000 and
     l["pid"] == 4242 and l["tid"] == 4243)
case("launch with quotes and comma in its name, no return",
     launch[1]["kernel"] == 'k<"quoted", comma>' and launch[1]["api_ns"] is None and
     launch[1]["tid"] == 4244 and launch[1]["block"] == [32, 1, 1])
case("failed launch keeps its return code", launch[2]["ret"] == 719 and launch[2]["pid"] == 5555
     and launch[2]["kernel"] == "other" and launch[2]["comm"] == "worker")
a = alloc[0]
case("alloc keys and values", has(a, common + ["addr", "bytes", "kind"]) and
     a["addr"] == 0x7f0000000000 and a["bytes"] == 1048576 and a["kind"] == "device")
case("free keys and values", has(free[0], common + ["addr"]) and free[0]["addr"] == 0x7f0000000000)
case("memcpy keys", all(has(m, common + ["bytes", "kind", "async", "api_ns"]) for m in memcpy))
case("memcpy values", [(m["kind"], m["bytes"], m["async"], m["api_ns"]) for m in memcpy] ==
     [("HtoD", 1048576, 0, 2000), ("DtoH", 4096, 1, 100), ("DtoD", 65536, 0, 200)])
case("sync keys and values", has(sync[0], common + ["kind", "stream", "api_ns", "ret"]) and
     sync[0]["kind"] == "stream" and sync[0]["api_ns"] == 3000)
case("drop and trailer", ev[10]["source"] == "cuda" and ev[10]["count"] == 3 and
     ev[11]["reason"] == "target-exit" and ev[11]["records"] == 19 and ev[11]["drops"] == 3)
sys.exit(0 if ok else 1)
EOF
[ $? -eq 0 ] || failed=1

"$grtrace" parse "$tmp/known.grt" --format json --all >"$tmp/all.jsonl"
check "--all adds 6 strings, the stack, the mapping and the checksum" test "$(wc -l <"$tmp/all.jsonl")" -eq 21
check "--all: the stack's ips" grep -qx \
	'{"type":"stack","ts_ns":1000000000050,"cpu":1,"pid":4242,"tid":4243,"seq":0,"stack_id":7,"depth":3,"ips":\[4198400,4202496,139637980925952\]}' \
	"$tmp/all.jsonl"

# Random payloads of every type, awkward strings included: always valid JSON, unique keys.
"$grtrace" parse "$tmp/random.grt" --format json --all >"$tmp/random.jsonl"
check "random trace: exit 0" test $? -eq 0
check "random trace: one line per record" test "$(wc -l <"$tmp/random.jsonl")" -ge 3000
check "random trace: every line valid JSON, no repeated keys, valid UTF-8" valid_jsonl "$tmp/random.jsonl"

# Filters
count() { "$grtrace" parse "$tmp/known.grt" --format json "$@" | wc -l; }
check "--filter type=launch: 3" test "$(count --filter type=launch)" -eq 3
check "--filter type=launch,alloc: 4" test "$(count --filter type=launch,alloc)" -eq 4
check "--filter pid=5555: 1" test "$(count --filter pid=5555)" -eq 1
check "--filter pid=4242 --filter type=launch: 2" \
	test "$(count --filter pid=4242 --filter type=launch)" -eq 2
check "--filter tid=4244: 1" test "$(count --filter tid=4244)" -eq 1
check "--filter pid=4242,5555 type=memcpy: 3" \
	test "$(count --filter pid=4242,5555 --filter type=memcpy)" -eq 3
check "--filter pid=1: none" test "$(count --filter pid=1)" -eq 0
check "--filter type=string shows strings without --all" test "$(count --filter type=string)" -eq 6
check "filtered lines are launches of pid 4242" bash -c \
	"'$grtrace' parse '$tmp/known.grt' --format json --filter type=launch --filter=pid=4242 |
	 python3 -c 'import json,sys; e=[json.loads(l) for l in sys.stdin]; sys.exit(not (len(e)==2 and all(x[\"type\"]==\"launch\" and x[\"pid\"]==4242 for x in e)))'"
exit $failed
