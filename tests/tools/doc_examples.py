#!/usr/bin/env python3
"""Runs every grtrace command line of README.md and docs/*.md that can run without a GPU.

A command line is a line in a code block (fenced, or indented four spaces) that starts with
`grtrace `. Two kinds:
  - synopsis lines, written with [optional] parts: every option they name must be one that
    `grtrace CMD --help` lists (the docs cannot promise an option the program lacks);
  - examples, everything else: run against the fake driver, each in a fresh directory holding
    trace.grt (a recording of a fake CUDA program); they must exit 0. Placeholders are
    replaced: ./app, ./my_cuda_app, CMD ARGS... by a fake CUDA workload, PID/1234 by a
    process that has the fake libcuda mapped.
A line whose comment says "needs a GPU" is left out (and counted): it cannot run here.
Output a doc shows right after an example, in the same code block, has its shape checked against
what the example printed here: every column-header line (lowercase titles, as every table and
snoop view writes them) must be printed as is, every CSV header line too, and every key of a
JSON object shown must be one the output has (values differ: the doc's come from a GPU).
Prints one "ok - ..." or "FAIL - ..." line per command line; exits 1 on any FAIL.
usage: doc_examples.py BUILD_DIR
"""
import glob, os, re, shlex, shutil, subprocess, sys, tempfile

build = os.path.abspath(sys.argv[1])
grtrace = os.path.join(build, "grtrace")
fake_dir = os.path.join(build, "fixtures", "fake")
workload = os.path.join(build, "fixtures", "workloads", "cuda_known")
GPU_MARK = "needs a GPU"


def command_lines(path):
    """(line number, text, shown output) of every grtrace command line inside a code block; the
    output is the block's lines after it, up to the next command or the block's end."""
    fenced = False
    found = None
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        line = line.rstrip("\n")
        if line.lstrip().startswith("```"):
            fenced = not fenced
            if found:
                yield found
            found = None
            continue
        in_block = fenced or line.startswith("    ")
        text = line.strip()
        if text.startswith("$ "):
            text = text[2:]
        if in_block and text.startswith("grtrace ") and not text.startswith("grtrace: "):
            if found:
                yield found
            found = (n, text, [])
        elif found and fenced and text and not text.startswith("#"):
            found[2].append(text)
        elif found and not fenced:
            yield found
            found = None
    if found:
        yield found


HEADER = re.compile(r"[a-z][\w%/()>:=-]*( +[a-z][\w%/()>:=-]*){2,}")
CSV_HEADER = re.compile(r"[a-z]\w*(,[a-z]\w*){2,}")


def shape_problem(shown, printed):
    """Why the output printed does not have the shape of the output the doc shows, or None."""
    lines = {" ".join(x.split()) for x in printed.splitlines()}
    keys = set(re.findall(r'"(\w+)":', printed))
    for line in shown:
        if (HEADER.fullmatch(line) and not line.endswith(":")) or CSV_HEADER.fullmatch(line):
            if " ".join(line.split()) not in lines:
                return "the doc shows the header %r, the output has none such" % line
        elif line.startswith("{"):
            missing = set(re.findall(r'"(\w+)":', line)) - keys
            if missing:
                return "the doc shows keys the output lacks: %s" % " ".join(sorted(missing))
    return None


def split_comment(text):
    """The command and its trailing '# comment' (a '#' after two spaces or more)."""
    m = re.search(r"\s{2,}#\s?(.*)$", text) or re.search(r"\s#\s(.*)$", text)
    return (text[: m.start()].rstrip(), m.group(1)) if m else (text, "")


help_cache = {}


def help_of(cmd):
    if cmd not in help_cache:
        r = subprocess.run([grtrace, cmd, "--help"], capture_output=True, text=True)
        help_cache[cmd] = r.stdout if r.returncode == 0 else None
    return help_cache[cmd]


def is_output(cmd):
    """Program output quoted in a doc ("grtrace top - 15:12:38 ..."), not a command."""
    return help_of(cmd.split()[1]) is None or re.match(r"grtrace \w+ - \d\d:\d\d", cmd)


def check_synopsis(cmd):
    words = cmd.split()
    text = help_of(words[1])
    if text is None:
        return "no command %r" % words[1]
    missing = [o for o in re.findall(r"(?<![\w-])(--?[a-zA-Z][\w-]*)", cmd)
               if o not in ("--", "-") and not re.search(r"(?<![\w-])" + re.escape(o) + r"(?![\w-])", text)]
    return "options not in grtrace %s --help: %s" % (words[1], " ".join(missing)) if missing else None


def substitute(cmd):
    cmd = re.sub(r"(\./[\w.-]+|python3 [\w.]+\.py)( args)?", workload, cmd)
    cmd = cmd.replace("CMD ARGS", workload)
    pid = re.search(r"\b(1234|PID)\b", cmd)
    cmd = re.sub(r"\b(1234|PID)\b", "$holder", cmd).replace("grtrace ", grtrace + " ", 1)
    if not pid:
        return cmd
    # a process with the fake libcuda mapped, for -p examples; it ends by itself, and bash
    # reaps it (a zombie would look alive to record -p)
    return "LD_PRELOAD=%s/libcuda.so.1 sleep 2 & holder=$!; %s; status=$?; wait; exit $status" % (fake_dir, cmd)


def run_example(cmd, trace, shown):
    work = tempfile.mkdtemp()
    shutil.copy(trace, os.path.join(work, "trace.grt"))
    env = dict(os.environ, LD_LIBRARY_PATH=fake_dir)
    try:
        r = subprocess.run(["bash", "-o", "pipefail", "-c", substitute(cmd)], cwd=work,
                           env=env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        if r.returncode:
            return "exit %d: %s" % (r.returncode, r.stderr.strip()[-300:])
        return shape_problem(shown, r.stdout)
    except subprocess.TimeoutExpired:
        return "did not finish in 60 s"
    finally:
        shutil.rmtree(work)


def main():
    root = os.getcwd()
    scratch = tempfile.mkdtemp()
    trace = os.path.join(scratch, "trace.grt")
    rec = subprocess.run([grtrace, "record", "-s", "cuda,syscall,sched", "-o", trace, "--", workload],
                         env=dict(os.environ, LD_LIBRARY_PATH=fake_dir), capture_output=True, text=True)
    if rec.returncode != 0:
        print("FAIL - recording the docs' trace.grt: " + rec.stderr.strip())
        return 1
    failed = skipped = ran = 0
    docs = ["README.md"] + sorted(glob.glob("docs/*.md"))
    for doc in docs:
        for n, text, shown in command_lines(os.path.join(root, doc)):
            cmd, comment = split_comment(text)
            where = "%s:%d: %s" % (doc, n, cmd)
            if GPU_MARK in comment:
                skipped += 1
                print("ok - %s # skipped: %s" % (where, GPU_MARK))
                continue
            if is_output(cmd):
                continue
            why = check_synopsis(cmd) if "[" in cmd else run_example(cmd, trace, shown)
            ran += 1
            if why:
                failed += 1
                print("FAIL - %s: %s" % (where, why))
            else:
                print("ok - %s" % where)
    print("ok - %d command lines checked, %d need a GPU" % (ran, skipped))
    shutil.rmtree(scratch)
    return 1 if failed else 0


sys.exit(main())
