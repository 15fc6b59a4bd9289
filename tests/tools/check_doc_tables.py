#!/usr/bin/env python3
"""Loads every CSV table with Python's csv and every JSON output with json, and checks them
against the docs: report's table names (docs/report.md), parse's and snoop's keys per record
type (docs/tracetest.md), units in column names. Prints ok/FAIL lines; exits 1 on a FAIL.
usage: check_doc_tables.py GRTRACE TRACE... (traces with cuda records; one with jobs)"""
import csv, glob, json, os, re, subprocess, sys, tempfile

grtrace, traces = sys.argv[1], sys.argv[2:]
failed = False


def case(name, cond, why=""):
    global failed
    print(("ok - " if cond else "FAIL - ") + name + ("" if cond else ": " + str(why)))
    failed |= not cond


def doc_tables():
    """section -> tables, from the table in docs/report.md's "CSV tables"."""
    out = {}
    for line in open("docs/report.md"):
        m = re.match(r"\| `(\w+)` \| (`\w+`(?:, `\w+`)*) \|$", line.strip())
        if m:
            out[m.group(1)] = re.findall(r"`(\w+)`", m.group(2))
    return out


def doc_keys():
    """record type -> documented keys, from docs/tracetest.md's JSON table."""
    out = {}
    for line in open("docs/tracetest.md"):
        m = re.match(r"\| `(\w+)` \| (.*) \|$", line.strip())
        if m:
            out[m.group(1)] = set(re.findall(r"`(\w+)`", m.group(2)))
    return out


sections = doc_tables()
case("docs/report.md lists the CSV tables", len(sections) >= 5, sections)
call_keys = {"api", "ppid", "comm", "ret", "api_ns", "own"}
keys = doc_keys()
for trace in traces:
    name = os.path.basename(trace)
    out = tempfile.mkdtemp()
    flags = ["--" + s for s in sections]
    r = subprocess.run([grtrace, "report", trace, "--format", "csv", "-o", out] + flags,
                       capture_output=True, text=True)
    case("%s: report csv -o DIR exit 0" % name, r.returncode == 0, r.stderr)
    got = {os.path.basename(f)[:-4] for f in glob.glob(out + "/*.csv")}
    documented = {t for ts in sections.values() for t in ts}
    case("%s: every table written is documented" % name, got <= documented, got - documented)
    for f in sorted(glob.glob(out + "/*.csv")):
        rows = list(csv.reader(open(f, newline="", encoding="utf-8")))
        table = os.path.basename(f)[:-4]
        if not rows:
            continue  # an empty list has no columns to write
        head = rows[0]
        case("%s: %s loads, every row as wide as its header" % (name, table),
             all(len(x) == len(head) for x in rows), [len(x) for x in rows][:5])
        case("%s: %s has unique, named columns" % (name, table),
             len(set(head)) == len(head) and all(head), head)
        bad = [c for c in head if re.search(r"(^|_)(us|ms|total_us|avg_us)$", c)]
        case("%s: %s columns carry ns, not other time units" % (name, table), not bad, bad)
    r = subprocess.run([grtrace, "report", trace, "--format", "json"] + flags, capture_output=True, text=True)
    j = json.loads(r.stdout)
    case("%s: report json has the trace and every section" % name,
         set(j) == {"trace"} | set(sections), set(j) ^ ({"trace"} | set(sections)))
    r = subprocess.run([grtrace, "parse", trace, "--format", "json"], capture_output=True, text=True)
    undocumented = set()
    for line in r.stdout.splitlines():
        ev = json.loads(line)
        t = ev["type"]
        if t in keys:
            extra = set(ev) - {"type", "ts_ns", "cpu", "pid", "tid", "seq"} - keys[t] - call_keys
            undocumented |= {"%s.%s" % (t, k) for k in extra}
    case("%s: parse json keys are the documented ones" % name, not undocumented, sorted(undocumented))
    pout = tempfile.mkdtemp()
    subprocess.run([grtrace, "parse", trace, "--format", "csv", "-o", pout], check=False)
    for f in sorted(glob.glob(pout + "/*.csv")):
        t = os.path.basename(f)[:-4]
        head = next(csv.reader(open(f, newline="", encoding="utf-8")))
        if t in keys:
            cols = {re.sub(r"_[xyz]$", "", c) for c in head[6:]}
            extra = cols - keys[t] - call_keys
            case("%s: parse csv %s columns are the documented keys" % (name, t), not extra, extra)
# snoop's JSON lines are parse's records: each loads, with the documented keys of its type
build = os.path.dirname(os.path.abspath(grtrace))
fake = os.path.join(build, "fixtures", "fake")
r = subprocess.run([grtrace, "snoop", "cuda", "--format", "json", "--",
                    os.path.join(build, "fixtures", "workloads", "cuda_known")],
                   capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
                   env=dict(os.environ, LD_LIBRARY_PATH=fake))
case("snoop cuda --format json -- CMD: exit 0", r.returncode == 0, r.stderr)
events, undocumented = [], set()
for line in r.stdout.splitlines():
    events.append(json.loads(line))
    t = events[-1]["type"]
    if t in keys:
        extra = set(events[-1]) - {"type", "ts_ns", "cpu", "pid", "tid", "seq"} - keys[t] - call_keys
        undocumented |= {"%s.%s" % (t, k) for k in extra}
case("snoop cuda json: every line loads, launches among them",
     any(e["type"] == "launch" for e in events), len(events))
case("snoop cuda json keys are the documented ones", not undocumented, sorted(undocumented))
sys.exit(1 if failed else 0)
