#!/usr/bin/env python3
"""Prometheus and HTTP helpers for the serve tests (tests/e2e/serve_*.sh), standard library only.

  prom.py free-port                       a free TCP port on 127.0.0.1
  prom.py wait-ready PROM                 until Prometheus answers /-/ready (30 s)
  prom.py wait PROM EXPR [SECONDS]        until EXPR has a result (exit 1 on timeout)
  prom.py wait-absent PROM EXPR [SECONDS] until EXPR has none
  prom.py value PROM EXPR                 the single result's value ("none" / "many:N")
  prom.py expect PROM FILE                ok/FAIL per line "NAME<TAB>EXPR<TAB>VALUE" of FILE
  prom.py dashboard PROM FILE             every panel's queries of a Grafana dashboard
  prom.py clients URL N                   N concurrent GETs; prints how many got 200
  prom.py slow-client HOST PORT SECONDS   holds a half-sent request open that long
  prom.py raw HOST PORT KIND              sends a bad request (junk, huge-header); prints the
                                          status line, or "closed" when the server hung up
"""
import json
import socket
import sys
import threading
import time
import urllib.parse
import urllib.request


def query(prom, expr):
    url = prom + "/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    with urllib.request.urlopen(url, timeout=10) as r:
        body = json.load(r)
    if body.get("status") != "success":
        raise RuntimeError("query %r failed: %s" % (expr, body))
    return body["data"]["result"]


def wait_for(pred, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            if pred():
                return True
        except Exception:
            pass
        time.sleep(0.25)
    return False


def value(prom, expr):
    res = query(prom, expr)
    if not res:
        return "none"
    if len(res) > 1:
        return "many:%d" % len(res)
    v = res[0]["value"][1]
    f = float(v)
    return str(int(f)) if f == int(f) else v


def expect(prom, path):
    """All checks in one go: the series live only until the agent's idle timeout."""
    failed = 0
    for line in open(path):
        if not line.strip():
            continue
        name, expr, want = line.rstrip("\n").split("\t")
        try:
            got = value(prom, expr)
        except Exception as e:
            got = "error: %s" % e
        if got == want:
            print("ok - %s = %s" % (name, want))
        else:
            print("FAIL - %s: %s is %s, want %s" % (name, expr, got, want))
            failed = 1
    return failed


def panel_exprs(panel):
    """A panel's queries as Grafana would send them for every instance."""
    return [t["expr"].replace("$__rate_interval", "1m").replace('instance=~"$instance"', 'instance=~".*"')
            for t in panel["targets"]]


def panel_series(prom, panel):
    """How many series a panel's queries return together."""
    return sum(len(query(prom, expr)) for expr in panel_exprs(panel))


def dashboard(prom, path):
    """One ok/FAIL line per panel. Panels that say they need the NVIDIA driver may be empty."""
    failed = 0
    with open(path) as f:
        dash = json.load(f)
    for panel in dash["panels"]:
        needs_driver = "NVIDIA driver" in panel.get("description", "")
        try:
            series = panel_series(prom, panel)
        except Exception as e:
            print("FAIL - dashboard panel '%s': %s" % (panel["title"], e))
            failed = 1
            continue
        # rate() needs two samples in its window: a series first scraped a moment ago (or a
        # scrape the agent was too slow for) has none yet; a few scrapes settle it
        if not series and not needs_driver and wait_for(lambda: panel_series(prom, panel) > 0, 10):
            series = panel_series(prom, panel)
        if series:
            print("ok - dashboard panel '%s' returns data (%d series)" % (panel["title"], series))
        elif needs_driver:
            print("ok - dashboard panel '%s' is valid PromQL; no data without the NVIDIA driver"
                  % panel["title"])
        else:
            print("FAIL - dashboard panel '%s' returns no data" % panel["title"])
            failed = 1
    return failed


def clients(url, n):
    codes = []
    lock = threading.Lock()

    def get():
        try:
            with urllib.request.urlopen(url, timeout=20) as r:
                ok = r.status == 200 and b"grtrace_processes_tracked" in r.read()
        except Exception:
            ok = False
        with lock:
            codes.append(ok)

    threads = [threading.Thread(target=get) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    print(sum(codes))


def slow_client(host, port, seconds):
    s = socket.create_connection((host, int(port)), timeout=5)
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")  # never finished
    time.sleep(float(seconds))
    s.close()


def raw(host, port, kind):
    if kind == "junk":
        request = b"NONSENSE\r\n\r\n"
    else:
        request = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 200000 + b"\r\n\r\n"
    s = socket.create_connection((host, int(port)), timeout=10)
    try:
        s.sendall(request)
    except OSError:
        pass  # the server may hang up before reading it all
    try:
        line = s.recv(200).split(b"\r\n")[0].decode(errors="replace")
    except OSError:
        line = ""
    print(line or "closed")


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "free-port":
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        print(s.getsockname()[1])
        s.close()
    elif cmd == "wait-ready":
        ok = wait_for(lambda: urllib.request.urlopen(args[0] + "/-/ready", timeout=2).status == 200, 30)
        sys.exit(0 if ok else 1)
    elif cmd == "wait":
        sys.exit(0 if wait_for(lambda: query(args[0], args[1]), float(args[2]) if len(args) > 2 else 20) else 1)
    elif cmd == "wait-absent":
        sys.exit(0 if wait_for(lambda: not query(args[0], args[1]), float(args[2]) if len(args) > 2 else 20) else 1)
    elif cmd == "value":
        print(value(args[0], args[1]))
    elif cmd == "expect":
        sys.exit(expect(args[0], args[1]))
    elif cmd == "dashboard":
        sys.exit(dashboard(args[0], args[1]))
    elif cmd == "clients":
        clients(args[0], int(args[1]))
    elif cmd == "raw":
        raw(args[0], args[1], args[2])
    elif cmd == "slow-client":
        slow_client(args[0], args[1], args[2])
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main()
