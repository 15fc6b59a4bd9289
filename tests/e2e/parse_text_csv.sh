#!/bin/bash
# `grtrace parse` text and CSV output of generated traces: one line per event, CSV that parses back.
set -u
build=${1:-build}
grtrace=$build/grtrace
gen=$build/fixtures/gen_trace
. tests/e2e/lib/cases.bash

"$gen" known "$tmp/known.grt" || { echo "FAIL - gen_trace known"; exit 1; }
"$gen" random 11 "$tmp/random.grt" 3000 || { echo "FAIL - gen_trace random"; exit 1; }

"$grtrace" parse "$tmp/known.grt" >"$tmp/known.txt" 2>"$tmp/err"
check "text: exit 0, nothing on stderr" test $? -eq 0 -a ! -s "$tmp/err"
check "text: 12 lines" test "$(wc -l <"$tmp/known.txt")" -eq 12
check "text: the vecAdd launch line" grep -qxF \
	'    0.000005000   1    4242/4243    launch       kernel=vecAdd function=0xdead0001 grid=(4,2,1) block=(256,1,1) shared_mem=1024 stream=0x10 args=[0x7f0000000000,0x100000] stack_id=7 api=cuLaunchKernel ppid=1 comm=vecadd ret=0 api_ns=300' \
	"$tmp/known.txt"
check "text: a name with quotes and a comma is one quoted token" grep -qF \
	' kernel="k<\"quoted\", comma>" function=0x0 ' "$tmp/known.txt"
check "text: the HtoD copy's bandwidth" grep -qF \
	'kind=HtoD async=0 dims=1 stream=0x0 gbytes_per_s=524.288 ' "$tmp/known.txt"
check "text: --filter type=free" bash -c \
	"'$grtrace' parse '$tmp/known.grt' --filter type=free | grep -c ' free ' | grep -qx 1"

# CSV: one table per record type, a column per field
"$grtrace" parse "$tmp/known.grt" --format csv >"$tmp/known.csv" 2>"$tmp/err"
check "csv of several types to stdout: exit 2" test $? -eq 2
check "csv of several types: the error names the way out" grep -qF \
	"pick one type with --filter type=NAME, or give -o DIR for a file per type" "$tmp/err"
"$grtrace" parse "$tmp/known.grt" --format csv --filter type=launch >"$tmp/launch.csv"
check "csv: exit 0" test $? -eq 0
"$grtrace" parse "$tmp/known.grt" --format csv -o "$tmp/known_csv"
check "csv -o DIR: exit 0" test $? -eq 0
python3 - "$tmp/launch.csv" "$tmp/known_csv" <<'EOF'
import csv, os, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
ok = True
def case(name, cond):
    global ok
    print(("ok - " if cond else "FAIL - ") + name)
    ok &= bool(cond)
case("csv: launch columns", list(rows[0].keys()) == ["ts_ns", "type", "cpu", "pid", "tid", "seq",
     "kernel", "function", "grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z",
     "shared_mem", "stream", "args", "stack_id", "api", "ppid", "comm", "ret", "api_ns"])
case("csv: 3 launches", len(rows) == 3)
v = rows[0]
case("csv: the vecAdd launch, numbers unformatted",
     (v["ts_ns"], v["kernel"], v["function"], v["grid_x"], v["grid_y"], v["stream"], v["api_ns"]) ==
     ("1000000005000", "vecAdd", str(0xdead0001), "4", "2", "16", "300"))
case("csv: quotes and comma survive in the kernel cell", rows[1]["kernel"] == 'k<"quoted", comma>')
case("csv: a missing value is an empty cell", rows[1]["api_ns"] == "")
d = sys.argv[2]
files = sorted(os.listdir(d))
case("csv -o DIR: a file per type", files == ["alloc.csv", "drop.csv", "free.csv", "launch.csv",
     "memcpy.csv", "process.csv", "sync.csv", "trailer.csv"])
m = list(csv.DictReader(open(os.path.join(d, "memcpy.csv"), newline="")))
case("csv: memcpy bandwidth in gbytes_per_s (GB/s)", m[0]["bytes"] == "1048576" and m[0]["gbytes_per_s"] == "524.288")
case("csv -o DIR: the launch table is the same", open(os.path.join(d, "launch.csv")).read() ==
     open(sys.argv[1]).read())
sys.exit(0 if ok else 1)
EOF
[ $? -eq 0 ] || failed=1

# Random strings (quotes, commas, line breaks, control bytes) never break a line or a row.
"$grtrace" parse "$tmp/random.grt" --all >"$tmp/random.txt"
records=$(wc -l <"$tmp/random.txt")
check "random text: one line per record, all records" test "$records" -ge 3000
"$grtrace" parse "$tmp/random.grt" --all --format csv -o "$tmp/random_csv"
check "random csv: exit 0" test $? -eq 0
check "random csv: every record in one row of its type's table" python3 -c "
import csv, glob, sys
n = 0
for f in glob.glob('$tmp/random_csv/*.csv'):
    rows = list(csv.reader(open(f, newline='', encoding='utf-8', errors='surrogateescape')))
    assert all(len(r) == len(rows[0]) for r in rows), f
    n += len(rows) - 1
sys.exit(n != $records)"
exit $failed
