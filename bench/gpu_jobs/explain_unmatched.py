#!/usr/bin/env python3
"""Why device records were not matched by identity: the report's matching notes, its job flags, and
the jobs matched by time or by order, counted per kind, name and flags.
usage: explain_unmatched.py GRTRACE TRACE"""
import collections
import json
import subprocess
import sys

grtrace, trace = sys.argv[1:3]
report = json.loads(subprocess.run([grtrace, "report", trace, "--jobs", "--format", "json"],
                                   check=True, capture_output=True, text=True).stdout)["jobs"]
print("notes:", {k: v for k, v in report["notes"].items() if k.startswith("device")})
flags = collections.Counter(f for j in report["jobs"] for f in j["flags"])
print("job flags:", dict(flags))
odd = collections.Counter()
for j in report["jobs"]:
    if {"matched-by-time", "matched-by-order"} & set(j["flags"]):
        odd[(j["kind"], j["name"][:60], tuple(j["flags"]))] += 1
for k, n in odd.most_common(20):
    print("job matched without identity:", n, k)
