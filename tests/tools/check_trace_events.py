#!/usr/bin/env python3
"""Structural check of a Chrome/Perfetto trace-event JSON file (the shape ui.perfetto.dev imports).

Every event has ph, name, pid, tid (integers) and, except metadata, ts; X slices have dur >= 0 and
nest properly on their track (no partial overlap); B/E pairs balance per track with monotonic ts;
every flow start (s) has exactly one finish (f) with the same cat/id, not earlier, and both ends lie
inside a slice of their track (so the UI binds them); v2 flows (bind_id with flow_out / flow_in on a
slice): each bind_id leaves exactly one slice, and every slice it enters starts later (the importer
goes in time order, so the start must come first); counters carry numeric args; instants a scope.
Prints one summary line; exits 1 with the first problem found.
"""
import bisect
import json
import sys
from collections import defaultdict

KNOWN_PH = set("XBEisftCMbenNODPRc")


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def ns(v):
    return int(round(v * 1000))


def check(path):
    with open(path) as f:
        data = json.load(f)
    events = data["traceEvents"] if isinstance(data, dict) else data
    if not isinstance(events, list):
        fail("traceEvents is not a list")
    slices = defaultdict(list)
    be_stack = defaultdict(list)
    be_last = {}
    starts, finishes = {}, {}
    flow_out, flow_in = {}, []
    counts = defaultdict(int)
    for i, ev in enumerate(events):
        where = "event %d (%s)" % (i, json.dumps(ev)[:160])
        ph = ev.get("ph")
        if ph not in KNOWN_PH:
            fail("%s: bad ph" % where)
        counts[ph] += 1
        if not isinstance(ev.get("name"), str):
            fail("%s: no name" % where)
        for key in ("pid", "tid"):
            if not isinstance(ev.get(key), int) or isinstance(ev.get(key), bool):
                fail("%s: %s is not an integer" % (where, key))
        if ph == "M":
            if ev["name"] not in ("process_name", "thread_name", "process_sort_index",
                                  "thread_sort_index", "process_labels"):
                fail("%s: unknown metadata" % where)
            if not isinstance(ev.get("args", {}).get("name", ""), str):
                fail("%s: metadata without args.name" % where)
            continue
        ts = ev.get("ts")
        if not isinstance(ts, (int, float)) or ts < 0:
            fail("%s: bad ts" % where)
        track = (ev["pid"], ev["tid"])
        if "bind_id" in ev or "flow_in" in ev or "flow_out" in ev:
            bind = ev.get("bind_id")
            if ph not in "XB" or not isinstance(bind, (int, str)) or isinstance(bind, bool):
                fail("%s: v2 flow needs a slice and an integer or string bind_id" % where)
            out, into = ev.get("flow_out") is True, ev.get("flow_in") is True
            if out == into:
                fail("%s: v2 flow needs exactly one of flow_out / flow_in" % where)
            if out:
                if bind in flow_out:
                    fail("%s: bind_id %s leaves two slices" % (where, bind))
                flow_out[bind] = (ns(ts), i)
            else:
                flow_in.append((bind, ns(ts), i))
        if ph == "X":
            dur = ev.get("dur")
            if not isinstance(dur, (int, float)) or dur < 0:
                fail("%s: X without dur >= 0" % where)
            slices[track].append((ns(ts), ns(ts) + ns(dur), i))
        elif ph in "BE":
            if track in be_last and ns(ts) < be_last[track]:
                fail("%s: B/E time goes back on its track" % where)
            be_last[track] = ns(ts)
            if ph == "B":
                be_stack[track].append(i)
            elif not be_stack[track]:
                fail("%s: E without B" % where)
            else:
                be_stack[track].pop()
        elif ph in "sf":
            key = (ev.get("cat"), ev.get("id"))
            if ev.get("id") is None:
                fail("%s: flow without id" % where)
            table = starts if ph == "s" else finishes
            if key in table:
                fail("%s: flow id used twice" % where)
            table[key] = (ns(ts), track, i)
        elif ph == "C":
            args = ev.get("args")
            if not isinstance(args, dict) or not args or \
                    not all(isinstance(v, (int, float)) for v in args.values()):
                fail("%s: counter without numeric args" % where)
        elif ph == "i":
            if ev.get("s", "t") not in ("g", "p", "t"):
                fail("%s: instant with bad scope" % where)
    for track, stack in be_stack.items():
        if stack:
            fail("track %s: %d B without E" % (track, len(stack)))
    top_level = {}
    for track, items in slices.items():
        items.sort(key=lambda s: (s[0], -s[1]))
        stack, tops = [], []
        for start, end, i in items:
            while stack and stack[-1] <= start:
                stack.pop()
            if stack and end > stack[-1]:
                fail("track %s: slice of event %d overlaps its neighbour partially" % (track, i))
            if not stack:
                tops.append((start, end))
            stack.append(end)
        top_level[track] = ([s for s, _ in tops], [e for _, e in tops])

    def inside(track, t):
        starts_, ends_ = top_level.get(track, ([], []))
        k = bisect.bisect_right(starts_, t) - 1
        return k >= 0 and starts_[k] <= t <= ends_[k]

    for key, (ts, track, i) in starts.items():
        if key not in finishes:
            fail("flow %s starts at event %d but never finishes" % (key, i))
        fts, ftrack, fi = finishes[key]
        if fts < ts:
            fail("flow %s finishes (event %d) before it starts" % (key, fi))
        if not inside(track, ts) or not inside(ftrack, fts):
            fail("flow %s: an end lies outside every slice of its track" % (key,))
    for key, (_, _, i) in finishes.items():
        if key not in starts:
            fail("flow %s finishes at event %d but never starts" % (key, i))
    for bind, ts, i in flow_in:
        if bind not in flow_out:
            fail("bind_id %s enters event %d but leaves no slice" % (bind, i))
        if flow_out[bind][0] >= ts:
            fail("bind_id %s enters event %d no later than it leaves event %d" %
                 (bind, i, flow_out[bind][1]))
    print("ok: %d events (%s), %d tracks with slices, %d flows" % (
        len(events), " ".join("%s=%d" % kv for kv in sorted(counts.items())), len(slices),
        len(starts) + len(flow_in)))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: check_trace_events.py TRACE.json")
        sys.exit(2)
    check(sys.argv[1])
