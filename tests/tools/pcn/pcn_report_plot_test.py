#!/usr/bin/python3
"""Where tools/pcn/pcn_report.py --plot writes (ctest: tools_pcn_report_plot).

  pcn_report_plot_test.py --pcn SWEMU_PCN --tmp DIR

One short `swemu-pcn sim --out DIR/runs`, then the report run from another directory (DIR/elsewhere):
--plot q.png (a bare name) lands beside the data, in DIR/runs, and nothing in the current
directory; --plot ./here.png (a path) lands in the current directory; a bare name that is a
directory beside the data ends with one line and exit 2. Exit 0 when all hold, 1 otherwise.
"""
import argparse
import os
import shutil
import subprocess
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
REPORT = os.path.join(REPO, "tools", "pcn", "pcn_report.py")
PROBLEMS = []


def expect(cond, what):
    if not cond:
        PROBLEMS.append(what)


def report(cwd, plot):
    cmd = ["/usr/bin/python3", REPORT, "--without", "../runs/without", "--with", "../runs/with",
           "--plot", plot]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pcn", required=True)
    ap.add_argument("--tmp", required=True)
    a = ap.parse_args()
    shutil.rmtree(a.tmp, ignore_errors=True)
    runs, elsewhere = os.path.join(a.tmp, "runs"), os.path.join(a.tmp, "elsewhere")
    os.makedirs(elsewhere)
    # A short run (4 bursts a side): where the plot goes does not depend on the run's length, and
    # the default run takes minutes in the sanitised build.
    sim = subprocess.run([a.pcn, "sim", "--out", runs, "--duration", "12s", "--ddl-start", "3s",
                          "--idle", "1s", "--iterations", "2"], capture_output=True, text=True)
    if sim.returncode != 0:
        print(f"pcn_report_plot_test: swemu-pcn sim: exit {sim.returncode}: {sim.stderr}")
        return 1

    bare = report(elsewhere, "q.png")
    expect(bare.returncode == 0, f"--plot q.png: exit {bare.returncode}: {bare.stderr}")
    beside = os.path.join(runs, "q.png")
    expect(os.path.isfile(beside) and os.path.getsize(beside) > 10_000,
           "--plot q.png did not write runs/q.png beside the data")
    expect(os.listdir(elsewhere) == [], f"--plot q.png wrote here: {os.listdir(elsewhere)}")
    expect(bare.stdout.rstrip().endswith("wrote ../runs/q.png"),
           f"--plot q.png does not say where it wrote: {bare.stdout[-80:]!r}")

    given = report(elsewhere, "./here.png")
    expect(given.returncode == 0 and os.path.isfile(os.path.join(elsewhere, "here.png")),
           f"--plot ./here.png: exit {given.returncode}, not in the current directory")

    os.makedirs(os.path.join(runs, "dir.png"))
    clash = report(elsewhere, "dir.png")
    lines = clash.stderr.strip().splitlines()
    expect(clash.returncode == 2 and len(lines) == 1 and "../runs/dir.png" in lines[0],
           f"--plot naming a directory beside the data: exit {clash.returncode}: {lines}")

    for p in PROBLEMS:
        print(f"pcn_report_plot_test: {p}", file=sys.stderr)
    print("pcn_report_plot_test: " + ("FAILED" if PROBLEMS else "all checks hold"))
    return 1 if PROBLEMS else 0


if __name__ == "__main__":
    sys.exit(main())
