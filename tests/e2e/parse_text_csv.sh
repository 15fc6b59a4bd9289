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
	'kind=HtoD async=0 dims=1 stream=0x0 gbps=524.288 ' "$tmp/known.txt"
check "text: --filter type=free" bash -c \
	"'$grtrace' parse '$tmp/known.grt' --filter type=free | grep -c ' free ' | grep -qx 1"

"$grtrace" parse "$tmp/known.grt" --format csv >"$tmp/known.csv"
check "csv: exit 0" test $? -eq 0
python3 - "$tmp/known.csv" <<'EOF'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
ok = True
def case(name, cond):
    global ok
    print(("ok - " if cond else "FAIL - ") + name)
    ok &= bool(cond)
case("csv: header", rows[0] == ["ts_ns", "type", "cpu", "pid", "tid", "seq", "fields"])
case("csv: 12 rows of 7 cells", len(rows) == 13 and all(len(r) == 7 for r in rows[1:]))
case("csv: fixed columns of the vecAdd launch",
     rows[4][:6] == ["1000000005000", "launch", "1", "4242", "4243", "4"])
case("csv: quotes and comma survive in the fields cell",
     rows[5][6].startswith('kernel="k<\\"quoted\\", comma>" function=0x0 ') and
     rows[5][6].endswith(" api_ns=-"))
case("csv: memcpy fields", rows[3][6].startswith("dst=0x7f0000000000 src=0x5555a000 bytes=1048576 kind=HtoD"))
sys.exit(0 if ok else 1)
EOF
[ $? -eq 0 ] || failed=1

# Random strings (quotes, commas, line breaks, control bytes) never break a line or a row.
"$grtrace" parse "$tmp/random.grt" --all >"$tmp/random.txt"
records=$(wc -l <"$tmp/random.txt")
check "random text: one line per record, all records" test "$records" -ge 3000
"$grtrace" parse "$tmp/random.grt" --all --format csv >"$tmp/random.csv"
check "random csv: one line per record plus the header" \
	test "$(wc -l <"$tmp/random.csv")" -eq $((records + 1))
check "random csv: parses to 7 cells per row" python3 -c "
import csv, sys
rows = list(csv.reader(open('$tmp/random.csv', newline='', encoding='utf-8', errors='surrogateescape')))
sys.exit(not (len(rows) == $records + 1 and all(len(r) == 7 for r in rows)))"
exit $failed
