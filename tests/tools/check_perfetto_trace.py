#!/usr/bin/env python3
"""Structural check of a Perfetto protobuf trace (the shape ui.perfetto.dev's trace processor imports).

The file is decoded with `protoc --decode=perfetto.protos.Trace` against src/export/perfetto_subset.proto
and checked against the importer's rules as Perfetto documents them (trace_packet.proto,
track_event.proto, track_descriptor.proto, clock_snapshot.proto, the synthetic-trace guide):

- packets: every track_event packet names a sequence (trusted_packet_sequence_id); a packet that
  sets SEQ_NEEDS_INCREMENTAL_STATE comes after one that set SEQ_INCREMENTAL_STATE_CLEARED on its
  sequence, and every packet that uses interned data or the sequence's defaults sets it;
- interning: every iid an event uses (event name, category, debug annotation name, debug
  annotation string value) was defined earlier on its sequence, since the last clear; iids are
  non-zero and not redefined with another string;
- clocks: the trace's clock is named first (primary_trace_clock); a packet's clock is its
  timestamp_clock_id or its sequence's default; sequence clocks (64-127) are only valid on the
  sequence whose ClockSnapshot defined them; an incremental clock's timestamps are deltas from the
  sequence's previous packet on that clock (the first from the snapshot). Times are rebuilt to
  absolute ns of the primary clock;
- tracks: every event's track (track_uuid or the sequence's default) was declared by an earlier
  TrackDescriptor; parents are declared before children; a uuid keeps its kind; one thread track
  per (pid, tid) and one process track per pid (the importer takes a second one for pid/tid reuse);
  counter tracks take only TYPE_COUNTER events with a value, other tracks no counter events;
- nesting: per track, events in the importer's order (time, then file order) — a BEGIN opens a
  slice, an END closes the innermost open one and must find one, no slice stays open; and each
  END closes the slice its writer meant: grtrace writes a slice's END as the next packet of the
  slice's sequence, so the importer's pairing must be that one (no partial overlaps);
- flows: in the importer's order, an id in flow_ids starts a flow at its slice (or continues it
  from the previous one), terminating_flow_ids ends an active flow there (an unknown id is an
  error: the arrow would be lost), legacy_event FLOW_IN ends an active flow without closing it;
  every flow goes forward in time.

Prints one summary line and exits 0, or prints the first problem and exits 1. --dump FILE writes
the decoded timeline as JSON (tracks with their slices, instants and counter values in absolute
ns, names resolved, and the flows between slices) for content checks.
"""
import json
import os
import re
import subprocess
import sys
from collections import defaultdict

SEQ_CLEARED = 1
SEQ_NEEDS = 2
PROTO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src", "export",
                     "perfetto_subset.proto")


class Problem(Exception):
    pass


def fail(msg):
    raise Problem(msg)


ESCAPES = {"n": 10, "t": 9, "r": 13, "\\": 92, "'": 39, '"': 34, "a": 7, "b": 8, "f": 12, "v": 11}


def unescape(s):
    """protoc's text format: C escapes, octal for bytes it does not print."""
    out = bytearray()
    i = 0
    while i < len(s):
        c = s[i]
        if c != "\\":
            out += c.encode()
            i += 1
            continue
        n = s[i + 1]
        if n in "01234567":
            m = re.match(r"[0-7]{1,3}", s[i + 1:])
            out.append(int(m.group(0), 8))
            i += 1 + len(m.group(0))
        elif n == "x":
            m = re.match(r"[0-9a-fA-F]{1,2}", s[i + 2:])
            out.append(int(m.group(0), 16))
            i += 2 + len(m.group(0))
        else:
            out.append(ESCAPES[n])
            i += 2
    return out.decode("utf-8", "replace")


def parse_text(text):
    """protoc's text output into dicts of lists (every field may repeat)."""
    root = {}
    stack = [root]
    cur = root
    for line in text.split("\n"):
        line = line.strip()
        if not line:
            continue
        if line == "}":
            stack.pop()
            cur = stack[-1]
            continue
        if line[-1] == "{":
            child = {}
            cur.setdefault(line[:-2], []).append(child)
            stack.append(child)
            cur = child
            continue
        key, _, value = line.partition(": ")
        first = value[0]
        if first == '"':
            value = unescape(value[1:-1]) if "\\" in value else value[1:-1]
        elif first == "-" or first.isdigit():
            value = int(value)
        elif value in ("true", "false"):
            value = value == "true"
        cur.setdefault(key, []).append(value)
    return root


def one(msg, key, default=None):
    v = msg.get(key)
    return v[0] if v else default


def decode(path):
    with open(path, "rb") as f:
        r = subprocess.run(["protoc", "--decode=perfetto.protos.Trace",
                            "-I", os.path.dirname(PROTO), os.path.basename(PROTO)],
                           stdin=f, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode:
        fail("protoc cannot decode it: " + r.stderr.strip())
    return parse_text(r.stdout).get("packet", [])


class Sequence:
    def __init__(self):
        self.cleared = False
        self.reset()

    def reset(self):
        self.interned = defaultdict(dict)   # table -> iid -> text
        self.defaults = {}
        self.clocks = {}                    # clock id -> [snapshot value, primary value, incremental, last]


TABLES = {"event_names": "name", "event_categories": "name", "debug_annotation_names": "name",
          "debug_annotation_string_values": "str"}


def check(path, dump=None):
    packets = decode(path)
    seqs = defaultdict(Sequence)
    tracks = {}             # uuid -> dict
    thread_of = {}          # (pid, tid) -> uuid
    process_of = {}         # pid -> uuid
    events = []             # (ts, index, uuid, event dict)
    primary = None
    last_on_seq = {}        # seq -> index of its previous packet's event (for the pairing check)
    meant_end = {}          # index of a BEGIN -> index of the END its writer meant
    counts = defaultdict(int)
    for index, p in enumerate(packets):
        where = "packet %d" % index
        seq_id = one(p, "trusted_packet_sequence_id", 0)
        flags = one(p, "sequence_flags", 0)
        seq = seqs[seq_id]
        if "clock_snapshot" in p:
            snap = p["clock_snapshot"][0]
            if "primary_trace_clock" in snap:
                if primary is not None or events:
                    fail("%s: the trace clock is named after timestamps were used" % where)
                primary = {"BUILTIN_CLOCK_MONOTONIC": 3, "BUILTIN_CLOCK_BOOTTIME": 6}.get(
                    snap["primary_trace_clock"][0], snap["primary_trace_clock"][0])
        if primary is None and ("track_event" in p or "timestamp" in p):
            fail("%s: timestamps before the trace clock is named (primary_trace_clock)" % where)
        if flags & SEQ_CLEARED:
            if not seq_id:
                fail("%s: SEQ_INCREMENTAL_STATE_CLEARED without a sequence id" % where)
            seq.cleared = True
            seq.reset()
        if flags & SEQ_NEEDS and not seq.cleared:
            fail("%s: needs incremental state that sequence %d never cleared" % (where, seq_id))
        if "trace_packet_defaults" in p:
            if not seq_id:
                fail("%s: defaults without a sequence" % where)
            d = p["trace_packet_defaults"][0]
            seq.defaults = {"clock": one(d, "timestamp_clock_id"),
                            "track": one(one(d, "track_event_defaults", {}), "track_uuid")}
        for table, data in (p.get("interned_data") or [{}])[0].items():
            if table not in TABLES:
                fail("%s: interned table %s is not one grtrace uses" % (where, table))
            if not flags & SEQ_NEEDS:
                fail("%s: interned data without SEQ_NEEDS_INCREMENTAL_STATE" % where)
            for entry in data:
                iid, text = one(entry, "iid", 0), one(entry, TABLES[table])
                if not iid or text is None:
                    fail("%s: %s entry without iid or text" % (where, table))
                old = seq.interned[table].get(iid)
                if old is not None and old != text:
                    fail("%s: %s iid %d redefined (%r, was %r)" % (where, table, iid, text, old))
                seq.interned[table][iid] = text
        if "clock_snapshot" in p:
            snap = p["clock_snapshot"][0]
            mono = [one(c, "timestamp") for c in snap.get("clocks", []) if one(c, "clock_id") == primary]
            for c in snap.get("clocks", []):
                cid = one(c, "clock_id")
                if 64 <= cid < 128:
                    if not seq_id:
                        fail("%s: sequence clock %d without a sequence" % (where, cid))
                    if not mono:
                        fail("%s: sequence clock %d not paired with the trace clock" % (where, cid))
                    ts = one(c, "timestamp", 0)
                    seq.clocks[cid] = [ts, mono[0], bool(one(c, "is_incremental")), ts]
        if "track_descriptor" in p:
            declare(tracks, thread_of, process_of, p["track_descriptor"][0], where)
        if "track_event" not in p:
            continue
        if not seq_id:
            fail("%s: a track event without a sequence" % where)
        ev = p["track_event"][0]
        uses_state = bool(seq.defaults) or "interned_data" in p or any(
            k in ev for k in ("name_iid", "category_iids")) or any(
            "name_iid" in a or "string_value_iid" in a for a in ev.get("debug_annotations", []))
        if uses_state and not flags & SEQ_NEEDS:
            fail("%s: uses incremental state without SEQ_NEEDS_INCREMENTAL_STATE" % where)
        ts = absolute_time(p, seq, primary, where)
        uuid = one(ev, "track_uuid", seq.defaults.get("track"))
        if uuid not in tracks:
            fail("%s: event on track %s, never declared before" % (where, uuid))
        resolved = resolve(ev, seq, where)
        kind = resolved["type"]
        track = tracks[uuid]
        if track["counter"] != (kind == "TYPE_COUNTER"):
            fail("%s: %s on %s track %d" % (where, kind, "a counter" if track["counter"] else "a slice",
                                            uuid))
        if kind == "TYPE_COUNTER" and "value" not in resolved:
            fail("%s: counter event without a value" % where)
        counts[kind] += 1
        events.append((ts, index, uuid, resolved))
        if seq_id in last_on_seq and kind == "TYPE_SLICE_END":
            meant_end[last_on_seq.pop(seq_id)] = index
        if kind == "TYPE_SLICE_BEGIN":
            last_on_seq[seq_id] = index
    if not events:
        fail("no track events")
    timeline = nest_and_flow(events, tracks, meant_end)
    if dump:
        with open(dump, "w") as f:
            json.dump(timeline, f)
    print("ok: %d packets, %d sequences, %d tracks, %d slices, %d instants, %d counter values, "
          "%d flows" % (len(packets), len([s for s in seqs if s]), len(tracks),
                        counts["TYPE_SLICE_BEGIN"], counts["TYPE_INSTANT"], counts["TYPE_COUNTER"],
                        len(timeline["flows"])))


def declare(tracks, thread_of, process_of, d, where):
    uuid = one(d, "uuid")
    if not uuid:
        fail("%s: track descriptor without uuid" % where)
    parent = one(d, "parent_uuid")
    if parent is not None and parent not in tracks:
        fail("%s: track %d's parent %d is not declared before it" % (where, uuid, parent))
    t = {"uuid": uuid, "parent": parent, "name": one(d, "name"), "counter": "counter" in d,
         "pid": None, "tid": None, "kind": "track"}
    if "thread" in d:
        th = d["thread"][0]
        if "pid" not in th or "tid" not in th:
            fail("%s: thread track %d without pid and tid" % (where, uuid))
        t.update(kind="thread", pid=one(th, "pid"), tid=one(th, "tid"), name=one(th, "thread_name"))
        if thread_of.setdefault((t["pid"], t["tid"]), uuid) != uuid:
            fail("%s: a second thread track for pid %d tid %d" % (where, t["pid"], t["tid"]))
    elif "process" in d:
        pr = d["process"][0]
        if "pid" not in pr:
            fail("%s: process track %d without pid" % (where, uuid))
        t.update(kind="process", pid=one(pr, "pid"), name=one(pr, "process_name"))
        if process_of.setdefault(t["pid"], uuid) != uuid:
            fail("%s: a second process track for pid %d" % (where, t["pid"]))
    old = tracks.get(uuid)
    if old:
        if (old["kind"], old["parent"], old["counter"], old["pid"], old["tid"]) != \
                (t["kind"], t["parent"], t["counter"], t["pid"], t["tid"]):
            fail("%s: track %d declared again as something else" % (where, uuid))
        t["name"] = t["name"] or old["name"]
    tracks[uuid] = t


def absolute_time(p, seq, primary, where):
    if "timestamp" not in p:
        fail("%s: a track event without a timestamp" % where)
    value = one(p, "timestamp")
    clock = one(p, "timestamp_clock_id", seq.defaults.get("clock"))
    if clock is None or clock == primary:
        return value
    if not 64 <= clock < 128 or clock not in seq.clocks:
        fail("%s: clock %s is not defined on its sequence" % (where, clock))
    snap, mono, incremental, last = seq.clocks[clock]
    if incremental:
        value += last
        seq.clocks[clock][3] = value
    return mono + value - snap


def resolve(ev, seq, where):
    def lookup(table, iid):
        text = seq.interned[table].get(iid)
        if text is None:
            fail("%s: %s iid %d not defined on the sequence" % (where, table, iid))
        return text
    out = {"type": one(ev, "type", "TYPE_UNSPECIFIED")}
    if "name_iid" in ev:
        out["name"] = lookup("event_names", one(ev, "name_iid"))
    if "category_iids" in ev:
        out["categories"] = [lookup("event_categories", c) for c in ev["category_iids"]]
    if "counter_value" in ev:
        out["value"] = one(ev, "counter_value")
    args = {}
    for a in ev.get("debug_annotations", []):
        key = lookup("debug_annotation_names", one(a, "name_iid"))
        if "string_value_iid" in a:
            args[key] = lookup("debug_annotation_string_values", one(a, "string_value_iid"))
        else:
            values = [one(a, k) for k in ("uint_value", "int_value", "pointer_value", "bool_value",
                                          "string_value") if k in a]
            if len(values) != 1:
                fail("%s: annotation %s without exactly one value" % (where, key))
            args[key] = values[0]
    if args:
        out["args"] = args
    for key in ("flow_ids", "terminating_flow_ids"):
        if key in ev:
            out[key] = ev[key]
    if "legacy_event" in ev:
        le = ev["legacy_event"][0]
        if one(le, "flow_direction") != "FLOW_IN" or "bind_id" not in le:
            fail("%s: legacy_event other than a FLOW_IN bind_id" % where)
        out["flow_in"] = one(le, "bind_id")
    return out


def nest_and_flow(events, tracks, meant_end):
    """Replays the importer: events sorted by (time, file order), slices by nesting, then flows."""
    events.sort(key=lambda e: (e[0], e[1]))
    open_slices = defaultdict(list)
    slices = {}             # index of its BEGIN -> slice
    by_track = defaultdict(lambda: {"slices": [], "instants": [], "counters": []})
    at = {}                 # event index -> the slice it binds flows to
    for ts, index, uuid, ev in events:
        kind = ev["type"]
        if kind == "TYPE_SLICE_BEGIN":
            s = {"name": ev.get("name"), "start": ts, "end": None, "depth": len(open_slices[uuid])}
            for key in ("categories", "args"):
                if key in ev:
                    s[key] = ev[key]
            open_slices[uuid].append((index, s))
            slices[index] = s
            by_track[uuid]["slices"].append(s)
            at[index] = s
        elif kind == "TYPE_SLICE_END":
            if not open_slices[uuid]:
                fail("track %d: an END at %d closes no slice" % (uuid, ts))
            begin, s = open_slices[uuid].pop()
            if meant_end.get(begin) != index:
                fail("track %d: the END at %d closes %r (begun at %d), not the slice it was written "
                     "for: slices overlap partially" % (uuid, ts, s["name"], s["start"]))
            s["end"] = ts
            at[index] = s
        elif kind == "TYPE_INSTANT":
            s = {"name": ev.get("name"), "ts": ts, "depth": len(open_slices[uuid])}
            if "args" in ev:
                s["args"] = ev["args"]
            by_track[uuid]["instants"].append(s)
            at[index] = s
        elif kind == "TYPE_COUNTER":
            by_track[uuid]["counters"].append([ts, ev["value"]])
    for uuid, stack in open_slices.items():
        if stack:
            fail("track %d: %d slices never end" % (uuid, len(stack)))
    # flows, in the same order; a slice is named by its track and start for the dump
    ref = {}
    for uuid, data in by_track.items():
        for i, s in enumerate(data["slices"]):
            ref[id(s)] = [uuid, "slice", i]
        for i, s in enumerate(data["instants"]):
            ref[id(s)] = [uuid, "instant", i]
    active, flows = {}, []
    for ts, index, uuid, ev in events:
        here = at.get(index)
        for fid in ev.get("flow_ids", []):
            if fid in active:
                flows.append(link(active[fid], here, ref, fid))
            active[fid] = here
        for fid in ev.get("terminating_flow_ids", []):
            if fid not in active:
                fail("track %d: terminating flow %d at %d was never started" % (uuid, fid, ts))
            flows.append(link(active.pop(fid), here, ref, fid))
        if "flow_in" in ev:
            fid = ev["flow_in"]
            if fid not in active:
                fail("track %d: FLOW_IN %d at %d was never started" % (uuid, fid, ts))
            flows.append(link(active[fid], here, ref, fid))
    for f in flows:
        if f["from_ts"] > f["to_ts"]:
            fail("flow %d goes back in time" % f["id"])
    return {"tracks": [dict(tracks[u], **by_track.get(u, {"slices": [], "instants": [],
                                                             "counters": []}))
                       for u in sorted(tracks)],
            "flows": flows}


def link(src, dst, ref, fid):
    return {"id": fid, "from": ref[id(src)], "to": ref[id(dst)],
            "from_ts": src.get("start", src.get("ts")), "to_ts": dst.get("start", dst.get("ts"))}


def main(argv):
    args = argv[1:]
    dump = None
    if len(args) == 3 and args[1] == "--dump":
        dump = args[2]
        args = args[:1]
    if len(args) != 1:
        print("usage: check_perfetto_trace.py TRACE.pftrace [--dump TIMELINE.json]")
        return 2
    try:
        check(args[0], dump)
    except Problem as e:
        print("FAIL: %s" % e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
