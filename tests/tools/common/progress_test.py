#!/usr/bin/python3
"""tools/common/progress.py, and the scripts that use it on a terminal and off one.

  progress_test.py [--swemu-plink PATH --tmp DIR]

Always: the module's line (counts, elapsed, time left at the steps' mean pace, "done in"), its
rewriting in place and its newline at the end, and its silence on a stream that is not a
terminal. With --swemu-plink: tools/plink/plink_figure8.py --quick run with stderr on a pseudo
terminal shows "[3/3] cluster assignments; done in" and the same run with stderr on a pipe
prints nothing on stderr. Exit 0 when all hold, 1 with the reasons otherwise.
"""
import argparse
import io
import os
import pty
import subprocess
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tools", "common"))
from progress import Progress, clock_text  # noqa: E402

PROBLEMS = []


def expect(cond, what):
    if not cond:
        PROBLEMS.append(what)


class Terminal(io.StringIO):
    def isatty(self):
        return True


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def check_module():
    expect(clock_text(7) == "0:07", f"clock_text(7) {clock_text(7)}")
    expect(clock_text(221) == "3:41", f"clock_text(221) {clock_text(221)}")
    expect(clock_text(3723) == "1:02:03", f"clock_text(3723) {clock_text(3723)}")
    clock, out = Clock(), Terminal()
    bar = Progress(4, stream=out, clock=clock)
    expect(bar.on, "a terminal stream is not taken for one")
    bar.step(0)
    clock.now += 30
    bar.step(1, "first run")
    # One of four steps in 30 s: three more at that pace are 90 s.
    expect(out.getvalue().endswith("\r[1/4] first run; 0:30 elapsed, about 1:30 left"),
           f"after one step: {out.getvalue()!r}")
    clock.now += 30
    bar.step(2, "x")
    expect(out.getvalue().endswith("\r[2/4] x; 1:00 elapsed, about 1:00 left" + " " * 8),
           f"a shorter line does not blank the longer one's tail: {out.getvalue()!r}")
    expect("\n" not in out.getvalue(), "a newline before the last step")
    clock.now += 60
    bar.step(4, "last")
    expect(out.getvalue().endswith("\r[4/4] last; done in 2:00" + " " * 14 + "\n"),
           f"the last step: {out.getvalue()!r}")
    quiet = io.StringIO()
    silent = Progress(4, stream=quiet, clock=clock)
    silent.step(0)
    silent.step(4, "last")
    silent.clear()
    expect(not silent.on and quiet.getvalue() == "", f"off a terminal: {quiet.getvalue()!r}")


def run_on_pty(cmd):
    """Runs cmd with stderr on a pseudo terminal; returns (exit status, what it wrote there)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=slave, stdin=subprocess.DEVNULL)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:  # EIO: the other side is closed
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return proc.wait(), b"".join(chunks).decode(errors="replace")


def check_figure8(plink, tmp):
    os.makedirs(tmp, exist_ok=True)
    script = os.path.join(REPO, "tools", "plink", "plink_figure8.py")
    cmd = ["/usr/bin/python3", script, "--quick", "--swemu-plink", plink, "--plot"]
    status, shown = run_on_pty(cmd + [os.path.join(tmp, "tty.png")])
    expect(status == 0, f"plink_figure8.py on a terminal: exit {status}: {shown}")
    expect("[1/3] cluster assignments;" in shown and
           "[3/3] cluster assignments; done in" in shown, f"on a terminal: {shown!r}")
    piped = subprocess.run(cmd + [os.path.join(tmp, "pipe.png")], capture_output=True, text=True)
    expect(piped.returncode == 0, f"plink_figure8.py on a pipe: exit {piped.returncode}")
    expect(piped.stderr == "", f"plink_figure8.py wrote on a pipe's stderr: {piped.stderr!r}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--swemu-plink")
    ap.add_argument("--tmp")
    a = ap.parse_args()
    check_module()
    if a.swemu_plink:
        check_figure8(a.swemu_plink, a.tmp)
    for p in PROBLEMS:
        print(f"progress_test: {p}", file=sys.stderr)
    print("progress_test: " + ("FAILED" if PROBLEMS else "all checks hold"))
    return 1 if PROBLEMS else 0


if __name__ == "__main__":
    sys.exit(main())
