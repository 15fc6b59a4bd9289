#!/usr/bin/env python3
"""Whether grtrace's own driver calls slow the application's: the application's calls that took
longer than LIMIT_US (default 200) and, of those, the ones during which a call of grtrace's own
threads (probe collection, calibration) was in the driver, with their total time. On the H100 run of
bench/scenarios/sync_bound.cu, 16 of 3000 launches took 0.4-2.6 ms, each beside the collection
thread's launch, copy or event sync.
usage: own_interference.py GRTRACE TRACE [LIMIT_US]"""
import json
import subprocess
import sys

grtrace, trace = sys.argv[1:3]
limit = int(sys.argv[3]) * 1000 if len(sys.argv) > 3 else 200000
out = subprocess.run([grtrace, "parse", "--format", "json", trace], check=True, capture_output=True,
                     text=True).stdout
calls = [r for r in map(json.loads, out.splitlines()) if r.get("api") and r.get("api_ns") is not None]
own = sorted((r["ts_ns"], r["ts_ns"] + r["api_ns"]) for r in calls if r.get("own"))
slow = [r for r in calls if not r.get("own") and r["api_ns"] > limit and r["type"] != "sync"]
beside = [r for r in slow if any(a < r["ts_ns"] + r["api_ns"] and b > r["ts_ns"] for a, b in own)]
print(json.dumps({"app_calls": sum(1 for r in calls if not r.get("own")), "slow": len(slow),
                  "slow_beside_own": len(beside),
                  "slow_beside_own_ms": round(sum(r["api_ns"] for r in beside) / 1e6, 3),
                  "limit_us": limit // 1000}))
