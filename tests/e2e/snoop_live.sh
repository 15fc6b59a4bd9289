#!/bin/bash
# snoop is live: through a pipe and on a terminal (a pseudo-terminal), each event's line arrives
# while the traced program still runs, well within a second (the views promise one tick, 40 ms, on
# an idle machine). Needs root.
set -u
BUILD=${1:-build}
. tests/e2e/lib/cases.bash
G=$BUILD/grtrace

for output in pipe tty; do
python3 - "$G" "$output" <<'PY' || failed=1
import os, pty, select, subprocess, sys, time

grtrace, output = sys.argv[1], sys.argv[2]
# the target makes one getppid() per line it reads, and says when it made it
target = subprocess.Popen(
    [sys.executable, "-c",
     "import os, sys, time\n"
     "for line in sys.stdin:\n"
     "    t = time.monotonic(); os.getppid(); print(t, flush=True)\n"],
    stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
if output == "tty":
    out_fd, terminal = pty.openpty()
    snoop = subprocess.Popen([grtrace, "snoop", "syscall", "-p", str(target.pid)],
                             stdout=terminal, stderr=subprocess.PIPE, text=True, bufsize=1)
    os.close(terminal)
else:
    snoop = subprocess.Popen([grtrace, "snoop", "syscall", "-p", str(target.pid)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1)
    # read the pipe's fd directly: a buffered reader would hide lines from select()
    out_fd = snoop.stdout.fileno()
pending = b""
# started once the notice is out
line = snoop.stderr.readline()
if "snooping" not in line:
    print("FAIL - snoop syscall did not start: %s" % line.strip())
    sys.exit(1)
time.sleep(0.3)
latencies, failed = [], False
for i in range(5):
    target.stdin.write("go\n")
    t_event = float(target.stdout.readline())
    deadline = time.monotonic() + 5
    seen = None
    while time.monotonic() < deadline and seen is None:
        ready, _, _ = select.select([out_fd], [], [], 0.05)
        if not ready:
            continue
        pending += os.read(out_fd, 65536)
        *lines, pending = pending.split(b"\n")
        if any(b"getppid" in l for l in lines):
            seen = time.monotonic()
    if seen is None:
        print("FAIL - snoop syscall: event %d not shown within 5 s (target still running)" % i)
        failed = True
        break
    latencies.append(seen - t_event)
    time.sleep(0.2)
target.stdin.close()
target.wait()
snoop.terminate()
snoop.wait()
if not failed:
    worst = max(latencies)
    name = "snoop syscall %s: every event shown while the target runs " \
           "(worst %.0f ms over %d events)" % ("through a pipe" if output == "pipe" else "on a terminal",
                                               worst * 1e3, len(latencies))
    print(("ok - " if worst < 1.0 else "FAIL - ") + name)
    failed = worst >= 1.0
sys.exit(1 if failed else 0)
PY
done
exit $failed
