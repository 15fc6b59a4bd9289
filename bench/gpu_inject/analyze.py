# Summarises one gpu-source trace (grtrace parse --format json): records, CUPTI matching,
# probe START/END against CUPTI start/end, attach costs, calibration, drops.
import json
import re
import subprocess
import sys


def pct(values, p):
    if not values:
        return None
    v = sorted(values)
    return v[min(len(v) - 1, int(round(p / 100.0 * (len(v) - 1))))]


def main():
    grtrace, trace = sys.argv[1], sys.argv[2]
    out = subprocess.run([grtrace, "parse", "--format", "json", trace], capture_output=True, text=True)
    kernels, launches, calib, status, counts = [], [], [], [], {}
    trailer = {}
    for line in out.stdout.splitlines():
        r = json.loads(line)
        t = r["type"]
        counts[t] = counts.get(t, 0) + 1
        if t == "gpu_kernel":
            kernels.append(r)
        elif t == "gpu_launch":
            launches.append(r)
        elif t == "clock_calib":
            calib.append(r)
        elif t == "source_status":
            status.append(r.get("message") or "")
        elif t == "trailer":
            trailer = r
    by_call = {(k["pid"], k["tid"], k["api_enter_ns"]): k for k in kernels if k["api_enter_ns"]}
    start_d, end_d, matched = [], [], 0
    for l in launches:
        k = by_call.get((l["pid"], l["tid"], l["api_enter_ns"]))
        if not k or not l["start_ns"] or not l["end_ns"]:
            continue
        matched += 1
        start_d.append(l["start_ns"] - k["start_ns"])
        end_d.append(k["end_ns"] - l["end_ns"])
    attach = [float(m.group(1)) for s in status for m in [re.search(r"attach ([0-9.]+) ms", s)] if m]
    attach_detail = [s for s in status if "attach " in s and " ms" in s]
    cupti = [s for s in status if s.startswith("CUPTI:")]
    probes = [s for s in status if s.startswith("probes:") and "launches instrumented" in s]
    problems = [s for s in status if ("unavailable" in s or "failed" in s or "never reported" in s) and not s.startswith("probes: ")]
    not_instr = {}
    for line in out.stdout.splitlines():
        r = json.loads(line)
        if r["type"] == "gpu_instrument" and r.get("instrumented") == "no":
            not_instr[r.get("reason")] = not_instr.get(r.get("reason"), 0) + 1
    summary = {
        "counts": counts,
        "kernels": len(kernels),
        "kernels_with_call": sum(1 for k in kernels if k["api_enter_ns"]),
        "launch_summaries": len(launches),
        "launches_matched_to_cupti": matched,
        "start_diff_ns": {"p10": pct(start_d, 10), "p50": pct(start_d, 50), "p90": pct(start_d, 90),
                          "min": min(start_d) if start_d else None, "max": max(start_d) if start_d else None},
        "end_diff_ns": {"p10": pct(end_d, 10), "p50": pct(end_d, 50), "p90": pct(end_d, 90),
                        "min": min(end_d) if end_d else None, "max": max(end_d) if end_d else None},
        "exec_ns_p50_probe": pct([l["end_ns"] - l["start_ns"] for l in launches if l["end_ns"]], 50),
        "exec_ns_p50_cupti": pct([k["end_ns"] - k["start_ns"] for k in kernels], 50),
        "attach_ms": attach,
        "attach_detail": attach_detail[:4],
        "cupti_status": cupti,
        "probe_status": probes,
        "problems": problems[:6],
        "not_instrumented_reasons": dict(list(not_instr.items())[:8]),
        "calib": [{k: c[k] for k in ("clock", "offset_ns", "error_ns")} for c in calib],
        "drops": trailer.get("drops"),
    }
    print(json.dumps(summary))


main()
